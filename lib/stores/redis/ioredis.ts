// The adapter of ioredis (5 and 6: `Redis`, `Cluster`, and `Redis` with `sentinels`): a script's keys and arguments
// passed flat after their count, the connection that took a write reached again through the client (a `Cluster`'s
// connection to the master of the key's slot), and one listener for every channel's messages.
import type { IoredisClientLike, IoredisSubscriberLike } from './client-shapes.js';
import { replicated, reply, text } from './commands.js';
import type { RedisCommands, RedisSubscription } from './commands.js';
import { keySlot } from './replicas.js';
import type { RedisNode, ReplicaWaits } from './replicas.js';

export function ioredisCommands(client: IoredisClientLike, replicas: ReplicaWaits): RedisCommands {
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

export function ioredisSubscription(subscriber: IoredisSubscriberLike): RedisSubscription {
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
