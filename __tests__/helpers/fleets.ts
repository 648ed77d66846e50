import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FleetPool } from '../../harness/fleet.js';
import type { Fleet, FleetOptions, FleetStoreConfig } from '../../harness/fleet.js';
import { redisServerForFile } from './redis.js';

/** What a test file of fleets uses: fleets stopped after each test, and a store of its own for each test. */
export interface FleetsForFile {
  readonly start: (options: FleetOptions) => Promise<Fleet>;
  /** A Redis store on the file's redis-server under keys of its own, so that no pair of an earlier test is loaded. */
  readonly redisStore: (pubsub: boolean) => Promise<FleetStoreConfig>;
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
    redisStore: (pubsub) =>
      Promise.resolve({ kind: 'redis', url: server().url, prefix: `${name}:${randomUUID()}`, pubsub }),
    fileStore: async () => {
      const directory = await mkdtemp(join(tmpdir(), `token-keeper-${name}-`));
      directories.push(directory);
      return { kind: 'file', path: join(directory, 'tokens.json') };
    },
  };
}
