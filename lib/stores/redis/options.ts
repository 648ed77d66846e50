// The options of RedisTokenStore: what each does, their defaults, and their checks, which name the option at fault.
import { LEASE_DEFAULTS } from '../common/lease.js';
import type { LeaseOptions } from '../common/lease.js';
import { checkStoreOptions, shown } from '../common/options.js';
import type { OptionNames } from '../common/options.js';
import type { RedisSubscriberLike } from './client-shapes.js';
import type { Sealing } from '../sealing/index.js';
import type { StoreEncryption } from '../sealing/options.js';

/** Options of `RedisTokenStore`. Only `prefix` is required. */
export interface RedisTokenStoreOptions extends LeaseOptions {
  /**
   * Names the account's keys: `{prefix}:pair`, `{prefix}:lock`, `{prefix}:fence` and `{prefix}:account` (the
   * account's record: its login pause, back-off and budget; the braces keep them in one Redis Cluster slot). One
   * prefix per account: two accounts under one prefix would swap tokens. The named accounts of
   * `RedisTokenStore.forAccount` have keys of their own below it; their prefix may not hold `#`.
   */
  prefix: string;
  /**
   * A second connection, in subscriber mode, that the store listens on: every process then switches to a new pair
   * as soon as it is written, and waiters for the lock wake when it is released instead of polling. With ioredis
   * `redis.duplicate()`; with node-redis `client.duplicate()`, connected, or the cluster itself with
   * `createCluster()` (it subscribes through a connection of its own). The named accounts' stores listen on it too.
   * None with @upstash/redis, whose REST protocol has no pub/sub.
   * The store never closes it; `close()` stops listening.
   * @default none: waiters poll every `pollMs`, and processes learn of a new pair from their next 401
   */
  subscriber?: RedisSubscriberLike;
  /**
   * The pair's key (and the fence's) expires this long after its last write, so the pair of an account nobody uses
   * any more goes. Longer than `lockTtlMs`.
   * @default 86_400_000 (one day)
   */
  keyTtlMs?: number;
  /**
   * Seal the tokens in Redis: `keys`, each `{ id, secret }` with 32 random bytes (`openssl rand -base64 32`), the first
   * sealing and every one opening (AES-256-GCM, bound to the pair's key); or `seal` and `unseal` of your KMS. The
   * named accounts' stores seal with them too. Or what `sealing()` (axios-token-keeper/sealing) made of them, as the
   * browser store takes it. See docs/stores.md, "Tokens sealed at rest", for what it protects and how to rotate keys
   * without a login.
   * @default none: the pair is kept in clear
   */
  encryption?: StoreEncryption | Sealing;
  /**
   * After writing the pair or the account's record, how long the store waits, at most, for a replica of the master
   * that took the write to acknowledge it (`WAIT 1`), so that a failover right after the write is less likely to lose
   * it. Only where that master has replicas (its `INFO replication`); never longer than half the plugin's
   * `storeTimeoutMs`, so that the write and its wait end within one store call. Shorter than `lockTtlMs`: the wait
   * holds the lock. A wait that ends with no acknowledgement is no failure: the write stands on the master.
   * @default 1_000
   */
  replicaWaitMs?: number;
}

const REDIS_DEFAULTS = { ...LEASE_DEFAULTS, keyTtlMs: 86_400_000, replicaWaitMs: 1_000 } satisfies Required<
  Omit<RedisTokenStoreOptions, 'prefix' | 'subscriber' | 'encryption'>
>;

const REDIS_OPTIONS: OptionNames<RedisTokenStoreOptions> = {
  lockTtlMs: true,
  lockTimeoutMs: true,
  pollMs: true,
  keyTtlMs: true,
  replicaWaitMs: true,
  prefix: true,
  subscriber: true,
  encryption: true,
};

/** The options with their defaults, in the whole milliseconds that PX and PEXPIRE take. */
export type ResolvedRedisOptions = Required<Omit<RedisTokenStoreOptions, 'subscriber' | 'encryption'>>;

/**
 * `options` checked, with their defaults, and the subscriber and `encryption` apart (checked by the store). Throws a
 * TypeError naming the option for an option it does not know or out of range, a missing `prefix`, a `keyTtlMs` no
 * longer than `lockTtlMs`, and a `replicaWaitMs` no shorter.
 */
export function resolveRedisOptions(options: Partial<RedisTokenStoreOptions>): {
  options: ResolvedRedisOptions;
  subscriber: RedisSubscriberLike | undefined;
  encryption: unknown;
} {
  checkStoreOptions('RedisTokenStore', options, REDIS_OPTIONS);
  const { subscriber, prefix } = options;
  if (typeof prefix !== 'string' || prefix === '') {
    throw new TypeError(
      `RedisTokenStore: \`prefix\` is required: one string per account, such as "tokens:orders-service"; got ${shown(prefix)}.`,
    );
  }
  const lockTtlMs = options.lockTtlMs ?? REDIS_DEFAULTS.lockTtlMs;
  const keyTtlMs = options.keyTtlMs ?? REDIS_DEFAULTS.keyTtlMs;
  const lockTimeoutMs = options.lockTimeoutMs ?? REDIS_DEFAULTS.lockTimeoutMs;
  const pollMs = options.pollMs ?? REDIS_DEFAULTS.pollMs;
  const replicaWaitMs = options.replicaWaitMs ?? Math.min(REDIS_DEFAULTS.replicaWaitMs, lockTtlMs / 2);
  if (keyTtlMs <= lockTtlMs) {
    throw new TypeError(
      'RedisTokenStore: `keyTtlMs` must be longer than `lockTtlMs`, or the fence could expire while a lock is held.',
    );
  }
  if (replicaWaitMs >= lockTtlMs) {
    throw new TypeError(
      `RedisTokenStore: \`replicaWaitMs\` (${replicaWaitMs}) must be shorter than \`lockTtlMs\` (${lockTtlMs}): the wait ` +
        'for a replica holds the lock.',
    );
  }
  return {
    options: {
      prefix,
      lockTtlMs: Math.ceil(lockTtlMs),
      lockTimeoutMs,
      pollMs,
      keyTtlMs: Math.ceil(keyTtlMs),
      replicaWaitMs: Math.floor(replicaWaitMs),
    },
    subscriber,
    encryption: options.encryption,
  };
}
