import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FleetPool } from '../../harness/fleet.js';
import type { BurstReply, Fleet, FleetOptions, FleetStoreConfig } from '../../harness/fleet.js';
import type { TokenServiceEmulator } from '../../lib/emulator/index.js';
import type { RedisClientChoice } from '../../harness/redis-clients.js';
import { redisServerForFile } from './redis.js';

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
 * process, and `count()` read after each round (the refreshes, the token calls) to say when the renewals happened.
 */
export async function roundsOverExpiries(
  fleet: Fleet,
  service: TokenServiceEmulator,
  { n, expiries, count }: { n: number; expiries: number; count: () => number },
): Promise<{ rounds: BurstReply[][]; countAfterRound: number[] }> {
  const rounds = [await fleet.burst(n)];
  const countAfterRound = [count()];
  for (let expiry = 1; expiry <= expiries; expiry += 1) {
    service.expireAccessTokens();
    rounds.push(await fleet.burst(n));
    countAfterRound.push(count());
  }
  return { rounds, countAfterRound };
}
