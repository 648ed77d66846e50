// The Redis clients RedisTokenStore takes, as their shapes: ioredis (5 and 6, `Redis`, `Cluster`, and `Redis` with
// `sentinels`) and node-redis (4 to 6, `createClient()` and `createCluster()`; 5 and 6, `createSentinel()`), and the
// connections it listens on. Neither library is imported: these are what the store uses of them. How a client is told
// apart, and refused, is clients.ts'; the REST client of serverless platforms, @upstash/redis, is rest.ts'.
import type { UpstashClientLike } from './rest.js';

/**
 * An ioredis `Redis` or `Cluster` (ioredis 5 or 6), as the store uses it; a `Redis` with `sentinels` too. It connects
 * by itself.
 */
export interface IoredisClientLike {
  /** `EVAL script numkeys key… arg…`. */
  eval(script: string, numkeys: number, ...args: (string | number)[]): Promise<unknown>;
  /** `GET`. */
  get(key: string): Promise<unknown>;
  /** The connection's state (`'wait'`, `'ready'`, `'end'`, …): a closed connection is refused. */
  readonly status: string;
  /** Tells a `Cluster` from a `Redis`. */
  readonly isCluster: boolean;
  /** Any command, on this connection: `INFO` and `WAIT` after a write, where the connection that took it is this one. */
  call?(command: string, ...args: string[]): Promise<unknown>;
  /** The socket of a `Redis`: the address of the server it reached (through Sentinel, the master of the moment). */
  readonly stream?: {
    /** The server's address. */
    readonly remoteAddress?: string | undefined;
    /** The server's port. */
    readonly remotePort?: number | undefined;
  };
  /** A `Cluster`'s connections to its nodes: the master that took a write is asked for its replicas, and waits. */
  nodes?(role: 'all'): IoredisNodeLike[];
  /** A `Cluster`'s table of the nodes (`host:port`) that serve each slot, the master first. */
  readonly slots?: ReadonlyArray<ReadonlyArray<string> | undefined>;
}

/** An ioredis `Cluster`'s connection to one node. */
export interface IoredisNodeLike {
  /** Sends one command to this node (`INFO replication`, `WAIT`). */
  call(command: string, ...args: string[]): Promise<unknown>;
  /** Where the node is, as the Cluster reached it. */
  readonly options: {
    /** The node's host. */
    readonly host?: string | undefined;
    /** The node's port. */
    readonly port?: number | undefined;
  };
}

/** A node-redis client (node-redis 4, 5 or 6, RESP2 or RESP3), connected (`await client.connect()`). */
export interface NodeRedisClientLike {
  /** `EVAL`, with the keys and the arguments apart. */
  eval(script: string, options: { keys: string[]; arguments: string[] }): Promise<unknown>;
  /** `GET`. */
  get(key: string): Promise<unknown>;
  /** Whether `connect()` was called and the client not closed since: a client that is not open is refused. */
  readonly isOpen: boolean;
  /** Any command: `INFO` and `WAIT` after a write. */
  sendCommand?(args: string[]): Promise<unknown>;
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
  /** The master of a slot: its address names the node that took a write. */
  getSlotMaster?(slot: number):
    | {
        /** The master's address (host and port). */
        readonly address?: string;
      }
    | undefined;
}

/**
 * A node-redis sentinel (node-redis 5 or 6, `createSentinel({ name, sentinelRootNodes })`), connected (`await
 * sentinel.connect()`): it sends the commands to the master of the moment, and subscribes through a connection of its
 * own, so it is its own subscriber.
 */
export interface NodeRedisSentinelLike {
  /** A command, sent to the master. */
  sendCommand(isReadonly: boolean | undefined, args: string[]): Promise<unknown>;
  /** Lends one connection to the master for several commands: a write and the wait for its replica go on one. */
  use<T>(run: (lease: NodeRedisSentinelLease) => Promise<T>): Promise<T>;
  /** The master of the moment, which names the node that took a write. */
  getMasterNode():
    | {
        /** The master's host. */
        readonly host: string;
        /** The master's port. */
        readonly port: number;
      }
    | undefined;
  /** The sentinel it asks: how it is told from a node-redis client. */
  getSentinelNode(): unknown;
  /** Whether `connect()` was called and the sentinel not closed since: a sentinel that is not open is refused. */
  readonly isOpen: boolean;
}

/** One connection to the master that a node-redis sentinel lends (`sentinel.use()`). */
export interface NodeRedisSentinelLease {
  /** Sends one command on the leased connection. */
  sendCommand(isReadonly: boolean | undefined, args: string[]): Promise<unknown>;
}

/** The client the store sends its commands on: ioredis' or node-redis'. */
export type RedisClientLike =
  IoredisClientLike | NodeRedisClientLike | NodeRedisClusterLike | NodeRedisSentinelLike | UpstashClientLike;

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
