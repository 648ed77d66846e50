// RedisTokenStore itself; index.ts is the entry `axios-token-keeper/redis-store`, with the public types it shows.
import type {
  AccountRecord,
  TokenPair,
  TokenStore,
  TokenStoreLock,
  TokenStoreLockRequest,
} from '../../contract/store.js';
import { parseAccountRecord } from '../common/account-record.js';
import { isPair, parseRecord } from '../common/record.js';
import { Announcer } from '../common/announcer.js';
import { resolveRedisOptions } from './options.js';
import type { RedisTokenStoreOptions, ResolvedRedisOptions } from './options.js';
import { commandsOf, subscriptionOf } from './adapters.js';
import { ChannelListening, RedisChannels } from './channels.js';
import { RedisLock } from './lock.js';
import { RedisWrites } from './writes.js';
import { checkAccountName, checkAccountsRoot } from '../common/account-key.js';
import { accountKeys, accountTag, PARENT } from './account.js';
import type { AccountKeys, AccountStoreOptions } from './account.js';
import type { RedisCommands } from './commands.js';
import type { RedisClientLike } from './client-shapes.js';
import { SealedRecords } from '../sealing/records.js';
import { sealerOf } from '../sealing/platform.js';

/**
 * Keeps the pair in Redis, for processes on any number of hosts (containers, cluster workers, serverless). One
 * process renews at a time under a lock (`SET NX PX`, a fence one past both the last grant and the stored record's,
 * compare-and-delete release), and the others take its pair without calling the service. Takes your client as it
 * is: ioredis 5 or 6 (`Redis`, `Cluster`) or node-redis 4, 5 or 6 (`createClient()`, `createCluster()`), RESP2 or
 * RESP3; both stay optional peers. Or @upstash/redis (`new Redis({ url, token })`), the REST client of serverless and
 * edge platforms: each command an HTTPS request, no pub/sub, so a holder reads the pair where it would renew and polls
 * the lock while another renews (docs/stores.md counts the commands). A client it cannot use is refused at
 * construction (see the constructor). One store keeps any number of accounts ({@link RedisTokenStore.forAccount}), on
 * its two connections.
 *
 * @example
 * import Redis from 'ioredis';
 * import { RedisTokenStore } from 'axios-token-keeper/redis-store';
 * const redis = new Redis(process.env.REDIS_URL);
 * const store = new RedisTokenStore(redis, { prefix: 'tokens:orders-service', subscriber: redis.duplicate() });
 * attachTokenAuth(api, { credentials, store });
 *
 * @example
 * import { createClient } from 'redis';
 * import { RedisTokenStore } from 'axios-token-keeper/redis-store';
 * const client = createClient({ url: process.env.REDIS_URL });
 * await client.connect();
 * const subscriber = client.duplicate();
 * await subscriber.connect();
 * const store = new RedisTokenStore(client, { prefix: 'tokens:orders-service', subscriber });
 * attachTokenAuth(api, { credentials, store });
 *
 * @example
 * import { Redis } from '@upstash/redis';
 * import { RedisTokenStore } from 'axios-token-keeper/redis-store';
 * const store = new RedisTokenStore(Redis.fromEnv(), { prefix: 'tokens:orders-service' });
 * attachTokenAuth(api, { credentials, store });
 */
export class RedisTokenStore implements TokenStore {
  private readonly keys: AccountKeys;
  private readonly channel: string;
  private readonly options: ResolvedRedisOptions;
  /** The client as given: the accounts' stores are made with it, and share its adapter. */
  private readonly given: RedisClientLike;
  private readonly client: RedisCommands;
  /** The channels listened to on the subscriber connection, shared with the accounts' stores; none without one. */
  private readonly channels: RedisChannels | undefined;
  /** What the keys' braces hold: the prefix, then `#` and an escaped name for a named account. */
  private readonly tag: string;
  /** A named account's store (forAccount), which nobody closes: it stops listening with its last listener. */
  private readonly named: boolean;
  private readonly announcer = new Announcer();
  /** This store's subscription to its channel. */
  private readonly listening: ChannelListening;
  /** The lock of the account's keys: its tries, its waits, its lease. */
  private readonly redisLock: RedisLock;
  /** The writes of the account's records, under their fences. */
  private readonly writes: RedisWrites;
  /** The pair's records, sealed with `encryption` (or in clear): private, so that nothing prints the keys. */
  readonly #records: SealedRecords<TokenPair>;

  /**
   * @param client An ioredis `Redis` or `Cluster` (5 or 6), a node-redis client or cluster (4, 5 or 6) on which
   * `connect()` was called, or an @upstash/redis client. The store never closes it.
   * @param options `prefix` (required, one per account), an optional `subscriber` connection, and the timings.
   * @throws TypeError, saying what to pass instead, when `client` is no Redis client, a node-redis client that is not
   * open or in `legacyMode`, a closed ioredis connection, a connection in subscriber mode, or an @upstash/redis
   * pipeline or one without scripts; when `subscriber` is given with an @upstash/redis client, or is no
   * Redis connection, one that is not open or closed, or `client` itself (but for a node-redis cluster); when
   * `prefix` is missing, or an option is out of range; when `encryption` is not an object of `keys` (at least one, each
   * an id and a secret of 32 bytes, ids not repeated) or of `seal` and `unseal`, naming what to fix, or is what
   * `sealing()` made of a CryptoKey, which only the browser store takes.
   */
  constructor(client: RedisClientLike, options: RedisTokenStoreOptions) {
    // No options at all is a missing prefix, which the checks name.
    const parent = (options as AccountStoreOptions | undefined)?.[PARENT];
    this.given = client;
    // A named account's store shares its parent's client, checked when the parent was made.
    this.client = parent?.client ?? commandsOf(client);
    const { options: resolved, subscriber, encryption } = resolveRedisOptions(options ?? {});
    this.options = resolved;
    this.channels = parent ? parent.channels : subscriber && new RedisChannels(subscriptionOf(subscriber, client));
    this.named = parent !== undefined;
    this.tag = parent?.tag ?? resolved.prefix;
    const { keys, channel } = accountKeys(this.tag, this.named);
    this.keys = keys;
    this.channel = channel;
    this.listening = new ChannelListening(this.channels, this.channel, this.onMessage);
    const noticed = (record: string): void => this.noticed(record);
    this.redisLock = new RedisLock(this.client, this.keys, this.channel, resolved, this.listening, noticed);
    this.writes = new RedisWrites(this.client, this.keys, this.channel, resolved, this.where());
    this.#records = new SealedRecords<TokenPair>(
      parent ? parent.sealer : sealerOf('RedisTokenStore', encryption),
      this.keys.pair,
      this.where(),
      isPair,
    );
  }

  /**
   * The store of account `name`, with the same options, on the same two connections (one client and one subscriber
   * for every account): its keys are `{prefix#name}#pair`, `#lock`, `#fence` and `#account`, its channel
   * `{prefix#name}#changed`, with the name escaped (see `escapeAccountName`: letters, digits, `_` and `-` as they are,
   * anything else as `%XX`, so that it holds no `#`, `{`, `}` or `:`). The braces hash each account's keys to the slot
   * of its own tag, so a Cluster spreads the accounts over its masters; the `#` after them keeps a named account's
   * keys apart from any default account's. It listens on the subscriber while it has listeners, and is forgotten when
   * its last listener goes: this store keeps none of its accounts' stores.
   *
   * @throws TypeError when the prefix holds `#`, which would let an account's keys be those of another prefix's
   * account (`a#b` with account `c`, and `a` with the account `b` of its account `c`).
   *
   * @example
   * const store = new RedisTokenStore(redis, { prefix: 'tokens:orders', subscriber: redis.duplicate() });
   * store.forAccount('tenant-42'); // {tokens:orders#tenant-42}#pair, …
   */
  forAccount(name: string): RedisTokenStore {
    checkAccountName('RedisTokenStore', name);
    checkAccountsRoot('RedisTokenStore', 'prefix', this.options.prefix, 'keys');
    const options: AccountStoreOptions = {
      ...this.options,
      [PARENT]: {
        client: this.client,
        channels: this.channels,
        tag: accountTag(this.tag, name),
        sealer: this.#records.sealer,
      },
    };
    return new RedisTokenStore(this.given, options);
  }

  /**
   * The stored pair, or null; rejects, naming the key, when the value there is not a record of this package. With
   * `encryption`, rejects with a `TokenAuthError`: `STORE_KEY_MISSING` for a pair sealed with a key it lacks,
   * `STORE_FAILED` for one that fails authentication (or is in clear without `acceptClear`), which the plugin reads as
   * no pair.
   */
  /** With `encryption` (not `writeClear`), a pair's DPoP key goes into the sealed record; without it, none is kept. */
  get dpopKeys(): 'sealed' | undefined {
    return this.#records.keepsDpopKeys ? 'sealed' : undefined;
  }

  async get(): Promise<TokenPair | null> {
    const text = await this.client.get(this.keys.pair);
    return text === null ? null : this.#records.open(parseRecord(text, this.where()));
  }

  /** Writes the pair (sealed, with `encryption`); false, without writing, when `fence` is older than the last lock granted. */
  async set(pair: TokenPair, fence?: number): Promise<boolean> {
    return this.write(await this.#records.toJson(fence ?? 0, pair), pair, fence);
  }

  /** Deletes the pair's key; false, without deleting, as for `set`. */
  async clear(fence?: number): Promise<boolean> {
    return this.write('', null, fence);
  }

  /** The account's record (`{prefix}:account`), which every process sharing the pair consults; null when none. */
  async getAccount(): Promise<AccountRecord | null> {
    return parseAccountRecord(await this.client.get(this.keys.account)) ?? null;
  }

  /**
   * Writes the account's record, to expire with the last pause, back-off or spent call it describes; false, without
   * writing, when `fence` is older than the last lock granted.
   */
  setAccount(record: AccountRecord, fence?: number): Promise<boolean> {
    return this.writes.account(record, fence);
  }

  /**
   * Waits for the lock, at most `lockTimeoutMs`, and holds it, extending its lease, until `release()`. Each try
   * that is refused also reads the pair, and announces it to the subscribers when it changed: a waiter whose
   * `request.signal` then aborts stops waiting without the lock.
   */
  async lock(request?: TokenStoreLockRequest): Promise<TokenStoreLock> {
    this.writes.bound(request?.tryTimeoutMs);
    try {
      return await this.redisLock.take(request);
    } finally {
      this.unlistenWhenUnheard();
    }
  }

  subscribe(listener: (pair: TokenPair | null) => void): () => void {
    return this.heard(this.announcer.add(listener));
  }

  /** Calls `listener` when another process writes the account's record with a login pause in it. */
  subscribeAccount(listener: () => void): () => void {
    return this.heard(this.announcer.addAccount(listener));
  }

  /**
   * Stops listening on the subscriber connection, for good (the connection stays open: it is yours); the store you
   * made stops its accounts' stores listening too.
   */
  async close(): Promise<void> {
    await this.listening.close();
    if (!this.named) await this.channels?.close();
  }

  private async write(record: string, pair: TokenPair | null, fence: number | undefined): Promise<boolean> {
    const written = await this.writes.pair(record, fence);
    if (written) this.announcer.announce(record, pair);
    return written;
  }

  /** Listens for a listener just added, until `remove`, which the answer calls. */
  private heard(remove: () => void): () => void {
    void this.listening.listen();
    return () => {
      remove();
      this.unlistenWhenUnheard();
    };
  }

  /**
   * A named account's store stops listening once nothing listens to it nor waits for its lock: the plugin has dropped
   * the account, and will never close it. The store the user made listens until `close()`.
   */
  private unlistenWhenUnheard(): void {
    if (this.named && this.announcer.size === 0 && !this.redisLock.waiting) void this.listening.unlisten();
  }

  /**
   * A release wakes this process's lock waiters (see RedisLock.released); a new pair is read and announced, which ends
   * the waits it makes needless; a login pause written is announced.
   */
  private readonly onMessage = (message: string): void => {
    if (message === 'released') this.redisLock.released();
    else if (message === 'changed') void this.pickUp();
    else if (message === 'account') this.announcer.announceAccount();
  };

  private async pickUp(): Promise<void> {
    try {
      this.noticed((await this.client.get(this.keys.pair)) ?? '');
    } catch {
      // A failed read is the next one's business.
    }
  }

  /** Announces the record read (or '' for none), when it changed: in the order read, each opened first. */
  private noticed(text: string): void {
    this.announcer.announceRead(text, () => (text === '' ? null : this.#records.open(parseRecord(text, this.where()))));
  }

  private where(): string {
    return `The Redis key ${this.keys.pair}`;
  }
}
