/**
 * {@link RedisTokenStore}: one token pair shared by processes on any number of hosts, through one Redis. Node only;
 * bring your own client: ioredis (5, 6; `Redis` or `Cluster`) or node-redis (4, 5, 6; `createClient()` or
 * `createCluster()`), as it is.
 *
 * @module axios-token-keeper/redis-store
 */
import { randomUUID } from 'node:crypto';
import { settle } from '../deadline.js';
import type { AccountRecord, TokenPair, TokenStore, TokenStoreLock, TokenStoreLockRequest } from '../store-contract.js';
import { parseAccountRecord } from '../account-record.js';
import { parseRecord, recordToJson } from './record.js';
import { Announcer } from './announcer.js';
import { acquire, keepAlive, LEASE_DEFAULTS, Wakeup } from './lease.js';
import type { Attempt, LeaseOptions } from './lease.js';
import { checkStoreOptions, shown } from './options.js';
import type { OptionNames } from './options.js';
import { commandsOf, subscriptionOf } from './redis-clients.js';
import type { RedisCommands, RedisReply, RedisSubscription } from './redis-clients.js';
import type { RedisClientLike, RedisSubscriberLike } from './redis-clients.js';

/** The lock's lease options, which this store's options extend. */
export type { LeaseOptions } from './lease.js';

/** The clients the store takes, as their shapes: neither ioredis nor node-redis is imported. */
export type {
  IoredisClientLike,
  IoredisSubscriberLike,
  NodeRedisClientLike,
  NodeRedisClusterLike,
  NodeRedisListener,
  NodeRedisSubscriberLike,
  RedisClientLike,
  RedisSubscriberLike,
} from './redis-clients.js';

/** Options of {@link RedisTokenStore}. Only `prefix` is required. */
export interface RedisTokenStoreOptions extends LeaseOptions {
  /**
   * Names this account's keys: `{prefix}:pair`, `{prefix}:lock`, `{prefix}:fence` and `{prefix}:account` (the
   * account's record: its login pause, back-off and budget; the braces keep them in one Redis Cluster slot). One
   * prefix per account: two accounts under one prefix would swap tokens.
   */
  prefix: string;
  /**
   * A second connection, in subscriber mode, that the store listens on: every process then switches to a new pair
   * as soon as it is written, and waiters for the lock wake when it is released instead of polling. With ioredis
   * `redis.duplicate()`; with node-redis `client.duplicate()`, connected, or the cluster itself with
   * `createCluster()` (it subscribes through a connection of its own). The store never closes it; `close()` stops
   * listening.
   * @default none: waiters poll every `pollMs`, and processes learn of a new pair from their next 401
   */
  subscriber?: RedisSubscriberLike;
  /**
   * The pair's key (and the fence's) expires this long after its last write, so the pair of an account nobody uses
   * any more goes. Longer than `lockTtlMs`.
   * @default 86_400_000 (one day)
   */
  keyTtlMs?: number;
}

const REDIS_DEFAULTS = { ...LEASE_DEFAULTS, keyTtlMs: 86_400_000 } satisfies Required<
  Omit<RedisTokenStoreOptions, 'prefix' | 'subscriber'>
>;

/** How far apart the processes that heard one release try the lock: far more than a read of the pair takes. */
const RELEASE_SPREAD_MS = 50;

const REDIS_OPTIONS: OptionNames<RedisTokenStoreOptions> = {
  lockTtlMs: true,
  lockTimeoutMs: true,
  pollMs: true,
  keyTtlMs: true,
  prefix: true,
  subscriber: true,
};

/**
 * The fence of the last grant, or of the stored record if greater: not an `INCR` of the fence key alone, which would
 * count again from 1 once that key expired or was deleted. Lua shared by LOCK and WRITE, for KEYS[2] the fence and
 * `current` the pair's value as read (or false).
 */
const LATEST_FENCE = `
local function latest_fence(current)
  local latest = tonumber(redis.call('GET', KEYS[2]) or '0')
  if current then
    local ok, record = pcall(cjson.decode, current)
    if ok and type(record) == 'table' and type(record.fence) == 'number' and record.fence > latest then latest = record.fence end
  end
  return latest
end`;

/**
 * Takes the lock (KEYS[3]) with a fence greater than any granted or written before; or tells how long the current
 * lease has left, and what the pair is now (so that a waiter learns of a new pair without another command).
 */
const LOCK = `${LATEST_FENCE}
if redis.call('SET', KEYS[3], ARGV[1], 'NX', 'PX', ARGV[2]) then
  local fence = latest_fence(redis.call('GET', KEYS[1])) + 1
  redis.call('SET', KEYS[2], fence, 'PX', ARGV[3])
  return {1, fence}
end
return {0, redis.call('PTTL', KEYS[3]), redis.call('GET', KEYS[1])}`;

/** Extends the lease, if the lock is still this holder's. */
const EXTEND = `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 0`;

/** Compare and delete: a lease that lapsed may be another holder's lock by now. */
const RELEASE = `
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('DEL', KEYS[1])
  redis.call('PUBLISH', ARGV[2], 'released')
  return 1
end
return 0`;

/**
 * Writes (or, with an empty record, deletes) the pair unless a later lock was granted than the writer's fence.
 * A value there that is not a record of ours is left alone (-1): a wrong prefix must lose nothing.
 */
const WRITE = `${LATEST_FENCE}
local current = redis.call('GET', KEYS[1])
if current then
  local ok, record = pcall(cjson.decode, current)
  if not ok or type(record) ~= 'table' or record.version ~= 1 then return -1 end
end
if ARGV[2] ~= '' and tonumber(ARGV[2]) < latest_fence(current) then return 0 end
if ARGV[1] == '' then redis.call('DEL', KEYS[1]) else redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[3]) end
if redis.call('EXISTS', KEYS[2]) == 1 then redis.call('PEXPIRE', KEYS[2], ARGV[3]) end
redis.call('PUBLISH', ARGV[4], 'changed')
return 1`;

/**
 * Writes the account's record (KEYS[3]) for as long as it says something (ARGV[3] ms; none: deleted), unless a later
 * lock was granted than the writer's fence (ARGV[2]), as WRITE does for the pair.
 */
const WRITE_ACCOUNT = `${LATEST_FENCE}
if ARGV[2] ~= '' and tonumber(ARGV[2]) < latest_fence(redis.call('GET', KEYS[1])) then return 0 end
if tonumber(ARGV[3]) <= 0 then redis.call('DEL', KEYS[3]) else redis.call('SET', KEYS[3], ARGV[1], 'PX', ARGV[3]) end
return 1`;

/**
 * Keeps the pair in Redis, for processes on any number of hosts (containers, cluster workers, serverless). One
 * process renews at a time under a lock (`SET NX PX`, a fence one past both the last grant and the stored record's,
 * compare-and-delete release), and the others take its pair without calling the service. Takes your client as it
 * is: ioredis 5 or 6 (`Redis`, `Cluster`) or node-redis 4, 5 or 6 (`createClient()`, `createCluster()`), RESP2 or
 * RESP3; both stay optional peers. A client it cannot use is refused at construction (see the constructor).
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
 */
export class RedisTokenStore implements TokenStore {
  private readonly keys: { pair: string; lock: string; fence: string; account: string };
  private readonly channel: string;
  private readonly options: Required<Omit<RedisTokenStoreOptions, 'subscriber'>>;
  private readonly client: RedisCommands;
  private readonly subscriber: RedisSubscription | undefined;
  private readonly announcer = new Announcer();
  private readonly wakeup = new Wakeup();
  private listening: Promise<unknown> | undefined;
  /** The subscription is confirmed: releases wake the waiters, and polling is only the fallback. */
  private subscribed = false;
  private closed = false;

  /**
   * @param client An ioredis `Redis` or `Cluster` (5 or 6), or a node-redis client or cluster (4, 5 or 6) on which
   * `connect()` was called. The store never closes it.
   * @param options `prefix` (required, one per account), an optional `subscriber` connection, and the timings.
   * @throws TypeError, saying what to pass instead, when `client` is no Redis client, a node-redis client that is not
   * open or in `legacyMode`, a closed ioredis connection or a connection in subscriber mode; when `subscriber` is no
   * Redis connection, one that is not open or closed, or `client` itself (but for a node-redis cluster); when
   * `prefix` is missing, or an option is out of range.
   */
  constructor(client: RedisClientLike, options: RedisTokenStoreOptions) {
    this.client = commandsOf(client);
    // No options at all is a missing prefix, which the next check names.
    checkStoreOptions('RedisTokenStore', options ?? {}, REDIS_OPTIONS);
    if (typeof options?.prefix !== 'string' || options.prefix === '') {
      throw new TypeError(
        `RedisTokenStore: \`prefix\` is required: one string per account, such as "tokens:orders-service"; got ${shown(options?.prefix)}.`,
      );
    }
    if ((options.keyTtlMs ?? REDIS_DEFAULTS.keyTtlMs) <= (options.lockTtlMs ?? REDIS_DEFAULTS.lockTtlMs)) {
      throw new TypeError(
        'RedisTokenStore: `keyTtlMs` must be longer than `lockTtlMs`, or the fence could expire while a lock is held.',
      );
    }
    const { subscriber, prefix, ...timing } = options;
    this.subscriber = subscriber === undefined ? undefined : subscriptionOf(subscriber, client);
    const merged = { ...REDIS_DEFAULTS, ...timing };
    // PX and PEXPIRE take whole milliseconds.
    this.options = { ...merged, lockTtlMs: Math.ceil(merged.lockTtlMs), keyTtlMs: Math.ceil(merged.keyTtlMs), prefix };
    const tag = `{${prefix}}`;
    this.keys = { pair: `${tag}:pair`, lock: `${tag}:lock`, fence: `${tag}:fence`, account: `${tag}:account` };
    this.channel = `${tag}:changed`;
  }

  /** The stored pair, or null; rejects, naming the key, when the value there is not a record of this package. */
  async get(): Promise<TokenPair | null> {
    const text = await this.command(this.client.get(this.keys.pair));
    return text === null ? null : parseRecord(text, this.where()).pair;
  }

  /** Writes the pair; false, without writing, when `fence` is older than the last lock granted. */
  async set(pair: TokenPair, fence?: number): Promise<boolean> {
    return this.write(recordToJson(fence ?? 0, pair), pair, fence);
  }

  /** Deletes the pair's key; false, without deleting, as for `set`. */
  async clear(fence?: number): Promise<boolean> {
    return this.write('', null, fence);
  }

  /** The account's record (`{prefix}:account`), which every process sharing the pair consults; null when none. */
  async getAccount(): Promise<AccountRecord | null> {
    return parseAccountRecord(await this.command(this.client.get(this.keys.account))) ?? null;
  }

  /**
   * Writes the account's record, to expire with the last pause, back-off or spent call it describes; false, without
   * writing, when `fence` is older than the last lock granted.
   */
  async setAccount(record: AccountRecord, fence?: number): Promise<boolean> {
    const ttlMs = Math.ceil(record.expiresAt - Date.now());
    const keys = [this.keys.pair, this.keys.fence, this.keys.account];
    const args = [JSON.stringify(record), fence ?? '', Math.max(0, ttlMs)];
    return integer(await this.command(this.client.eval(WRITE_ACCOUNT, keys, args))) === 1;
  }

  /**
   * Waits for the lock, at most `lockTimeoutMs`, and holds it, extending its lease, until `release()`. Each try
   * that is refused also reads the pair, and announces it to the subscribers when it changed: a waiter whose
   * `request.signal` then aborts stops waiting without the lock.
   */
  async lock(request?: TokenStoreLockRequest): Promise<TokenStoreLock> {
    // Listening before the first try, so that the release is not missed; but never waiting on pub/sub for long.
    await settle(this.listen(), { ms: Math.min(this.options.pollMs, this.options.lockTimeoutMs) });
    const owner = randomUUID();
    const release = () => this.command(this.client.eval(RELEASE, [this.keys.lock], [owner, this.channel]));
    const fence = await acquire(() => this.tryLock(owner), {
      ...this.options,
      request,
      wakeup: this.wakeup,
      what: `The Redis lock ${this.keys.lock}`,
      abandon: release,
      hearsReleases: () => this.subscribed,
    });
    const extend = async () =>
      integer(await this.command(this.client.eval(EXTEND, [this.keys.lock], [owner, this.options.lockTtlMs]))) === 1;
    const lease = keepAlive(extend, this.options.lockTtlMs);
    return {
      fence,
      release: async () => {
        lease.stop();
        await release();
      },
    };
  }

  subscribe(listener: (pair: TokenPair | null) => void): () => void {
    const remove = this.announcer.add(listener);
    void this.listen();
    return remove;
  }

  /** Stops listening on the subscriber connection, for good (the connection stays open: it is yours). */
  async close(): Promise<void> {
    this.closed = true;
    if (!this.subscriber || !this.listening) return;
    this.listening = undefined;
    this.subscribed = false;
    await this.subscriber.stop();
  }

  private async tryLock(owner: string): Promise<Attempt<number>> {
    const keys = [this.keys.pair, this.keys.fence, this.keys.lock];
    const answer = await this.command(
      this.client.eval(LOCK, keys, [owner, this.options.lockTtlMs, this.options.keyTtlMs]),
    );
    const [granted, value, record] = Array.isArray(answer) ? answer : [];
    if (integer(granted) === 1) return { granted: integer(value) };
    // Only a pair: a key found missing is an emptied Redis (a restart), not a logout, which publishes its own.
    if (typeof record === 'string' && record !== '') this.noticed(record);
    // PTTL is negative when the key went meanwhile: try again at once.
    return { retryInMs: Math.max(0, integer(value)) };
  }

  private async write(record: string, pair: TokenPair | null, fence: number | undefined): Promise<boolean> {
    const args = [record, fence ?? '', this.options.keyTtlMs, this.channel];
    const outcome = integer(await this.command(this.client.eval(WRITE, [this.keys.pair, this.keys.fence], args)));
    if (outcome === -1)
      throw new Error(
        `${this.where()} holds something that is not a token record of this package; give the store another prefix or delete the key.`,
      );
    if (outcome !== 1) return false;
    this.announcer.announce(record, pair);
    return true;
  }

  /** Subscribes once; until it is confirmed, or without a subscriber, waiters poll. */
  private listen(): Promise<unknown> {
    const subscriber = this.subscriber;
    if (!subscriber || this.closed) return Promise.resolve();
    if (!this.listening) {
      this.listening = subscriber.listen(this.channel, this.onMessage).then(
        () => {
          this.subscribed = !this.closed;
        },
        () => {
          // Pub/sub only saves waiting; without it, polling and the re-read under the lock keep things right.
          this.listening = undefined;
        },
      );
    }
    return this.listening;
  }

  /**
   * A release wakes this process's waiters, each at a moment of its own within 50 ms (or `pollMs` when shorter), so
   * that the processes that heard it do not all try at once; a new pair is read and announced, which ends the waits
   * it makes needless.
   */
  private readonly onMessage = (message: string): void => {
    if (message === 'released') this.wakeup.wake(Math.min(this.options.pollMs, RELEASE_SPREAD_MS));
    else if (message === 'changed') void this.pickUp();
  };

  /**
   * A command's answer, or its error without what the client attaches to it: ioredis' `command.args` holds the
   * record written, tokens included. Only the message is kept, which no client fills with the arguments.
   */
  private async command<T>(reply: Promise<T>): Promise<T> {
    try {
      return await reply;
    } catch (error) {
      // eslint-disable-next-line preserve-caught-error -- no cause on purpose: its `command.args` hold tokens (above)
      throw new Error(`Redis: ${error instanceof Error ? error.message : String(error)}`);
    }
  }

  private async pickUp(): Promise<void> {
    try {
      this.noticed((await this.command(this.client.get(this.keys.pair))) ?? '');
    } catch {
      // A failed read is the next one's business.
    }
  }

  /** Announces the record read (or '' for none), when it changed. */
  private noticed(text: string): void {
    try {
      this.announcer.announce(text, text === '' ? null : parseRecord(text, this.where()).pair);
    } catch {
      // A record that is not ours is reported by get(), where the plugin can say so; a message cannot.
    }
  }

  private where(): string {
    return `The Redis key ${this.keys.pair}`;
  }
}

/** An integer reply, whether the client gave it as a number or as a string (ioredis' `stringNumbers`). */
function integer(reply: RedisReply | undefined): number {
  return typeof reply === 'number' ? reply : Number(reply);
}
