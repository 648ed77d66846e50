import Redis from 'ioredis';
import { requireRedisServer, startRedisServer } from '../../harness/redis-server.js';
import { startUpstashBridge } from '../../harness/upstash-rest.js';
import type { UpstashBridge } from '../../harness/upstash-rest.js';
import type { RedisServer } from '../../harness/redis-server.js';

/**
 * A real redis-server for the test file that calls this (at its top level): started before its tests, stopped after
 * them. Without redis-server the file fails here, once, with the command that installs it.
 */
export function redisServerForFile(): () => RedisServer {
  requireRedisServer();
  let server: RedisServer | undefined;
  beforeAll(async () => {
    server = await startRedisServer();
  });
  // A server that did not start fails beforeAll for every test; this hook adds no error of its own to that.
  afterAll(async () => {
    await server?.stop();
  });
  return () => {
    if (!server) throw new Error('redis-server did not start (see beforeAll).');
    return server;
  };
}

/**
 * {@link redisServerForFile}'s server and the test file's own ioredis connection to it, to look at and plant keys
 * whatever client the tests use: opened before the file's tests, quit after them, before the server stops.
 */
export function redisForFile(): { server: () => RedisServer; redis: () => Redis } {
  let connection: Redis | undefined;
  // Registered before the server's hooks: jest runs the afterAll hooks of a level in the order they were registered.
  afterAll(async () => {
    await connection?.quit();
  });
  const server = redisServerForFile();
  beforeAll(() => {
    connection = new Redis(server().url);
  });
  return {
    server,
    redis: () => {
      if (!connection) throw new Error('redis-server did not start (see beforeAll).');
      return connection;
    },
  };
}

/**
 * {@link redisForFile}'s server and connection, and a bridge of Upstash's REST protocol to that server (what an
 * @upstash/redis client talks to): started before the file's tests, stopped after them.
 */
export function upstashBridgeForFile(): {
  server: () => RedisServer;
  redis: () => Redis;
  bridge: () => UpstashBridge;
} {
  const { server, redis } = redisForFile();
  let bridge: UpstashBridge | undefined;
  beforeAll(async () => {
    bridge = await startUpstashBridge({ redisUrl: server().url });
  });
  afterAll(async () => {
    await bridge?.stop();
  });
  return {
    server,
    redis,
    bridge: () => {
      if (!bridge) throw new Error('the Upstash bridge did not start (see beforeAll).');
      return bridge;
    },
  };
}
