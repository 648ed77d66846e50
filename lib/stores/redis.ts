/**
 * {@link RedisTokenStore}: one token pair shared by processes on any number of hosts, through one Redis. Bring your own
 * client: ioredis (5, 6; `Redis` or `Cluster`) or node-redis (4, 5, 6; `createClient()` or `createCluster()`) on Node,
 * or @upstash/redis (`new Redis({ url, token })`, over HTTPS) anywhere, Cloudflare Workers and Vercel's edge runtime
 * included: the module imports no Node built-in.
 *
 * @module axios-token-keeper/redis-store
 */
import { settle } from '../support/deadline.js';
import type { AccountRecord, TokenPair, TokenStore, TokenStoreLock, TokenStoreLockRequest } from '../contract/store.js';
import { pausesLogins, parseAccountRecord } from './account-record.js';
import { isPair, parseRecord } from './record.js';
import { Announcer } from './announcer.js';
import { acquire, HeldLease, Wakeup } from './lease.js';
import type { Attempt } from './lease.js';
import { shown } from './options.js';
import { resolveRedisOptions } from './redis-options.js';
import type { RedisTokenStoreOptions, ResolvedRedisOptions } from './redis-options.js';
import { commandsOf, integer, subscriptionOf } from './redis-adapters.js';
import { EXTEND, LOCK, RELEASE, WRITE, WRITE_ACCOUNT } from './redis-scripts.js';
import { ChannelListening, RedisChannels } from './redis-channels.js';
import { checkAccountName, escapeAccountName } from './account-key.js';
import type { RedisCommands } from './redis-adapters.js';
import type { RedisClientLike } from './redis-clients.js';
import { SealedRecords } from './sealing.js';
import type { PairSealer } from './sealing.js';
import { sealerOf } from './platform-sealing.js';
import { webCrypto } from './web-crypto.js';

/** The lock's lease options, which this store's options extend. */
export type { LeaseOptions } from './lease.js';

/** The store's options. */
export type { RedisTokenStoreOptions } from './redis-options.js';

/** The `encryption` option: its keys, or the functions of your KMS, and the switch from clear. */
export type { SealingFunctions, SealingSecret, SealingSwitch, StoreEncryption } from './sealing-options.js';

/** The clients the store takes, as their shapes: neither ioredis nor node-redis is imported. */
export type {
  IoredisClientLike,
  IoredisNodeLike,
  IoredisSubscriberLike,
  NodeRedisClientLike,
  NodeRedisClusterLike,
  NodeRedisListener,
  NodeRedisSentinelLease,
  NodeRedisSentinelLike,
  NodeRedisSubscriberLike,
  RedisClientLike,
  RedisSubscriberLike,
} from './redis-clients.js';
/** The REST client of serverless and edge platforms, @upstash/redis, as its shape: it is not imported either. */
export type { UpstashClientLike, UpstashScriptLike } from './redis-rest.js';

/** How far apart the processes that heard one release try the lock: far more than a read of the pair takes. */
const RELEASE_SPREAD_MS = 50;

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
  private readonly keys: { pair: string; lock: string; fence: string; account: string };
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
  private readonly wakeup = new Wakeup();
  /** This store's subscription to its channel. */
  private readonly listening: ChannelListening;
  /** The lock waits under way, which listen for releases. */
  private lockWaits = 0;
  /** How long the plugin lets one store call take (its `storeTimeoutMs`), as its lock requests say. */
  private callBoundMs = Infinity;
  private closed = false;
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
   * an id and a secret of 32 bytes, ids not repeated) or of `seal` and `unseal`, naming what to fix.
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
    // `#` after the braces, where the default account of every prefix has `:`, so that no named account's key is
    // ever a default account's, whatever the prefixes.
    const key = (name: string) => `{${this.tag}}${this.named ? '#' : ':'}${name}`;
    this.keys = { pair: key('pair'), lock: key('lock'), fence: key('fence'), account: key('account') };
    this.channel = key('changed');
    this.listening = new ChannelListening(this.channels, this.channel, this.onMessage);
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
    const { prefix } = this.options;
    if (prefix.includes('#')) {
      throw new TypeError(
        `RedisTokenStore: \`prefix\` ${shown(prefix)} holds \`#\`, which separates an account's name in its keys, so ` +
          'that two accounts could share keys: give the store a prefix without `#` to keep named accounts in it.',
      );
    }
    const options: AccountStoreOptions = {
      ...this.options,
      [PARENT]: {
        client: this.client,
        channels: this.channels,
        tag: `${this.tag}#${escapeAccountName(name)}`,
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
  async setAccount(record: AccountRecord, fence?: number): Promise<boolean> {
    const ttlMs = Math.ceil(record.expiresAt - Date.now());
    const keys = [this.keys.pair, this.keys.fence, this.keys.account];
    // Said on the channel only when it pauses logins: the waiters for the lock that would log in stop then.
    const channel = pausesLogins(record) ? this.channel : '';
    const args = [JSON.stringify(record), fence ?? '', Math.max(0, ttlMs), channel];
    return integer(await this.client.write(WRITE_ACCOUNT, keys, args, this.replicaWaitMs())) === 1;
  }

  /**
   * Waits for the lock, at most `lockTimeoutMs`, and holds it, extending its lease, until `release()`. Each try
   * that is refused also reads the pair, and announces it to the subscribers when it changed: a waiter whose
   * `request.signal` then aborts stops waiting without the lock.
   */
  async lock(request?: TokenStoreLockRequest): Promise<TokenStoreLock> {
    this.callBoundMs = request?.tryTimeoutMs ?? this.callBoundMs;
    // WebCrypto's: global in Node 20 and later, Bun, Deno and the edge runtimes; node:crypto's on Node 18 (web-crypto.ts).
    const owner = (await webCrypto()).randomUUID();
    const release = () => this.client.eval(RELEASE, [this.keys.lock], [owner, this.channel]);
    this.lockWaits += 1;
    let taken: { granted: number; triedAt: number };
    try {
      // Listening before the first try, so that the release is not missed; but never waiting on pub/sub for long.
      await settle(this.listen(), { ms: Math.min(this.options.pollMs, this.options.lockTimeoutMs) });
      taken = await acquire(() => this.tryLock(owner), {
        ...this.options,
        request,
        wakeup: this.wakeup,
        what: `The Redis lock ${this.keys.lock}`,
        abandon: release,
        hearsReleases: () => this.listening.hears,
      });
    } finally {
      this.lockWaits -= 1;
      this.unlistenWhenUnheard();
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
    this.closed = true;
    await this.listening.unlisten();
    if (!this.named) await this.channels?.close();
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

  private async write(record: string, pair: TokenPair | null, fence: number | undefined): Promise<boolean> {
    const args = [record, fence ?? '', this.options.keyTtlMs, this.channel];
    const keys = [this.keys.pair, this.keys.fence];
    const outcome = integer(await this.client.write(WRITE, keys, args, this.replicaWaitMs()));
    if (outcome === -1)
      throw new Error(
        `${this.where()} holds something that is not a token record of this package; give the store another prefix or delete the key.`,
      );
    if (outcome !== 1) return false;
    this.announcer.announce(record, pair);
    return true;
  }

  /**
   * How long a write waits for a replica: `replicaWaitMs`, and half the plugin's bound on a store call at most, so that
   * the write and its wait end within the one call the plugin allows (past it, the plugin counts the write as failed).
   */
  private replicaWaitMs(): number {
    return Math.min(this.options.replicaWaitMs, this.callBoundMs / 2);
  }

  /** Listens for a listener just added, until `remove`, which the answer calls. */
  private heard(remove: () => void): () => void {
    void this.listen();
    return () => {
      remove();
      this.unlistenWhenUnheard();
    };
  }

  /** Listens to the channel, unless the store is closed. */
  private listen(): Promise<unknown> {
    return this.closed ? Promise.resolve() : this.listening.listen();
  }

  /**
   * A named account's store stops listening once nothing listens to it nor waits for its lock: the plugin has dropped
   * the account, and will never close it. The store the user made listens until `close()`.
   */
  private unlistenWhenUnheard(): void {
    if (this.named && this.announcer.size === 0 && this.lockWaits === 0) void this.listening.unlisten();
  }

  /**
   * A release wakes this process's waiters, each at a moment of its own within 50 ms (or `pollMs` when shorter), so
   * that the processes that heard it do not all try at once; a new pair is read and announced, which ends the waits
   * it makes needless.
   */
  private readonly onMessage = (message: string): void => {
    if (message === 'released') this.wakeup.wake(Math.min(this.options.pollMs, RELEASE_SPREAD_MS));
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

/** Where forAccount hands the new store what it shares with its parent: a symbol, so that no option of yours is it. */
const PARENT = Symbol('the store an account is of');

/** The options of a named account's store: its parent's, and what it shares with it. */
interface AccountStoreOptions extends RedisTokenStoreOptions {
  [PARENT]?: {
    client: RedisCommands;
    channels: RedisChannels | undefined;
    tag: string;
    sealer: PairSealer | undefined;
  };
}
