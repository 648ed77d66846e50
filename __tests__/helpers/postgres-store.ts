// What the PostgresTokenStore's test files (postgres-store-*.test.ts) share: a real PostgreSQL server per file, with the
// table made once, and the file's own pool to look at and plant rows; a row key and an undo list per test; stores on
// pools of their own, as other processes would have; the lease of a row as the lock contract sees it.
import { Pool } from 'pg';
import { PostgresTokenStore } from '../../lib/stores/postgres/index.js';
import type { PostgresTokenStoreOptions } from '../../lib/stores/postgres/index.js';
import type { PostgresServer } from '../../harness/postgres-server.js';
import { escapeAccountName } from '../../lib/stores/common/account-key.js';
import { undoAfterEach } from './flow.js';
import { postgresServerForFile } from './postgres.js';
import { undoable } from './store-contract.js';
import type { LeaseRig } from './store-contract.js';

/** A pool of `url` whose connections' errors (a server restarted under them) are kept rather than thrown. */
export function poolOf(url: string, max = 2): { pool: Pool; errors: Error[] } {
  const pool = new Pool({ connectionString: url, max });
  const errors: Error[] = [];
  pool.on('error', (error) => errors.push(error));
  return { pool, errors };
}

/**
 * A server for the file (its table made before the first test), the file's pool, and per test: a row key, the undo
 * list, stores on pools of their own (each closed and ended after the test), and what they warned of.
 */
export function postgresStoreForFile(options: { settings?: Record<string, string> } = {}) {
  let filePool: Pool | undefined;
  // Registered before the server's hooks: jest runs a level's afterAll hooks in the order they were registered, so
  // the pool ends before the server stops.
  afterAll(async () => {
    await filePool?.end().catch(() => undefined);
  });
  const server = postgresServerForFile({ settings: { max_connections: '400', ...options.settings } });
  beforeAll(async () => {
    filePool = poolOf(server().url, 4).pool;
    await PostgresTokenStore.createSchema(filePool);
  });
  const undo = undoAfterEach();
  let serial = 0;
  let key = '';
  const warnings: string[] = [];
  beforeEach(() => {
    serial += 1;
    key = `account-${serial}-${process.pid}`;
    warnings.length = 0;
  });
  const pg = (): Pool => {
    if (!filePool) throw new Error('PostgreSQL did not start (see beforeAll).');
    return filePool;
  };
  /** A pool of its own, as another process's, ended after the test. */
  const pool = (max = 2): Pool => {
    const { pool: opened } = poolOf(server().url, max);
    undo.push(() => opened.end().catch(() => undefined));
    return opened;
  };
  /** A store of the test's row on a pool of its own, closed after the test; its warnings kept in `warnings`. */
  const store = (more: Partial<PostgresTokenStoreOptions> = {}, on: Pool = pool()): PostgresTokenStore => {
    const made = new PostgresTokenStore(on, { key, onWarning: (message) => warnings.push(message), ...more });
    undo.push(() => made.close());
    return made;
  };
  /** The row of `rowKey`, as the table has it now. */
  const row = async (rowKey = key): Promise<Record<string, unknown> | undefined> =>
    (await pg().query<Record<string, unknown>>('SELECT * FROM axios_token_keeper WHERE key = $1', [rowKey])).rows[0];
  /** The lease of row `rowKey()`, as the lock contract looks at it and plants it. */
  const leaseAt = (rowKey: () => string): LeaseRig => ({
    where: () => `row "${rowKey()}"`,
    owner: async () => ((await row(rowKey()))?.['lock_owner'] as string | null | undefined) ?? null,
    ttlLeft: async () => {
      const { rows } = await pg().query<{ left_ms: string }>(
        `SELECT extract(epoch FROM lock_expires_at - clock_timestamp()) * 1000 AS left_ms FROM axios_token_keeper WHERE key = $1`,
        [rowKey()],
      );
      return Number(rows[0]?.left_ms ?? -1);
    },
    plant: async (owner, holder) => {
      const ms = holder === 'live' ? 60_000 : 500;
      await pg().query(
        `INSERT INTO axios_token_keeper (key, fence, lock_owner, lock_expires_at, expires_at)
         VALUES ($1, 0, $2, clock_timestamp() + $3 * interval '1 millisecond', clock_timestamp() + interval '1 day')
         ON CONFLICT (key) DO UPDATE SET lock_owner = $2, lock_expires_at = clock_timestamp() + $3 * interval '1 millisecond'`,
        [rowKey(), owner, ms],
      );
      if (holder === 'live')
        undo.push(() => pg().query('UPDATE axios_token_keeper SET lock_owner = NULL WHERE key = $1', [rowKey()]));
    },
    lapse: async () => {
      await pg().query(
        `UPDATE axios_token_keeper SET lock_expires_at = clock_timestamp() - interval '1 millisecond' WHERE key = $1`,
        [rowKey()],
      );
    },
  });
  /** The row of account `name` of the test's key. */
  const accountKey = (name: string): string => `${key}#${escapeAccountName(name)}`;
  return {
    accountKey,
    server,
    pg,
    pool,
    store,
    row,
    leaseAt,
    undo,
    warnings,
    key: () => key,
    ...undoable(() => undo),
  };
}

export type { PostgresServer };
