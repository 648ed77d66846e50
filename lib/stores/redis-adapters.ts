// Each family of Redis client behind a small adapter that speaks the store's one vocabulary: `eval(script, keys,
// args)`, `write(…)` (a script, then the wait for a replica on the node that took it), `get(key)` and subscriptions
// to channels, with replies normalised. The families differ in how a script's keys and arguments are passed, in how the
// connection that ran a command is reached again, and in how a message reaches its listener; which family a client is,
// and the refusal of one the store cannot use, are redis-clients.ts'.
import { recogniseClient, recogniseSubscriber } from './redis-clients.js';
import type {
  IoredisClientLike,
  IoredisSubscriberLike,
  NodeRedisClientLike,
  NodeRedisClusterLike,
  NodeRedisListener,
  NodeRedisSentinelLike,
  NodeRedisSubscriberLike,
} from './redis-clients.js';
import { keySlot, ReplicaWaits } from './redis-replicas.js';
import { restCommands } from './redis-rest.js';
import type { UpstashClientLike } from './redis-rest.js';
import type { RedisNode } from './redis-replicas.js';

/** A reply as the store reads it, whatever the client and the protocol: no Buffer, no undefined, no bigint. */
export type RedisReply = string | number | null | RedisReply[];

/** The commands the store sends, in one vocabulary whatever the client. */
export interface RedisCommands {
  /** Runs `script` with its keys and arguments; the reply normalised. */
  eval(script: string, keys: readonly string[], args: readonly (string | number)[]): Promise<RedisReply>;
  /**
   * Runs `script`, a write that answers 1 when it wrote, as `eval` does; when it wrote, waits up to `waitMs` for a
   * replica of the node that took it to have it (see ReplicaWaits), on the same connection, before answering.
   */
  write(
    script: string,
    keys: readonly string[],
    args: readonly (string | number)[],
    waitMs: number,
  ): Promise<RedisReply>;
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

/**
 * The store's commands on `client`, each failure without what the client attaches to it (see {@link answerOf}); a
 * TypeError (see recogniseClient) for a client it cannot use.
 */
export function commandsOf(client: unknown): RedisCommands {
  const commands = familyCommands(client);
  return {
    eval: (script, keys, args) => answerOf(commands.eval(script, keys, args)),
    write: (script, keys, args, waitMs) => answerOf(commands.write(script, keys, args, waitMs)),
    get: (key) => answerOf(commands.get(key)),
  };
}

function familyCommands(client: unknown): RedisCommands {
  const recognised = recogniseClient(client);
  // One per client, shared by the accounts' stores: what each node has for replicas is the client's to know.
  const replicas = new ReplicaWaits();
  switch (recognised.family) {
    case 'ioredis':
      return ioredisCommands(recognised.client, replicas);
    case 'node-redis':
      return nodeRedisCommands(recognised.client, replicas);
    case 'node-redis cluster':
      return nodeRedisClusterCommands(recognised.client, replicas);
    case 'node-redis sentinel':
      return nodeRedisSentinelCommands(recognised.client, replicas);
    case 'upstash':
      return upstashCommands(recognised.client);
  }
}

/** The subscription on `subscriber`; a TypeError (see recogniseSubscriber) for one the store cannot use. */
export function subscriptionOf(subscriber: unknown, client: unknown): RedisSubscription {
  const recognised = recogniseSubscriber(subscriber, client);
  return recognised.family === 'ioredis'
    ? ioredisSubscription(recognised.subscriber)
    : nodeRedisSubscription(recognised.subscriber);
}

function ioredisCommands(client: IoredisClientLike, replicas: ReplicaWaits): RedisCommands {
  const evaluate = async (script: string, keys: readonly string[], args: readonly (string | number)[]) =>
    reply(await client.eval(script, keys.length, ...keys, ...args));
  return {
    eval: evaluate,
    write: async (script, keys, args, waitMs) =>
      replicated(await evaluate(script, keys, args), () => ioredisNode(client, keys[0]!), replicas, waitMs),
    get: async (key) => text(await client.get(key)),
  };
}

/**
 * The connection of an ioredis client that took a write on `key`: the `Redis` itself, or the `Cluster`'s connection to
 * the master of the key's slot, which the cluster's table names once the write is answered (a MOVED on the way updates
 * it). None when the client keeps these out of reach.
 */
function ioredisNode(client: IoredisClientLike, key: string): RedisNode | undefined {
  if (client.isCluster !== true) {
    const call = client.call?.bind(client);
    const { remoteAddress, remotePort } = client.stream ?? {};
    return (
      call && { id: `${remoteAddress}:${remotePort}`, send: async (args) => reply(await call(...ioredisArgs(args))) }
    );
  }
  const address = client.slots?.[keySlot(key)]?.[0];
  const node = client.nodes?.('all').find(({ options }) => `${options.host}:${options.port}` === address);
  return node && address
    ? { id: address, send: async (args) => reply(await node.call(...ioredisArgs(args))) }
    : undefined;
}

/** A command as ioredis' `call` takes it: its name first. */
function ioredisArgs(args: readonly string[]): [string, ...string[]] {
  return [args[0]!, ...args.slice(1)];
}

function nodeRedisCommands(client: NodeRedisClientLike, replicas: ReplicaWaits): RedisCommands {
  // node-redis takes only strings (or Buffers) as arguments: a number is refused before it is sent.
  const evaluate = async (script: string, keys: readonly string[], args: readonly (string | number)[]) =>
    reply(await client.eval(script, { keys: [...keys], arguments: args.map(String) }));
  // One client is one connection to one server, in order: the write's.
  const send = client.sendCommand?.bind(client);
  const node: RedisNode | undefined = send && { id: 'server', send: async (args) => reply(await send([...args])) };
  return {
    eval: evaluate,
    write: async (script, keys, args, waitMs) =>
      replicated(await evaluate(script, keys, args), () => node, replicas, waitMs),
    get: async (key) => text(await client.get(key)),
  };
}

function nodeRedisClusterCommands(cluster: NodeRedisClusterLike, replicas: ReplicaWaits): RedisCommands {
  // Every key of a script is in one slot (the prefix's braces): the first routes it. Writes and reads alike go to the
  // master, where the lock's scripts write.
  const evaluate = async (script: string, keys: readonly string[], args: readonly (string | number)[]) =>
    reply(
      await cluster.sendCommand(keys[0]!, false, ['EVAL', script, String(keys.length), ...keys, ...args.map(String)]),
    );
  // Routed by the key, a command goes to the slot's master on the connection the write took.
  const nodeOf = (key: string): RedisNode => ({
    id: cluster.getSlotMaster?.(keySlot(key))?.address ?? `slot ${keySlot(key)}`,
    send: async (args) => reply(await cluster.sendCommand(key, false, [...args])),
  });
  return {
    eval: evaluate,
    write: async (script, keys, args, waitMs) =>
      replicated(await evaluate(script, keys, args), () => nodeOf(keys[0]!), replicas, waitMs),
    get: async (key) => text(await cluster.sendCommand(key, false, ['GET', key])),
  };
}

function nodeRedisSentinelCommands(sentinel: NodeRedisSentinelLike, replicas: ReplicaWaits): RedisCommands {
  const scriptArgs = (script: string, keys: readonly string[], args: readonly (string | number)[]) => [
    'EVAL',
    script,
    String(keys.length),
    ...keys,
    ...args.map(String),
  ];
  return {
    eval: async (script, keys, args) => reply(await sentinel.sendCommand(false, scriptArgs(script, keys, args))),
    // The sentinel spreads commands over a pool of connections to the master: the write and its WAIT take one lease.
    write: (script, keys, args, waitMs) =>
      sentinel.use(async (lease) => {
        const master = sentinel.getMasterNode();
        const node: RedisNode = {
          id: master ? `${master.host}:${master.port}` : 'master',
          send: async (command) => reply(await lease.sendCommand(false, [...command])),
        };
        return replicated(
          reply(await lease.sendCommand(false, scriptArgs(script, keys, args))),
          () => node,
          replicas,
          waitMs,
        );
      }),
    get: async (key) => text(await sentinel.sendCommand(true, ['GET', key])),
  };
}

/** A write's reply, once a replica of the node that took it has it (or `waitMs` passed), when it wrote (1). */
async function replicated(
  answer: RedisReply,
  node: () => RedisNode | undefined,
  replicas: ReplicaWaits,
  waitMs: number,
): Promise<RedisReply> {
  const taken = answer === 1 || answer === '1' ? node() : undefined;
  if (taken) await replicas.after(taken, waitMs);
  return answer;
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

/**
 * @upstash/redis: each script by EVALSHA (see redis-rest.ts). A write does not wait for a replica: the REST endpoint
 * answers for its database, whose replication is Upstash's.
 */
function upstashCommands(client: UpstashClientLike): RedisCommands {
  const rest = restCommands(client);
  const evaluate = async (script: string, keys: readonly string[], args: readonly (string | number)[]) =>
    reply(await rest.eval(script, keys, args));
  return {
    eval: evaluate,
    write: (script, keys, args) => evaluate(script, keys, args),
    get: async (key) => text(await rest.get(key)),
  };
}

/** A text reply: a string, from a Buffer too (a client that returns them); null for none, whichever way it came. */
function text(value: unknown): string | null {
  if (value === null || value === undefined) return null;
  if (typeof value === 'string') return value;
  if (value instanceof Uint8Array) return UTF8.decode(value);
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

/** Decodes the byte replies: one decoder for them all. */
const UTF8 = new TextDecoder();

/** An integer reply, whether the client gave it as a number or as a string (ioredis' `stringNumbers`). */
export function integer(reply: RedisReply | undefined): number {
  return typeof reply === 'number' ? reply : Number(reply);
}

/**
 * A command's answer, or its error without what the client attaches to it: ioredis' `command.args` holds the record
 * written, tokens included. Only the message is kept, which no client fills with the arguments.
 */
async function answerOf<T>(reply: Promise<T>): Promise<T> {
  try {
    return await reply;
  } catch (error) {
    // eslint-disable-next-line preserve-caught-error -- no cause on purpose: its `command.args` hold tokens (above)
    throw new Error(`Redis: ${error instanceof Error ? error.message : String(error)}`);
  }
}
