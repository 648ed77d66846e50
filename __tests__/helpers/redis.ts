import { connect } from 'node:net';
import axios from 'axios';
import Redis from 'ioredis';
import { attachTokenAuth } from '../../lib/index.js';
import type { TokenAuth, TokenPair, TokenStore } from '../../lib/index.js';
import type { TokenServiceEmulator } from '../../lib/emulator/index.js';
import { requireRedisServer, startRedisServer } from '../../harness/redis-server.js';
import { startUpstashBridge } from '../../harness/upstash-rest.js';
import type { UpstashBridge } from '../../harness/upstash-rest.js';
import type { RedisServer } from '../../harness/redis-server.js';
import { E2E_PASSWORD, E2E_USER } from './emulator.js';

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
  let bridge: UpstashBridge | undefined;
  // Registered before the server's hooks, so that the bridge's connections quit while the server still answers: an
  // ioredis connection closed after its server keeps its process alive 2 s more (a worker jest then kills).
  afterAll(async () => {
    await bridge?.stop();
  });
  const { server, redis } = redisForFile();
  beforeAll(async () => {
    bridge = await startUpstashBridge({ redisUrl: server().url });
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

/**
 * A key prefix of its own for each test of the file that calls this, `<name>:<n>`, so that no test finds the keys of
 * another; n counts the file's tests.
 */
export function prefixPerTest(name: string): { prefix: () => string; serial: () => number } {
  let serial = 0;
  let prefix = '';
  beforeEach(() => {
    serial += 1;
    prefix = `${name}:${serial}`;
  });
  return { prefix: () => prefix, serial: () => serial };
}

/**
 * One request through the plugin on `service`, over `store`, while a full Redis (`maxmemory` 1) refuses every write:
 * going on alone after a short wait, the request is served, with the store's errors reported. What the plugin
 * reported (its failure events), the request's status and the tokens it ended with. `track` receives the handle to
 * eject after the test.
 */
export async function whileRedisRefusesWrites(
  redis: Redis,
  service: TokenServiceEmulator,
  store: TokenStore,
  track: (auth: TokenAuth) => void,
): Promise<{ failures: unknown[]; status: number; tokens: TokenPair | null }> {
  const api = axios.create({ baseURL: service.url });
  const auth = attachTokenAuth(api, {
    credentials: { username: E2E_USER, password: E2E_PASSWORD },
    store,
    whenStoreDown: 'go-alone',
    storeOutageWaitMs: 300,
  });
  track(auth);
  const failures: unknown[] = [];
  auth.on('failure', (event) => failures.push(event));
  await redis.config('SET', 'maxmemory', '1');
  let status: number;
  try {
    status = (await api.get('/orders')).status;
  } finally {
    await redis.config('SET', 'maxmemory', '0');
  }
  return { failures, status, tokens: await auth.getTokens() };
}

/**
 * The owners of the tries at the lock that the server at `port` runs from now on (its LOCK script, the one that takes
 * `KEYS[3]` with `SET … NX`; each `lock()` tries under an owner of its own), seen through MONITOR.
 */
export async function watchLockTries(port: number): Promise<{ owners: Set<string>; stop(): void }> {
  // A MONITOR connection of the test's own, on a plain socket: ioredis' monitor mode can take the first lines MONITOR
  // streams, when they come in the same packet as its OK, for replies to nothing, and throw (seen under load).
  const socket = connect(port, '127.0.0.1');
  // The server is killed soon after: what the watching connection says then is no part of the test.
  socket.on('error', () => undefined);
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve);
    socket.once('error', reject);
  });
  socket.write('MONITOR\r\n');
  const owners = new Set<string>();
  let pending = '';
  socket.on('data', (chunk: Buffer) => {
    const lines = (pending + chunk.toString('latin1')).split('\r\n');
    pending = lines.pop() ?? '';
    for (const line of lines) {
      // +<time> [<db> <client>] "EVAL" "<script>" "3" "<pair>" "<fence>" "<lock>" "<owner>" …
      const args = [...line.matchAll(/"((?:[^"\\]|\\.)*)"/g)].map((match) => match[1]!);
      if (args[0]?.toLowerCase() === 'eval' && args[1]?.includes("'SET', KEYS[3]") && args[6]) owners.add(args[6]);
    }
  });
  return { owners, stop: () => socket.destroy() };
}
