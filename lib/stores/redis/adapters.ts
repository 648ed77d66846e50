// Each family of Redis client behind a small adapter that speaks the store's one vocabulary (commands.ts):
// `eval(script, keys, args)`, `write(…)` (a script, then the wait for a replica on the node that took it), `get(key)`
// and subscriptions to channels, with replies normalised. The families differ in how a script's keys and arguments are
// passed, in how the connection that ran a command is reached again, and in how a message reaches its listener: each
// family's adapter is in a file of its own (ioredis.ts, node-redis.ts, rest.ts). Which family a client is, and the
// refusal of one the store cannot use, are clients.ts'.
import { recogniseClient, recogniseSubscriber } from './clients.js';
import type { RedisCommands, RedisSubscription } from './commands.js';
import { ioredisCommands, ioredisSubscription } from './ioredis.js';
import {
  nodeRedisClusterCommands,
  nodeRedisCommands,
  nodeRedisSentinelCommands,
  nodeRedisSubscription,
} from './node-redis.js';
import { ReplicaWaits } from './replicas.js';
import { upstashCommands } from './rest.js';

/** The vocabulary, importable from here too, where it was first. */
export { integer } from './commands.js';
export type { RedisCommands, RedisReply, RedisSubscription } from './commands.js';

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
