// The statements of PostgresTokenStore: each one statement, so that it runs as one step on whichever pooled connection
// the pool gives, and holds none of them past its end: the lock is a lease written in the account's row, never a
// session's advisory lock. The table's schema is here too, as the migration docs/stores.md shows.
//
// Times are the server's (`clock_timestamp()`), as Redis' PX is Redis' own: the holders' clocks may differ. A row
// whose `expires_at` has passed is read as no pair: the account went unused for `keyTtlMs`.

/** The schema, one table for every account: `table` as the statements name it. */
export function schemaStatements(table: string, indexName: string): string[] {
  return [
    `CREATE TABLE IF NOT EXISTS ${table} (
  key text PRIMARY KEY,
  fence bigint NOT NULL DEFAULT 0,
  pair text,
  account text,
  account_expires_at timestamptz,
  lock_owner text,
  lock_expires_at timestamptz,
  expires_at timestamptz NOT NULL
)`,
    `CREATE INDEX IF NOT EXISTS ${indexName} ON ${table} (expires_at)`,
  ];
}

/** `ms` milliseconds from the server's now: `$n` a number of milliseconds. */
const after = (parameter: string): string =>
  `clock_timestamp() + ${parameter}::double precision * interval '1 millisecond'`;

/** The statements of one table, whose news go out on `channel`. */
export interface Statements {
  /**
   * $1 key, $2 owner, $3 lease (ms), $4 the row's life (ms): the lock, with a fence one past every fence granted or
   * written on the row (granted again to the same owner: a try sent twice across a lost connection); or, refused, how long the lease has left and the pair now, so that a waiter learns of a new
   * pair without another statement. One row: `granted` (the fence, or null), `lease_left_ms`, `pair`.
   */
  lock: string;
  /** $1 key, $2 owner, $3 lease (ms): the lease extended while it is this owner's; a row when it was. */
  extend: string;
  /** $1 key, $2 owner, $3 channel: the lock let go while it is this owner's, and `released` told; a row when it was. */
  release: string;
  /**
   * $1 key, $2 the pair's record (null: none), $3 the writer's fence (null: none), $4 the row's life (ms), $5 channel:
   * the pair written, unless a later lock was granted than the writer's fence, and `changed` told; a row when written.
   */
  write: string;
  /**
   * $1 key, $2 the account's record, $3 the writer's fence, $4 how long it says anything (ms; 0: none), $5 the row's
   * life (ms), $6 channel, $7 whether to tell `account` (it pauses logins): as `write`, for the account's record.
   */
  writeAccount: string;
  /** $1 key: the pair's record, or no row. */
  read: string;
  /** $1 key: the account's record while it says anything, or no row. */
  readAccount: string;
  /** $1 keys: each row's pair, whether its lock is held, and its account's record: what polling compares. */
  poll: string;
}

export function statementsOf(table: string): Statements {
  const live = `expires_at > clock_timestamp()`;
  return {
    lock: `WITH taken AS (
  INSERT INTO ${table} AS row (key, fence, lock_owner, lock_expires_at, expires_at)
  VALUES ($1, 1, $2, ${after('$3')}, ${after('$4')})
  ON CONFLICT (key) DO UPDATE SET fence = row.fence + 1, lock_owner = excluded.lock_owner,
    lock_expires_at = excluded.lock_expires_at, expires_at = greatest(row.expires_at, excluded.expires_at)
  WHERE row.lock_owner IS NULL OR row.lock_expires_at <= clock_timestamp() OR row.lock_owner = $2
  RETURNING row.fence
)
SELECT (SELECT fence FROM taken) AS granted,
  (SELECT greatest(0, ceil(extract(epoch FROM lock_expires_at - clock_timestamp()) * 1000))::bigint
    FROM ${table} WHERE key = $1) AS lease_left_ms,
  (SELECT pair FROM ${table} WHERE key = $1 AND ${live}) AS pair`,
    extend: `UPDATE ${table} SET lock_expires_at = ${after('$3')} WHERE key = $1 AND lock_owner = $2 RETURNING 1`,
    release: `WITH freed AS (
  UPDATE ${table} SET lock_owner = NULL, lock_expires_at = NULL WHERE key = $1 AND lock_owner = $2 RETURNING key
)
SELECT pg_notify($3, 'released ' || key) FROM freed`,
    write: `WITH written AS (
  INSERT INTO ${table} AS row (key, fence, pair, expires_at) VALUES ($1, coalesce($3::bigint, 0), $2, ${after('$4')})
  ON CONFLICT (key) DO UPDATE SET pair = excluded.pair, fence = greatest(row.fence, excluded.fence),
    expires_at = greatest(row.expires_at, excluded.expires_at)
  WHERE $3::bigint IS NULL OR $3::bigint >= row.fence
  RETURNING row.key
)
SELECT pg_notify($5, 'changed ' || key) FROM written`,
    writeAccount: `WITH written AS (
  INSERT INTO ${table} AS row (key, fence, account, account_expires_at, expires_at)
  VALUES ($1, coalesce($3::bigint, 0), CASE WHEN $4::double precision > 0 THEN $2::text END, ${after('$4')},
    greatest(${after('$4')}, ${after('$5')}))
  ON CONFLICT (key) DO UPDATE SET account = excluded.account, account_expires_at = excluded.account_expires_at,
    expires_at = greatest(row.expires_at, excluded.account_expires_at)
  WHERE $3::bigint IS NULL OR $3::bigint >= row.fence
  RETURNING row.key
)
SELECT CASE WHEN $7::boolean THEN pg_notify($6, 'account ' || key) END FROM written`,
    read: `SELECT pair FROM ${table} WHERE key = $1 AND ${live}`,
    readAccount: `SELECT account FROM ${table} WHERE key = $1 AND account_expires_at > clock_timestamp()`,
    poll: `SELECT key, CASE WHEN ${live} THEN pair END AS pair,
  coalesce(lock_owner IS NOT NULL AND lock_expires_at > clock_timestamp(), false) AS locked,
  CASE WHEN account_expires_at > clock_timestamp() THEN account END AS account
FROM ${table} WHERE key = ANY($1::text[])`,
  };
}

/** Removes the rows that expired (and hold no lock): $1 how long past their expiry (ms). */
export function deleteExpiredStatement(table: string): string {
  return `DELETE FROM ${table} WHERE expires_at < clock_timestamp() - $1::double precision * interval '1 millisecond'
  AND (lock_expires_at IS NULL OR lock_expires_at < clock_timestamp())`;
}
