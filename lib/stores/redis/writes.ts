// RedisTokenStore's writes: the pair's record and the account's, each by a script that refuses a writer whose fence is
// older than the last lock granted, then, once written, a wait for a replica of the master that took it, within what
// the plugin allows one store call.
import type { AccountRecord } from '../../contract/store.js';
import { pausesLogins } from '../common/account-record.js';
import { integer } from './commands.js';
import type { RedisCommands } from './commands.js';
import type { ResolvedRedisOptions } from './options.js';
import { WRITE, WRITE_ACCOUNT } from './scripts.js';

/** The keys of one account that its writes touch. */
export interface WriteKeys {
  pair: string;
  fence: string;
  account: string;
}

/** The writes of one account's records. */
export class RedisWrites {
  /** How long the plugin lets one store call take (its `storeTimeoutMs`), as its lock requests say. */
  private callBoundMs = Infinity;

  /**
   * @param channel The account's channel, on which a write is published.
   * @param where The pair's key, as a message names it.
   */
  constructor(
    private readonly client: RedisCommands,
    private readonly keys: WriteKeys,
    private readonly channel: string,
    private readonly options: ResolvedRedisOptions,
    private readonly where: string,
  ) {}

  /** The plugin's bound on one store call, as a lock request gives it (`tryTimeoutMs`); none keeps the last one. */
  bound(callBoundMs: number | undefined): void {
    this.callBoundMs = callBoundMs ?? this.callBoundMs;
  }

  /**
   * Writes the pair's record (`''` deletes it); false, without writing, when `fence` is older than the last lock
   * granted. Throws, leaving it as it is, for a value there that is not a record of this package.
   */
  async pair(record: string, fence: number | undefined): Promise<boolean> {
    const args = [record, fence ?? '', this.options.keyTtlMs, this.channel];
    const keys = [this.keys.pair, this.keys.fence];
    const outcome = integer(await this.client.write(WRITE, keys, args, this.replicaWaitMs()));
    if (outcome === -1)
      throw new Error(
        `${this.where} holds something that is not a token record of this package; give the store another prefix or delete the key.`,
      );
    return outcome === 1;
  }

  /**
   * Writes the account's record, to expire with the last pause, back-off or spent call it describes; false, without
   * writing, when `fence` is older than the last lock granted.
   */
  async account(record: AccountRecord, fence: number | undefined): Promise<boolean> {
    const ttlMs = Math.ceil(record.expiresAt - Date.now());
    const keys = [this.keys.pair, this.keys.fence, this.keys.account];
    // Said on the channel only when it pauses logins: the waiters for the lock that would log in stop then.
    const channel = pausesLogins(record) ? this.channel : '';
    const args = [JSON.stringify(record), fence ?? '', Math.max(0, ttlMs), channel];
    return integer(await this.client.write(WRITE_ACCOUNT, keys, args, this.replicaWaitMs())) === 1;
  }

  /**
   * How long a write waits for a replica: `replicaWaitMs`, and half the plugin's bound on a store call at most, so that
   * the write and its wait end within the one call the plugin allows (past it, the plugin counts the write as failed).
   */
  private replicaWaitMs(): number {
    return Math.min(this.options.replicaWaitMs, this.callBoundMs / 2);
  }
}
