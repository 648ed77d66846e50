// The Redis clients RedisTokenStore takes, each family behind a small adapter that speaks the store's one vocabulary:
// `eval(script, keys, args)`, `get(key)` and subscriptions to channels. ioredis (5 and 6, `Redis` and `Cluster`)
// and node-redis (4 to 6, `createClient()` and `createCluster()`) differ in how a script's keys and arguments are
// passed, in how a message reaches its listener, and in whether a client connects by itself. Neither library is
// imported: a client is recognised by its shape, and one the store cannot use is refused here, at construction. The
// REST client of serverless platforms, @upstash/redis, has an adapter of its own in redis-rest.ts.
import { looksLikeRestClient, REST_HAS_NO_PUBSUB, restClientProblem, restCommands } from './redis-rest.js';
import type { UpstashClientLike } from './redis-rest.js';

/** An ioredis `Redis` or `Cluster` (ioredis 5 or 6), as the store uses it. It connects by itself. */
export interface IoredisClientLike {
  /** `EVAL script numkeys key… arg…`. */
  eval(script: string, numkeys: number, ...args: (string | number)[]): Promise<unknown>;
  /** `GET`. */
  get(key: string): Promise<unknown>;
  /** The connection's state (`'wait'`, `'ready'`, `'end'`, …): a closed connection is refused. */
  readonly status: string;
}

/** A node-redis client (node-redis 4, 5 or 6, RESP2 or RESP3), connected (`await client.connect()`). */
export interface NodeRedisClientLike {
  /** `EVAL`, with the keys and the arguments apart. */
  eval(script: string, options: { keys: string[]; arguments: string[] }): Promise<unknown>;
  /** `GET`. */
  get(key: string): Promise<unknown>;
  /** Whether `connect()` was called and the client not closed since: a client that is not open is refused. */
  readonly isOpen: boolean;
}

/**
 * A node-redis cluster (node-redis 4, 5 or 6, RESP2 or RESP3), connected (`await cluster.connect()`). The store sends
 * its commands with `sendCommand`, naming the key that routes each: node-redis 4's cluster sends an `eval` to a random
 * node, and gives up after a few MOVED replies.
 */
export interface NodeRedisClusterLike {
  /** A command, sent to the master of `firstKey`'s slot. */
  sendCommand(firstKey: string, isReadonly: boolean, args: string[]): Promise<unknown>;
  /** Whether `connect()` was called and the cluster not closed since: a cluster that is not open is refused. */
  readonly isOpen: boolean;
}

/** The client the store sends its commands on: ioredis', node-redis' or @upstash/redis'. */
export type RedisClientLike = IoredisClientLike | NodeRedisClientLike | NodeRedisClusterLike | UpstashClientLike;

/** An ioredis connection for pub/sub: `redis.duplicate()` (or `cluster.duplicate()`). */
export interface IoredisSubscriberLike {
  /** `SUBSCRIBE` to an account's channel. */
  subscribe(channel: string): Promise<unknown>;
  /** `UNSUBSCRIBE`, once nothing listens to the channel any more. */
  unsubscribe(channel: string): Promise<unknown>;
  /** Adds the listener of published messages. */
  on(event: 'message', listener: (channel: string, message: string) => void): unknown;
  /** Removes it, once nothing listens to any channel. */
  off(event: 'message', listener: (channel: string, message: string) => void): unknown;
}

/**
 * A node-redis connection for pub/sub: `client.duplicate()`, connected; with `createCluster()`, the cluster itself
 * (it subscribes through a connection of its own) or `cluster.duplicate()`, connected.
 */
export interface NodeRedisSubscriberLike {
  /** `SUBSCRIBE`, with the listener of the channel's messages. */
  subscribe(channel: string, listener: NodeRedisListener): Promise<unknown>;
  /** `UNSUBSCRIBE` that listener, once nothing listens to the channel any more. */
  unsubscribe(channel: string, listener: NodeRedisListener): Promise<unknown>;
  /** Whether `connect()` was called: a subscriber that is not open is refused. */
  readonly isOpen: boolean;
}

/** The listener of a node-redis channel: a message is a string, or bytes (a Buffer) in node-redis' buffer mode. */
export type NodeRedisListener = (message: string | Uint8Array, channel: string | Uint8Array) => void;

/** The second connection the store listens on: ioredis' or node-redis'. */
export type RedisSubscriberLike = IoredisSubscriberLike | NodeRedisSubscriberLike;

/** A reply as the store reads it, whatever the client and the protocol: no Buffer, no undefined, no bigint. */
export type RedisReply = string | number | null | RedisReply[];

/** The commands the store sends, in one vocabulary whatever the client. */
export interface RedisCommands {
  /** Runs `script` with its keys and arguments; the reply normalised. */
  eval(script: string, keys: readonly string[], args: readonly (string | number)[]): Promise<RedisReply>;
  /** The value of `key`, or null. */
  get(key: string): Promise<string | null>;
}

/** The channels listened to on the subscriber connection, each with one listener of its messages. */
export interface RedisSubscription {
  /**
   * Subscribes to `channel` and calls `onMessage` with each of its messages; when SUBSCRIBE fails, it listens no more.
   * A channel listened to already is not listened to twice: the caller holds one listener per channel.
   */
  listen(channel: string, onMessage: (message: string) => void): Promise<void>;
  /** Stops listening to `channel`. */
  stop(channel: string): Promise<void>;
}

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
  options?: { legacyMode?: unknown } | undefined;
}

type Family = 'ioredis' | 'node-redis' | 'node-redis cluster';

const PASS_A_CLIENT =
  'an ioredis `Redis` or `Cluster` (`new Redis(url)`), a node-redis client or cluster, connected ' +
  '(`const client = createClient({ url }); await client.connect()`), or an @upstash/redis client ' +
  '(`new Redis({ url, token })`)';

const PASS_A_SUBSCRIBER =
  'a second connection: with ioredis `redis.duplicate()`; with node-redis `client.duplicate()`, connected ' +
  '(`await subscriber.connect()`), or the cluster itself with `createCluster()`';

/** ioredis has `status` and `isCluster`; node-redis has `isOpen`, and its cluster `getSlotMaster`. */
function familyOf(value: unknown): Family | undefined {
  if (value === null || typeof value !== 'object') return undefined;
  const shape = value as Shape;
  if (typeof shape.status === 'string' && typeof shape.isCluster === 'boolean') return 'ioredis';
  if (typeof shape.isOpen === 'boolean')
    return typeof shape.getSlotMaster === 'function' ? 'node-redis cluster' : 'node-redis';
  return undefined;
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
 * The store's commands on `client`, or a TypeError that says what was passed and what to pass: something that is
 * no Redis client, a node-redis client that is not open or in `legacyMode`, a closed ioredis connection, a
 * connection in subscriber mode.
 */
export function commandsOf(client: unknown): RedisCommands {
  if (looksLikeRestClient(client)) {
    const problem = restClientProblem(client);
    if (problem) throw new TypeError(problem);
    const rest = restCommands(client as UpstashClientLike);
    return {
      eval: async (script, keys, args) => reply(await rest.eval(script, keys, args)),
      get: async (key) => text(await rest.get(key)),
    };
  }
  const family = familyOf(client);
  const shape = client as Shape;
  const usable =
    family === 'node-redis cluster'
      ? typeof shape.sendCommand === 'function'
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
    return ioredisCommands(client as IoredisClientLike);
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
    ? nodeRedisClusterCommands(client as NodeRedisClusterLike)
    : nodeRedisCommands(client as NodeRedisClientLike);
}

/**
 * The subscription on `subscriber`, or a TypeError that says what was passed and what to pass: something that is
 * no Redis connection, a node-redis connection that is not open, a closed ioredis connection, or the store's own
 * connection (a connection in subscriber mode can send no other command), except a node-redis cluster, which
 * subscribes through a connection of its own.
 */
export function subscriptionOf(subscriber: unknown, client: unknown): RedisSubscription {
  if (looksLikeRestClient(client)) throw new TypeError(REST_HAS_NO_PUBSUB);
  const family = familyOf(subscriber);
  const shape = subscriber as Shape;
  if (!family || typeof shape.subscribe !== 'function' || typeof shape.unsubscribe !== 'function') {
    throw new TypeError(`RedisTokenStore: \`subscriber\` must be ${PASS_A_SUBSCRIBER}; got ${described(subscriber)}.`);
  }
  if (subscriber === client && family !== 'node-redis cluster') {
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
    return ioredisSubscription(subscriber as IoredisSubscriberLike);
  }
  refuseClosed(shape, '`subscriber`', 'subscriber');
  return nodeRedisSubscription(subscriber as NodeRedisSubscriberLike);
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

function ioredisCommands(client: IoredisClientLike): RedisCommands {
  return {
    eval: async (script, keys, args) => reply(await client.eval(script, keys.length, ...keys, ...args)),
    get: async (key) => text(await client.get(key)),
  };
}

function nodeRedisCommands(client: NodeRedisClientLike): RedisCommands {
  return {
    // node-redis takes only strings (or Buffers) as arguments: a number is refused before it is sent.
    eval: async (script, keys, args) =>
      reply(await client.eval(script, { keys: [...keys], arguments: args.map(String) })),
    get: async (key) => text(await client.get(key)),
  };
}

function nodeRedisClusterCommands(cluster: NodeRedisClusterLike): RedisCommands {
  // Every key of a script is in one slot (the prefix's braces): the first routes it. Writes and reads alike go to the
  // master, where the lock's scripts write.
  return {
    eval: async (script, keys, args) =>
      reply(
        await cluster.sendCommand(keys[0]!, false, ['EVAL', script, String(keys.length), ...keys, ...args.map(String)]),
      ),
    get: async (key) => text(await cluster.sendCommand(key, false, ['GET', key])),
  };
}

function ioredisSubscription(subscriber: IoredisSubscriberLike): RedisSubscription {
  const channels = new Map<string, (message: string) => void>();
  // ioredis hands every channel's messages to every listener: one listener, while any channel is listened to, hands
  // each message to its channel's.
  const listener = (heard: string, message: unknown): void => channels.get(heard)?.(text(message) ?? '');
  const forget = (channel: string): void => {
    channels.delete(channel);
    if (channels.size === 0) subscriber.off('message', listener);
  };
  return {
    async listen(channel, onMessage) {
      if (channels.size === 0) subscriber.on('message', listener);
      channels.set(channel, onMessage);
      try {
        await subscriber.subscribe(channel);
      } catch (error) {
        if (channels.get(channel) === onMessage) forget(channel);
        throw error;
      }
    },
    async stop(channel) {
      if (!channels.has(channel)) return;
      forget(channel);
      await subscriber.unsubscribe(channel);
    },
  };
}

function nodeRedisSubscription(subscriber: NodeRedisSubscriberLike): RedisSubscription {
  const channels = new Map<string, NodeRedisListener>();
  return {
    async listen(channel, onMessage) {
      const listener: NodeRedisListener = (message) => onMessage(text(message) ?? '');
      channels.set(channel, listener);
      try {
        await subscriber.subscribe(channel, listener);
      } catch (error) {
        if (channels.get(channel) === listener) channels.delete(channel);
        throw error;
      }
    },
    async stop(channel) {
      const listener = channels.get(channel);
      if (!listener) return;
      channels.delete(channel);
      // Only this listener: another store on the same connection and channel goes on hearing.
      await subscriber.unsubscribe(channel, listener);
    },
  };
}

/** A text reply: a string, from a Buffer too (a client that returns them); null for none, whichever way it came. */
function text(value: unknown): string | null {
  if (value === null || value === undefined) return null;
  if (typeof value === 'string') return value;
  if (value instanceof Uint8Array) return new TextDecoder().decode(value);
  // A number or a boolean where text was expected (RESP3 has both); anything else as JSON, never "[object Object]",
  // which is also how a record @upstash/redis parsed as JSON (its `automaticDeserialization`) is given back.
  if (typeof value === 'number' || typeof value === 'bigint' || typeof value === 'boolean') return String(value);
  return JSON.stringify(value);
}

/** A script's reply as RESP2 and RESP3 both give it, in plain strings, numbers and arrays. */
function reply(value: unknown): RedisReply {
  if (Array.isArray(value)) return value.map(reply);
  if (typeof value === 'number') return value;
  if (typeof value === 'bigint') return Number(value);
  return text(value);
}
