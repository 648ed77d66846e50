import { randomUUID } from 'node:crypto';
import type { TokenPair, TokenStore, TokenStoreLock } from '../types.js';
import { acquire, Announcer, checkLeaseOptions, keepAlive, pairFromJson, pairToJson, Wakeup } from './lease.js';
import type { Attempt } from './lease.js';

/** The commands the store sends; an ioredis `Redis` or `Cluster` has them. */
export interface RedisClientLike {
  eval(script: string, numkeys: number, ...args: (string | number)[]): Promise<unknown>;
  get(key: string): Promise<string | null>;
}

/** A connection in subscriber mode (ioredis: `redis.duplicate()`), for pub/sub. */
export interface RedisSubscriberLike {
  subscribe(channel: string): Promise<unknown>;
  unsubscribe(channel: string): Promise<unknown>;
  on(event: 'message', listener: (channel: string, message: string) => void): unknown;
  off(event: 'message', listener: (channel: string, message: string) => void): unknown;
}

/** Options of {@link RedisTokenStore}. Only `prefix` is required. */
export interface RedisTokenStoreOptions {
  /**
   * Names this account's keys: `{prefix}:pair`, `{prefix}:lock` and `{prefix}:fence` (the braces keep them in one
   * Redis Cluster slot). One prefix per account: two accounts under one prefix would swap tokens.
   */
  prefix: string;
  /**
   * A second connection, in subscriber mode, that the store listens on: every process then switches to a new pair
   * as soon as it is written, and waiters for the lock wake when it is released instead of polling. The store never
   * closes it; `close()` stops listening.
   * @default none: waiters poll every `pollMs`, and processes learn of a new pair from their next 401
   */
  subscriber?: RedisSubscriberLike;
  /**
   * Length of the lock's lease. The holder extends it while it renews, so a slow renewal keeps the lock; a holder
   * that was killed blocks the others this long at most.
   * @default 10_000
   */
  lockTtlMs?: number;
  /**
   * How long a process waits for the lock before it gives up and renews without it (reported as `STORE_FAILED`).
   * @default 30_000
   */
  lockTimeoutMs?: number;
  /**
   * How often a waiting process tries the lock again (with pub/sub, a fallback in case a message is lost).
   * @default 50
   */
  pollMs?: number;
  /**
   * The pair's key expires this long after its last write, so the pair of an account nobody uses any more goes.
   * @default 86_400_000 (one day)
   */
  keyTtlMs?: number;
}

const REDIS_DEFAULTS = { lockTtlMs: 10_000, lockTimeoutMs: 30_000, pollMs: 50, keyTtlMs: 86_400_000 };

/** Takes the lock and a fence that grows with every grant; or tells how long the current lease has left. */
const LOCK = `
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
  local fence = redis.call('INCR', KEYS[2])
  redis.call('PEXPIRE', KEYS[2], ARGV[3])
  return {1, fence}
end
return {0, redis.call('PTTL', KEYS[1])}`;

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
const WRITE = `
local current = redis.call('GET', KEYS[1])
if current then
  local ok, record = pcall(cjson.decode, current)
  if not ok or type(record) ~= 'table' or record.version ~= 1 then return -1 end
end
if ARGV[2] ~= '' and tonumber(ARGV[2]) < tonumber(redis.call('GET', KEYS[2]) or '0') then return 0 end
if ARGV[1] == '' then redis.call('DEL', KEYS[1]) else redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[3]) end
redis.call('PUBLISH', ARGV[4], 'changed')
return 1`;

/**
 * Keeps the pair in Redis, for processes on any number of hosts (containers, cluster workers, serverless). One
 * process renews at a time under a lock (`SET NX PX`, a fence from `INCR`, compare-and-delete release), and the
 * others take its pair without calling the service. Takes your ioredis client; ioredis stays an optional peer.
 *
 * @example
 * import Redis from 'ioredis';
 * import { RedisTokenStore } from 'axios-token-keeper/redis-store';
 * const redis = new Redis(process.env.REDIS_URL);
 * const store = new RedisTokenStore(redis, { prefix: 'tokens:orders-service', subscriber: redis.duplicate() });
 * attachTokenAuth(api, { credentials, store });
 */
export class RedisTokenStore implements TokenStore {
  private readonly keys: { pair: string; lock: string; fence: string };
  private readonly channel: string;
  private readonly options: Required<Omit<RedisTokenStoreOptions, 'subscriber'>>;
  private readonly subscriber: RedisSubscriberLike | undefined;
  private readonly announcer = new Announcer();
  private readonly wakeup = new Wakeup();
  private listening: Promise<unknown> | undefined;

  constructor(
    private readonly client: RedisClientLike,
    options: RedisTokenStoreOptions,
  ) {
    if (typeof client?.eval !== 'function' || typeof client.get !== 'function') {
      throw new TypeError('RedisTokenStore: the first argument must be an ioredis client, such as `new Redis(url)`.');
    }
    const known = [...Object.keys(REDIS_DEFAULTS), 'prefix', 'subscriber'];
    for (const name of Object.keys(options ?? {})) {
      if (!known.includes(name)) throw new TypeError(`RedisTokenStore: unknown option \`${name}\`; the options are ${known.map((k) => `\`${k}\``).join(', ')}.`);
    }
    if (typeof options?.prefix !== 'string' || options.prefix === '') {
      throw new TypeError('RedisTokenStore: `prefix` is required: one string per account, such as "tokens:orders-service".');
    }
    checkLeaseOptions('RedisTokenStore', { ...options });
    if (options.keyTtlMs !== undefined && !(typeof options.keyTtlMs === 'number' && options.keyTtlMs > 0 && Number.isFinite(options.keyTtlMs))) {
      throw new TypeError(`RedisTokenStore: \`keyTtlMs\` must be a positive number of milliseconds; got ${String(options.keyTtlMs)}.`);
    }
    if (options.subscriber !== undefined && typeof options.subscriber?.subscribe !== 'function') {
      throw new TypeError('RedisTokenStore: `subscriber` must be a second ioredis connection, such as `redis.duplicate()`.');
    }
    const { subscriber, prefix, ...timing } = options;
    this.subscriber = subscriber;
    const merged = { ...REDIS_DEFAULTS, ...timing };
    // PX and PEXPIRE take whole milliseconds.
    this.options = { ...merged, lockTtlMs: Math.ceil(merged.lockTtlMs), keyTtlMs: Math.ceil(merged.keyTtlMs), prefix };
    const tag = `{${prefix}}`;
    this.keys = { pair: `${tag}:pair`, lock: `${tag}:lock`, fence: `${tag}:fence` };
    this.channel = `${tag}:changed`;
  }

  async get(): Promise<TokenPair | null> {
    const text = await this.client.get(this.keys.pair);
    return text === null ? null : pairFromJson(text, this.where()).pair;
  }

  async set(pair: TokenPair, fence?: number): Promise<boolean> {
    return this.write(pairToJson(fence ?? 0, pair), pair, fence);
  }

  async clear(fence?: number): Promise<boolean> {
    return this.write('', null, fence);
  }

  async lock(): Promise<TokenStoreLock> {
    await this.listen();
    const owner = randomUUID();
    const fence = await acquire(() => this.tryLock(owner), {
      ...this.options,
      wakeup: this.wakeup,
      what: `The Redis lock ${this.keys.lock}`,
    });
    const lease = keepAlive(async () => (await this.client.eval(EXTEND, 1, this.keys.lock, owner, this.options.lockTtlMs)) === 1, this.options.lockTtlMs);
    return {
      fence,
      release: async () => {
        lease.stop();
        await this.client.eval(RELEASE, 1, this.keys.lock, owner, this.channel);
      },
    };
  }

  subscribe(listener: (pair: TokenPair | null) => void): () => void {
    const remove = this.announcer.add(listener);
    void this.listen();
    return remove;
  }

  /** Stops listening on the subscriber connection (which stays open: it is yours). */
  async close(): Promise<void> {
    if (!this.subscriber || !this.listening) return;
    this.listening = undefined;
    this.subscriber.off('message', this.onMessage);
    await this.subscriber.unsubscribe(this.channel);
  }

  private async tryLock(owner: string): Promise<Attempt<number>> {
    const [granted, value] = (await this.client.eval(LOCK, 2, this.keys.lock, this.keys.fence, owner, this.options.lockTtlMs, this.options.keyTtlMs)) as [number, number];
    // PTTL is negative when the key went meanwhile: try again at once.
    return granted === 1 ? { granted: value } : { retryInMs: Math.max(0, value) };
  }

  private async write(record: string, pair: TokenPair | null, fence: number | undefined): Promise<boolean> {
    const args = [record, fence ?? '', this.options.keyTtlMs, this.channel];
    const outcome = await this.client.eval(WRITE, 2, this.keys.pair, this.keys.fence, ...args);
    if (outcome === -1) throw new Error(`${this.where()} holds something that is not a token record of this package; give the store another prefix or delete the key.`);
    if (outcome !== 1) return false;
    this.announcer.announce(record, pair);
    return true;
  }

  /** Subscribes once; until it is confirmed, or without a subscriber, waiters poll. */
  private listen(): Promise<unknown> {
    const subscriber = this.subscriber;
    if (!subscriber) return Promise.resolve();
    if (!this.listening) {
      subscriber.on('message', this.onMessage);
      this.listening = subscriber.subscribe(this.channel).catch(() => {
        // Pub/sub only saves waiting; without it, polling and the re-read under the lock keep things right.
        subscriber.off('message', this.onMessage);
        this.listening = undefined;
      });
    }
    return this.listening;
  }

  private readonly onMessage = (channel: string, message: string): void => {
    if (channel !== this.channel) return;
    this.wakeup.wake();
    if (message === 'changed') void this.pickUp();
  };

  private async pickUp(): Promise<void> {
    try {
      const text = (await this.client.get(this.keys.pair)) ?? '';
      this.announcer.announce(text, text === '' ? null : pairFromJson(text, this.where()).pair);
    } catch {
      // A record that is not ours is reported by get(), where the plugin can say so; a message cannot.
    }
  }

  private where(): string {
    return `The Redis key ${this.keys.pair}`;
  }
}
