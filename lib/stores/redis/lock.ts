// RedisTokenStore's lock: `SET NX PX` with a fence one past both the last grant and the stored record's (the LOCK
// script), the wait for it, which listens for releases on the account's channel, the lease kept alive (EXTEND), and
// the compare-and-delete release (RELEASE), which publishes that the lock is free.
import { settle } from '../../support/deadline.js';
import type { TokenStoreLock, TokenStoreLockRequest } from '../../contract/store.js';
import { acquire, HeldLease, Wakeup } from '../common/lease.js';
import type { Attempt } from '../common/lease.js';
import { integer } from './commands.js';
import type { RedisCommands } from './commands.js';
import type { ChannelListening } from './channels.js';
import type { ResolvedRedisOptions } from './options.js';
import { EXTEND, LOCK, RELEASE } from './scripts.js';
import { webCrypto } from '../../support/web-crypto.js';

/** How far apart the processes that heard one release try the lock: far more than a read of the pair takes. */
const RELEASE_SPREAD_MS = 50;

/** The keys of one account that its lock reads and writes. */
export interface LockKeys {
  pair: string;
  fence: string;
  lock: string;
}

/** The lock of one account's keys, and the waits for it in this process. */
export class RedisLock {
  private readonly wakeup = new Wakeup();
  /** The waits for the lock under way, which listen for releases. */
  private waits = 0;

  /**
   * @param channel The account's channel, on which a release is published.
   * @param listening The store's subscription to that channel: a wait listens through it.
   * @param noticed Takes the pair's record as a refused try read it (never '' for none), to announce it when it
   * changed: a waiter whose `request.signal` then aborts stops waiting without the lock.
   */
  constructor(
    private readonly client: RedisCommands,
    private readonly keys: LockKeys,
    private readonly channel: string,
    private readonly options: ResolvedRedisOptions,
    private readonly listening: ChannelListening,
    private readonly noticed: (record: string) => void,
  ) {}

  /** Whether a wait for the lock is under way: the store listens to its channel meanwhile. */
  get waiting(): boolean {
    return this.waits > 0;
  }

  /**
   * Waits for the lock, at most `lockTimeoutMs`, and holds it, extending its lease, until `release()`. Each try
   * that is refused also reads the pair (see `noticed`).
   */
  async take(request: TokenStoreLockRequest | undefined): Promise<TokenStoreLock> {
    // WebCrypto's: global in Node 20 and later, Bun, Deno and the edge runtimes; node:crypto's on Node 18
    // (web-crypto.ts).
    const owner = (await webCrypto()).randomUUID();
    const release = () => this.client.eval(RELEASE, [this.keys.lock], [owner, this.channel]);
    this.waits += 1;
    let taken: { granted: number; triedAt: number };
    try {
      // Listening before the first try, so that the release is not missed; but never waiting on pub/sub for long.
      await settle(this.listening.listen(), { ms: Math.min(this.options.pollMs, this.options.lockTimeoutMs) });
      taken = await acquire(() => this.tryLock(owner), {
        ...this.options,
        request,
        wakeup: this.wakeup,
        what: `The Redis lock ${this.keys.lock}`,
        abandon: release,
        hearsReleases: () => this.listening.hears,
      });
    } finally {
      this.waits -= 1;
    }
    const extend = async () =>
      integer(await this.client.eval(EXTEND, [this.keys.lock], [owner, this.options.lockTtlMs])) === 1;
    const lease = new HeldLease(extend, this.options.lockTtlMs, taken.triedAt);
    return {
      fence: taken.granted,
      leaseLeftMs: () => lease.leftMs(),
      release: async () => {
        lease.stop();
        await release();
      },
    };
  }

  /**
   * A release was heard: this process's waiters wake, each at a moment of its own within 50 ms (or `pollMs` when
   * shorter), so that the processes that heard it do not all try at once.
   */
  released(): void {
    this.wakeup.wake(Math.min(this.options.pollMs, RELEASE_SPREAD_MS));
  }

  private async tryLock(owner: string): Promise<Attempt<number>> {
    const keys = [this.keys.pair, this.keys.fence, this.keys.lock];
    const answer = await this.client.eval(LOCK, keys, [owner, this.options.lockTtlMs, this.options.keyTtlMs]);
    const [granted, value, record] = Array.isArray(answer) ? answer : [];
    if (integer(granted) === 1) return { granted: integer(value) };
    // Only a pair: a key found missing is an emptied Redis (a restart), not a logout, which publishes its own.
    if (typeof record === 'string' && record !== '') this.noticed(record);
    // PTTL is negative when the key went meanwhile: try again at once.
    return { retryInMs: Math.max(0, integer(value)) };
  }
}
