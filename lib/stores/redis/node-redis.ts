// The adapters of node-redis (4 to 6): a client (`createClient()`), a cluster (`createCluster()`, each command routed
// by its first key), a sentinel (`createSentinel()`, a write and its wait on one leased connection); the arguments
// all strings, and a listener per channel.
import type {
  NodeRedisClientLike,
  NodeRedisClusterLike,
  NodeRedisListener,
  NodeRedisSentinelLike,
  NodeRedisSubscriberLike,
} from './client-shapes.js';
import { replicated, reply, text } from './commands.js';
import type { RedisCommands, RedisSubscription } from './commands.js';
import { keySlot } from './replicas.js';
import type { RedisNode, ReplicaWaits } from './replicas.js';

export function nodeRedisCommands(client: NodeRedisClientLike, replicas: ReplicaWaits): RedisCommands {
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

export function nodeRedisClusterCommands(cluster: NodeRedisClusterLike, replicas: ReplicaWaits): RedisCommands {
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

export function nodeRedisSentinelCommands(sentinel: NodeRedisSentinelLike, replicas: ReplicaWaits): RedisCommands {
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

export function nodeRedisSubscription(subscriber: NodeRedisSubscriberLike): RedisSubscription {
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
