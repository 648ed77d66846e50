// The table of PostgresTokenStore as the app makes and tends it: createSchema(), the migration a missing table's error
// gives, and deleteExpired(). The statements themselves are statements.ts'.
import { checkPool } from './pool.js';
import type { PgPoolLike } from './pool.js';
import { quoted, resolvePostgresOptions } from './options.js';
import { deleteExpiredStatement, schemaStatements } from './statements.js';

/** The options of createSchema and deleteExpired: the table, as the store's. */
export interface PostgresTableOptions {
  /** @default 'axios_token_keeper' */
  table?: string;
}

/** The table `table` (as the options take it), checked. */
function tableOf(options: PostgresTableOptions): string {
  const { table } = options;
  return resolvePostgresOptions({ key: 'table', ...(table !== undefined && { table }) }).options.table;
}

/** The statements that make `table` and its index, as the migration docs/stores.md shows. */
export function migrationOf(table: string): string {
  return `${schemaStatements(quoted(table), indexOf(table)).join(';\n')};`;
}

/** See PostgresTokenStore.createSchema. */
export async function createSchema(pool: PgPoolLike, options: PostgresTableOptions): Promise<void> {
  checkPool(pool);
  const table = tableOf(options);
  for (const statement of schemaStatements(quoted(table), indexOf(table))) {
    try {
      await pool.query(statement);
    } catch (error) {
      // Two processes that create it at once: one gets a duplicate (42P07, or 23505 on the catalog's own index), and
      // the statement, run again, finds it there.
      const { code } = error as { code?: unknown };
      if (code !== '42P07' && code !== '23505') throw error;
      await pool.query(statement);
    }
  }
}

/** See PostgresTokenStore.deleteExpired. */
export async function deleteExpired(
  pool: PgPoolLike,
  options: PostgresTableOptions & { graceMs?: number },
): Promise<number> {
  checkPool(pool);
  const result = (await pool.query(deleteExpiredStatement(quoted(tableOf(options))), [options.graceMs ?? 0])) as {
    rowCount?: number | null;
  };
  return result.rowCount ?? 0;
}

/** The index of the table's expiry: one name per table. */
function indexOf(table: string): string {
  return `"${table.replace(/\./g, '_')}_expires_at"`;
}
