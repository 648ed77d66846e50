/**
 * {@link RedisTokenStore}: one token pair shared by processes on any number of hosts, through one Redis. Bring your own
 * client: ioredis (5, 6; `Redis` or `Cluster`) or node-redis (4, 5, 6; `createClient()` or `createCluster()`) on Node,
 * or @upstash/redis (`new Redis({ url, token })`, over HTTPS) anywhere, Cloudflare Workers and Vercel's edge runtime
 * included: the module imports no Node built-in.
 *
 * @module axios-token-keeper/redis-store
 */
export { RedisTokenStore } from './store.js';

/** The lock's lease options, which this store's options extend. */
export type { LeaseOptions } from '../common/lease.js';

/** The store's options. */
export type { RedisTokenStoreOptions } from './options.js';

/** The `encryption` option: its keys, or the functions of your KMS, and the switch from clear; or `sealing()`'s. */
export type { SealingFunctions, SealingSecret, SealingSwitch, StoreEncryption } from '../sealing/options.js';
export type { Sealing } from '../sealing/index.js';

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
} from './client-shapes.js';
/** The REST client of serverless and edge platforms, @upstash/redis, as its shape: it is not imported either. */
export type { UpstashClientLike, UpstashScriptLike } from './rest.js';
