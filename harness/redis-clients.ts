/**
 * The Redis clients RedisTokenStore is tested with, opened as a user opens them: ioredis 5 and 6 (`new Redis(url)`,
 * `new Redis.Cluster(nodes)`, `new Redis({ sentinels, name })`, `duplicate()` for pub/sub) and node-redis 4, 5 and 6
 * (`createClient()`, `createCluster()`, and 5 and 6 `createSentinel()`, `connect()`; for pub/sub `duplicate()`
 * connected, or the cluster or sentinel itself), in the RESP version asked where the client lets one choose.
 * For the tests and the fleet's workers; no jest here. The versions other than the peers' are npm aliases in
 * package.json (`ioredis6`, `redis4`, `redis5`, `redis6`); each library is loaded only when a client of it is opened.
 *
 * @example
 * const { client, subscriber, close } = await openRedis({ library: 'redis5', resp: 3 }, { url }, { subscriber: true });
 * const store = new RedisTokenStore(client, { prefix: 'tokens:jane', subscriber });
 */
import type { ClusterOptions, RedisOptions } from 'ioredis';
import type { IoredisClientLike, IoredisSubscriberLike, NodeRedisClientLike } from '../lib/stores/redis/index.js';
import type { NodeRedisSubscriberLike, RedisClientLike, RedisSubscriberLike } from '../lib/stores/redis/index.js';

/** The npm names of the clients: ioredis 5 (the peer) and 6, node-redis 4, 5 and 6. */
/**
 * Whether a command argument is RedisTokenStore's lock script (LOCK in lib/stores/redis/scripts.ts), to count lock
 * tries.
 */
export function isLockScript(arg: unknown): boolean {
  return typeof arg === 'string' && arg.includes("'SET', KEYS[3]");
}

export type RedisLibrary = 'ioredis' | 'ioredis6' | 'redis4' | 'redis5' | 'redis6';

/** Which client a test or a worker opens. */
export interface RedisClientChoice {
  library: RedisLibrary;
  /**
   * The protocol, where the client lets one choose: ioredis 6's `protocol`, node-redis 5 and 6's `RESP`.
   * @default the client's own: RESP2 for ioredis 5, node-redis 4 and 5; RESP3 for ioredis 6 and node-redis 6
   */
  resp?: 2 | 3;
}

/** Every client and protocol the store is tested with: each library at its default, and the other protocol. */
export const TESTED_CLIENTS: readonly RedisClientChoice[] = [
  { library: 'ioredis' },
  { library: 'ioredis6' },
  { library: 'ioredis6', resp: 2 },
  { library: 'redis4' },
  { library: 'redis5' },
  { library: 'redis5', resp: 3 },
  { library: 'redis6' },
  { library: 'redis6', resp: 2 },
];

const DEFAULT_RESP: Record<RedisLibrary, 2 | 3> = { ioredis: 2, ioredis6: 3, redis4: 2, redis5: 2, redis6: 3 };

/** "ioredis 5 (RESP2)", "node-redis 6 (RESP3)": what a test's name says. */
export function clientLabel(choice: RedisClientChoice): string {
  const resp = choice.resp ?? DEFAULT_RESP[choice.library];
  const name = choice.library.startsWith('ioredis')
    ? `ioredis ${choice.library === 'ioredis' ? 5 : 6}`
    : `node-redis ${choice.library.slice(-1)}`;
  return `${name} (RESP${resp})`;
}

/** Where to connect: one redis-server, the startup nodes of a cluster, or the sentinels of a master, by its name. */
export type RedisTarget =
  | { url: string }
  | { nodes: ReadonlyArray<{ host: string; port: number }> }
  | { sentinels: ReadonlyArray<{ host: string; port: number }>; name: string };

export interface RedisOpenOptions {
  /** Open a second connection for pub/sub too. @default false */
  subscriber?: boolean;
  /** ioredis options of a single connection (node-redis clients take none of these). */
  ioredis?: RedisOptions;
  /** ioredis options of a cluster. */
  ioredisCluster?: ClusterOptions;
  /**
   * The name of every connection opened, the subscriber's and a cluster's to each node included (`CLIENT SETNAME`),
   * so that `CLIENT LIST` tells one process's connections from the others'. @default none
   */
  name?: string;
}

/** The connections opened, as the store takes them, and what ends them. */
export interface RedisConnections {
  client: RedisClientLike;
  subscriber?: RedisSubscriberLike;
  /** Ends the subscriber and the client (a node-redis connection's `close()`, `quit()` before node-redis 5). */
  close(): Promise<void>;
}

/** What this harness uses of a node-redis client or cluster, besides what the store uses. */
interface NodeRedisConnection extends Omit<NodeRedisClientLike, 'sendCommand'>, NodeRedisSubscriberLike {
  connect(): Promise<unknown>;
  duplicate(): NodeRedisConnection;
  on(event: 'error', listener: (error: Error) => void): unknown;
  quit(): Promise<unknown>;
  close?: () => Promise<unknown>;
}

/** What this harness uses of an ioredis `Redis` or `Cluster`, besides what the store uses. */
interface IoredisConnection extends IoredisClientLike, IoredisSubscriberLike {
  connect(): Promise<unknown>;
  duplicate(): IoredisConnection;
  quit(): Promise<unknown>;
}

/** Opens `choice`'s client on `target` (connected; with a subscriber when asked) as its users would. */
export async function openRedis(
  choice: RedisClientChoice,
  target: RedisTarget,
  options: RedisOpenOptions = {},
): Promise<RedisConnections> {
  if (choice.library === 'ioredis' || choice.library === 'ioredis6') return openIoredis(choice, target, options);
  const client = await nodeRedisClient(choice, target, options.name);
  // node-redis emits every connection error as an 'error' event, which ends the process without a listener; the
  // store sees each failed command anyway.
  client.on('error', () => undefined);
  await client.connect();
  let subscriber: NodeRedisConnection | undefined;
  // A node-redis cluster or sentinel subscribes through a connection of its own: it is its own subscriber.
  if (options.subscriber && !('url' in target)) subscriber = client;
  else if (options.subscriber) {
    subscriber = client.duplicate();
    subscriber.on('error', () => undefined);
    await subscriber.connect();
  }
  const end = (connection: NodeRedisConnection) =>
    (connection.close ? connection.close() : connection.quit()).catch(() => undefined);
  return {
    client: client as RedisClientLike,
    ...(subscriber && { subscriber }),
    close: async () => {
      if (subscriber && subscriber !== client) await end(subscriber);
      await end(client);
    },
  };
}

/** ioredis 5 and 6 as this harness opens them: the options of 5, which 6 takes too. */
interface IoredisModule {
  default: {
    new (url: string, options: RedisOptions): IoredisConnection;
    new (options: RedisOptions): IoredisConnection;
  };
  Cluster: new (nodes: Array<{ host: string; port: number }>, options: ClusterOptions) => IoredisConnection;
}

async function openIoredis(
  choice: RedisClientChoice,
  target: RedisTarget,
  options: RedisOpenOptions,
): Promise<RedisConnections> {
  // The two majors' classes differ only in types this harness does not use (their connectors').
  const library = (choice.library === 'ioredis' ? await import('ioredis') : await import('ioredis6')) as IoredisModule;
  const protocol = choice.resp === undefined ? {} : { protocol: choice.resp };
  // duplicate() copies it, to the subscriber.
  const named = options.name === undefined ? {} : { connectionName: options.name };
  const client =
    'url' in target
      ? new library.default(target.url, { lazyConnect: true, ...protocol, ...named, ...options.ioredis })
      : 'sentinels' in target
        ? new library.default({
            sentinels: [...target.sentinels],
            name: target.name,
            lazyConnect: true,
            ...protocol,
            ...named,
            ...options.ioredis,
          })
        : new library.Cluster([...target.nodes], {
            lazyConnect: true,
            ...options.ioredisCluster,
            redisOptions: { ...protocol, ...named, ...options.ioredisCluster?.redisOptions },
          });
  await client.connect();
  const subscriber = options.subscriber ? client.duplicate() : undefined;
  await subscriber?.connect();
  return {
    client,
    ...(subscriber && { subscriber }),
    close: async () => {
      for (const connection of [subscriber, client]) await connection?.quit().catch(() => undefined);
    },
  };
}

async function nodeRedisClient(
  choice: RedisClientChoice,
  target: RedisTarget,
  name: string | undefined,
): Promise<NodeRedisConnection> {
  const rootNodes = 'nodes' in target ? target.nodes.map((node) => ({ url: `redis://${node.host}:${node.port}` })) : [];
  const resp = choice.resp === undefined ? {} : { RESP: choice.resp };
  // duplicate() copies it, to the subscriber; a cluster gives its node connections its defaults, a sentinel its
  // nodeClientOptions.
  const named = name === undefined ? {} : { name };
  const defaults = name === undefined ? {} : { defaults: { name } };
  const sentinel = (target: { sentinels: ReadonlyArray<{ host: string; port: number }>; name: string }) => ({
    name: target.name,
    sentinelRootNodes: [...target.sentinels],
    ...resp,
    ...(name !== undefined && { nodeClientOptions: { name } }),
  });
  switch (choice.library) {
    case 'redis4': {
      if ('sentinels' in target) throw new TypeError('node-redis 4 has no sentinel client (createSentinel came in 5).');
      const { createClient, createCluster } = await import('redis4');
      return 'url' in target ? createClient({ url: target.url, ...named }) : createCluster({ rootNodes, ...defaults });
    }
    case 'redis5': {
      const { createClient, createCluster, createSentinel } = await import('redis5');
      if ('sentinels' in target) return createSentinel(sentinel(target)) as unknown as NodeRedisConnection;
      return 'url' in target
        ? createClient({ url: target.url, ...resp, ...named })
        : createCluster({ rootNodes, ...resp, ...defaults });
    }
    case 'redis6': {
      const { createClient, createCluster, createSentinel } = await import('redis6');
      if ('sentinels' in target) return createSentinel(sentinel(target)) as unknown as NodeRedisConnection;
      return 'url' in target
        ? createClient({ url: target.url, ...resp, ...named })
        : createCluster({ rootNodes, ...resp, ...defaults });
    }
    default:
      throw new TypeError(`${choice.library} is no node-redis.`);
  }
}
