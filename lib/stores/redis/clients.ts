// How RedisTokenStore tells the clients it takes apart (their shapes are in client-shapes.ts): ioredis (5 and 6,
// `Redis`, `Cluster`, and `Redis` with `sentinels`) and node-redis (4 to 6, `createClient()` and `createCluster()`; 5
// and 6, `createSentinel()`). Neither library is imported: a client is recognised by its shape, and one the store
// cannot use is refused here, at construction, saying what to pass instead. Each family's adapter is picked in
// adapters.ts. The REST client of serverless platforms, @upstash/redis, is recognised and adapted in rest.ts.
import { looksLikeRestClient, REST_HAS_NO_PUBSUB, restClientProblem } from './rest.js';
import type { UpstashClientLike } from './rest.js';
import type {
  IoredisClientLike,
  IoredisSubscriberLike,
  NodeRedisClientLike,
  NodeRedisClusterLike,
  NodeRedisSentinelLike,
  NodeRedisSubscriberLike,
} from './client-shapes.js';

/** The clients' shapes, importable from here too, where they were first. */
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

/** The fields a recognised client is told apart by (all read, none called, before it is accepted). */
interface Shape {
  eval?: unknown;
  get?: unknown;
  sendCommand?: unknown;
  subscribe?: unknown;
  unsubscribe?: unknown;
  on?: unknown;
  off?: unknown;
  // ioredis
  status?: unknown;
  isCluster?: unknown;
  mode?: unknown;
  // node-redis
  isOpen?: unknown;
  isPubSubActive?: unknown;
  getSlotMaster?: unknown;
  getSentinelNode?: unknown;
  use?: unknown;
  options?: { legacyMode?: unknown } | undefined;
}

type Family = RecognisedClient['family'];

/** A client the store can use, by family. */
export type RecognisedClient =
  | { family: 'ioredis'; client: IoredisClientLike }
  | { family: 'node-redis'; client: NodeRedisClientLike }
  | { family: 'node-redis cluster'; client: NodeRedisClusterLike }
  | { family: 'node-redis sentinel'; client: NodeRedisSentinelLike }
  | { family: 'upstash'; client: UpstashClientLike };

/** A subscriber the store can use: ioredis' (one listener for every channel) or node-redis' (a listener per channel). */
export type RecognisedSubscriber =
  | { family: 'ioredis'; subscriber: IoredisSubscriberLike }
  | { family: 'node-redis'; subscriber: NodeRedisSubscriberLike };

/** The families that subscribe through a connection of their own, and so may be their own subscriber. */
const OWN_SUBSCRIBER: ReadonlySet<Family> = new Set(['node-redis cluster', 'node-redis sentinel']);

const PASS_A_CLIENT =
  'an ioredis `Redis` or `Cluster` (`new Redis(url)`), a node-redis client, cluster or sentinel, connected ' +
  '(`const client = createClient({ url }); await client.connect()`), or an @upstash/redis client ' +
  '(`new Redis({ url, token })`)';

const PASS_A_SUBSCRIBER =
  'a second connection: with ioredis `redis.duplicate()`; with node-redis `client.duplicate()`, connected ' +
  '(`await subscriber.connect()`), or the cluster or sentinel itself with `createCluster()` or `createSentinel()`';

/**
 * ioredis has `status` and `isCluster`; node-redis has `isOpen`, its cluster `getSlotMaster`, and its sentinel
 * `getSentinelNode`.
 */
function familyOf(value: unknown): Family | undefined {
  if (value === null || typeof value !== 'object') return undefined;
  const shape = value as Shape;
  if (typeof shape.status === 'string' && typeof shape.isCluster === 'boolean') return 'ioredis';
  if (typeof shape.isOpen !== 'boolean') return undefined;
  if (typeof shape.getSlotMaster === 'function') return 'node-redis cluster';
  return typeof shape.getSentinelNode === 'function' ? 'node-redis sentinel' : 'node-redis';
}

/** What was passed, as a refusal names it: never its content, which may hold a password in a URL. */
function described(value: unknown): string {
  if (value === null || value === undefined || typeof value === 'number' || typeof value === 'boolean')
    return String(value);
  if (typeof value === 'string') return `a string (${value.startsWith('redis') ? 'a URL?' : 'not a client'})`;
  if (typeof value === 'function') return 'a function';
  if (typeof value !== 'object') return typeof value;
  const name = (Object.getPrototypeOf(value) as { constructor?: { name?: unknown } } | null)?.constructor?.name;
  return typeof name === 'string' && name !== 'Object' ? `an object of class ${name}` : 'a plain object';
}

/**
 * `client` by its family, or a TypeError that says what was passed and what to pass: something that is no Redis
 * client, a node-redis client that is not open or in `legacyMode`, a closed ioredis connection, a connection in
 * subscriber mode.
 */
export function recogniseClient(client: unknown): RecognisedClient {
  if (looksLikeRestClient(client)) {
    const problem = restClientProblem(client);
    if (problem) throw new TypeError(problem);
    return { family: 'upstash', client: client as UpstashClientLike };
  }
  const family = familyOf(client);
  const shape = client as Shape;
  const usable =
    family === 'node-redis cluster'
      ? typeof shape.sendCommand === 'function'
      : family === 'node-redis sentinel'
        ? typeof shape.sendCommand === 'function' && typeof shape.use === 'function'
        : family !== undefined && typeof shape.eval === 'function' && typeof shape.get === 'function';
  if (!usable) {
    throw new TypeError(`RedisTokenStore: the first argument must be ${PASS_A_CLIENT}; got ${described(client)}.`);
  }
  if (family === 'ioredis') {
    refuseEnded(shape, 'the first argument');
    if (shape.mode === 'subscriber') {
      throw new TypeError(
        'RedisTokenStore: the first argument is an ioredis connection in subscriber mode, which can send no other ' +
          'command: pass your main connection first, and this one as `subscriber`.',
      );
    }
    return { family, client: client as IoredisClientLike };
  }
  if (family === 'node-redis sentinel') {
    refuseClosed(shape, 'the first argument', 'sentinel');
    return { family, client: client as NodeRedisSentinelLike };
  }
  if (shape.options?.legacyMode === true) {
    throw new TypeError(
      'RedisTokenStore: the first argument is a node-redis 4 client in `legacyMode`, whose commands take callbacks: ' +
        'pass a client without it, such as `client.duplicate({ legacyMode: false })`, connected.',
    );
  }
  refuseClosed(shape, 'the first argument', 'client');
  if (shape.isPubSubActive === true) {
    throw new TypeError(
      'RedisTokenStore: the first argument is a node-redis client in subscriber mode (it has subscribed), which ' +
        'can send no other command: pass your main client first, and this one as `subscriber`.',
    );
  }
  return family === 'node-redis cluster'
    ? { family, client: client as NodeRedisClusterLike }
    : { family: 'node-redis', client: client as NodeRedisClientLike };
}

/**
 * `subscriber` by its family, or a TypeError that says what was passed and what to pass: something that is no Redis
 * connection, a node-redis connection that is not open, a closed ioredis connection, or the store's own connection
 * (a connection in subscriber mode can send no other command), except a node-redis cluster or sentinel, which
 * subscribes through a connection of its own.
 */
export function recogniseSubscriber(subscriber: unknown, client: unknown): RecognisedSubscriber {
  if (looksLikeRestClient(client)) throw new TypeError(REST_HAS_NO_PUBSUB);
  const family = familyOf(subscriber);
  const shape = subscriber as Shape;
  if (!family || typeof shape.subscribe !== 'function' || typeof shape.unsubscribe !== 'function') {
    throw new TypeError(`RedisTokenStore: \`subscriber\` must be ${PASS_A_SUBSCRIBER}; got ${described(subscriber)}.`);
  }
  if (subscriber === client && !OWN_SUBSCRIBER.has(family)) {
    const second =
      family === 'ioredis' ? '`redis.duplicate()`' : '`client.duplicate()`, connected (`await subscriber.connect()`)';
    throw new TypeError(
      'RedisTokenStore: `subscriber` is the connection given as the first argument; once subscribed it could send ' +
        `no other command. Pass a second connection: ${second}.`,
    );
  }
  if (family === 'ioredis') {
    refuseEnded(shape, '`subscriber`');
    if (typeof shape.on !== 'function' || typeof shape.off !== 'function') {
      throw new TypeError(
        `RedisTokenStore: \`subscriber\` must be ${PASS_A_SUBSCRIBER}; got ${described(subscriber)}.`,
      );
    }
    return { family, subscriber: subscriber as IoredisSubscriberLike };
  }
  refuseClosed(shape, '`subscriber`', family === 'node-redis sentinel' ? 'sentinel' : 'subscriber');
  return { family: 'node-redis', subscriber: subscriber as NodeRedisSubscriberLike };
}

function refuseEnded(shape: Shape, what: string): void {
  if (shape.status === 'end') {
    throw new TypeError(
      `RedisTokenStore: ${what} is an ioredis connection that was closed (\`quit()\` or \`disconnect()\`), on which ` +
        'every command would fail: pass an open one.',
    );
  }
}

/** node-redis, unlike ioredis, does not connect by itself: every command of a client not open fails. */
function refuseClosed(shape: Shape, what: string, name: string): void {
  if (shape.isOpen !== true) {
    throw new TypeError(
      `RedisTokenStore: ${what} is a node-redis ${name} that is not open, on which every command would fail: ` +
        `call \`await ${name}.connect()\` before handing it to the store.`,
    );
  }
}
