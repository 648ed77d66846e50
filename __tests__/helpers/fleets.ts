import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FleetPool } from '../../harness/fleet.js';
import { connectionNameOf } from '../../harness/fleet.js';
import type {
  BurstOptions,
  BurstReply,
  Fleet,
  FleetAccount,
  FleetOptions,
  FleetStoreConfig,
} from '../../harness/fleet.js';
import { withConnection } from '../../harness/redis-server.js';
import type { RedisServer } from '../../harness/redis-server.js';
import type { TokenServiceEmulator } from '../../lib/emulator/index.js';
import type { RedisClientChoice } from '../../harness/redis-clients.js';
import { redisServerForFile } from './redis.js';

/**
 * A pool of fleets for the test file that calls this (at its top level), stopped after each test: a worker that
 * crashed, even in a passing test, fails it with the worker's output.
 */
export function fleetPoolForFile(): FleetPool {
  const fleets = new FleetPool();
  afterEach(() => fleets.stopAll());
  return fleets;
}

/** A redis-server for the file (started once; see helpers/redis.ts), and {@link fleetPoolForFile}'s pool of fleets. */
export function fleetsOnRedisForFile(): { server: () => RedisServer; fleets: FleetPool } {
  const server = redisServerForFile();
  return { server, fleets: fleetPoolForFile() };
}

/** What a test file of fleets uses: fleets stopped after each test, and a store of its own for each test. */
export interface FleetsForFile {
  readonly start: (options: FleetOptions) => Promise<Fleet>;
  /**
   * A Redis store on the file's redis-server under keys of its own, so that no pair of an earlier test is loaded;
   * the workers open `driver`'s client (ioredis 5 unless told).
   */
  readonly redisStore: (pubsub: boolean, driver?: RedisClientChoice) => Promise<FleetStoreConfig>;
  /** A token file in a directory of its own, removed after the test. */
  readonly fileStore: () => Promise<FleetStoreConfig>;
}

/**
 * A redis-server for the file (started once; see helpers/redis.ts) and the fleets of its tests, stopped after each
 * test: a worker that crashed, even in a passing test, fails it with the worker's output.
 */
export function fleetsForFile(name: string): FleetsForFile {
  const server = redisServerForFile();
  const fleets = new FleetPool();
  const directories: string[] = [];
  afterEach(async () => {
    try {
      await fleets.stopAll();
    } finally {
      await Promise.all(directories.splice(0).map((directory) => rm(directory, { recursive: true, force: true })));
    }
  });
  return {
    start: (options) => fleets.start(options),
    redisStore: (pubsub, driver) =>
      Promise.resolve({
        kind: 'redis',
        url: server().url,
        prefix: `${name}:${randomUUID()}`,
        pubsub,
        ...(driver && { driver }),
      }),
    fileStore: async () => {
      const directory = await mkdtemp(join(tmpdir(), `token-keeper-${name}-`));
      directories.push(directory);
      return { kind: 'file', path: join(directory, 'tokens.json') };
    },
  };
}

/**
 * A fleet's round, then one after each of `expiries` expiries of the access tokens: bursts of `n` requests from every
 * process (with `burst`'s options: its accounts), and `count()` read after each round (the refreshes, the token calls)
 * to say when the renewals happened.
 */
export async function roundsOverExpiries(
  fleet: Fleet,
  service: TokenServiceEmulator,
  { n, expiries, count, burst = {} }: { n: number; expiries: number; count: () => number; burst?: BurstOptions },
): Promise<{ rounds: BurstReply[][]; countAfterRound: number[] }> {
  const rounds = [await fleet.burst(n, burst)];
  const countAfterRound = [count()];
  for (let expiry = 1; expiry <= expiries; expiry += 1) {
    service.expireAccessTokens();
    rounds.push(await fleet.burst(n, burst));
    countAfterRound.push(count());
  }
  return { rounds, countAfterRound };
}

/**
 * Named accounts for a fleet, each its own user at the emulator (`user-1`, …), with names that carry a key's
 * separator, a hash tag, a path out of a directory, a space, `#`, `%` and non-ASCII.
 */
export function fleetAccounts(count: number): {
  accounts: Record<string, FleetAccount>;
  users: Record<string, string>;
  userOf: Record<string, string>;
} {
  const names = ['tenant:1', '{tenant-2}', '../a/b.lock', 'jane doe@example.com', 'ünï#5 %3A', 'x'.repeat(250) + '🙂'];
  while (names.length < count) names.push(`tenant:${names.length + 1}`);
  const accounts: Record<string, FleetAccount> = {};
  const users: Record<string, string> = {};
  const userOf: Record<string, string> = {};
  names.slice(0, count).forEach((name, index) => {
    const username = `user-${index + 1}`;
    accounts[name] = { username, password: `pw-${index + 1}-${username.length}x` };
    users[username] = accounts[name].password;
    userOf[name] = username;
  });
  return { accounts, users, userOf };
}

/** Successful logins per username, from the Basic header each login call carried. */
export function loginsByUser(service: TokenServiceEmulator): Record<string, number> {
  const logins: Record<string, number> = {};
  for (const call of service.calls.filter((entry) => entry.route === 'login')) {
    const basic = Buffer.from(call.authorization?.replace(/^Basic /, '') ?? '', 'base64').toString('utf8');
    const user = basic.slice(0, basic.indexOf(':'));
    logins[user] = (logins[user] ?? 0) + 1;
  }
  return logins;
}

/**
 * How many connections each worker of the fleet holds on the Redis servers at `ports`, by the name it gave them
 * (`nameConnections`), summed over the servers: `CLIENT LIST`.
 */
export async function connectionsPerWorker(fleet: Fleet, ports: readonly number[]): Promise<number[]> {
  const lists = await Promise.all(ports.map((port) => withConnection(port, (client) => client.client('LIST'))));
  const lines = lists.flatMap((list) => String(list).split('\n'));
  return fleet.workers.map(
    (worker) => lines.filter((line) => line.includes(` name=${connectionNameOf(worker.pid!)} `)).length,
  );
}
