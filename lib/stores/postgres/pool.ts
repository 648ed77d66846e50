// The pool the app gives PostgresTokenStore, as its shape (pg is not imported: it stays an optional peer), the check
// that refuses at construction what the store cannot work with, and the one way the store sends a statement: through
// the pool, its errors said in the store's words, without what pg adds of the row (a token could be in it).
import { shown } from '../common/options.js';

/** What a statement gives back: its rows. */
export interface PgResultLike {
  /** The rows, each by its columns' names. */
  rows: Record<string, unknown>[];
}

/** A connection of pg's (`pg.Client`), as the store's listening connection uses it. */
export interface PgClientLike {
  /** Opens the connection. */
  connect(): Promise<unknown>;
  /** Runs a statement on it (`LISTEN`). */
  query(text: string, values?: unknown[]): Promise<PgResultLike>;
  /** Closes it. */
  end(): Promise<unknown>;
  /** A notification on a channel it listens to. */
  on(event: 'notification', listener: (message: { channel: string; payload?: string }) => void): unknown;
  /** The connection failed, or ended. */
  on(event: 'error' | 'end', listener: (error?: Error) => void): unknown;
}

/** The class of a pool's connections (`pg.Client`). */
export type PgClientClass = new (options?: object) => PgClientLike;

/** A pool of pg's (`new pg.Pool(...)`), as the store uses it. */
export interface PgPoolLike {
  /** Runs one statement on a connection of the pool, which it holds for that statement alone. */
  query(text: string, values?: unknown[]): Promise<PgResultLike>;
  /** The pool's connections, open or opening: pg-pool keeps the count. */
  readonly totalCount: number;
  /** The pool's settings: the store opens its listening connection with them. */
  readonly options?: object;
  /** The class of the pool's connections: the store's listening connection is one, outside the pool. */
  readonly Client?: PgClientClass;
  /** `pool.end()` was called: the store refuses such a pool. */
  readonly ending?: boolean;
  /** The pool has ended. */
  readonly ended?: boolean;
  /** The listeners of an event: the store warns when `'error'` has none. */
  listenerCount?(event: string): number;
}

/**
 * Refuses, saying what to pass instead, what is no pool of pg's: no `query`, a `pg.Client` (one connection, which the
 * lock's statements and every holder's reads would queue on), a pool being ended.
 */
export function checkPool(pool: unknown): asserts pool is PgPoolLike {
  const given = pool as Partial<PgPoolLike> | null | undefined;
  if (given === null || typeof given !== 'object' || typeof given.query !== 'function') {
    throw new TypeError(
      `PostgresTokenStore: the first argument must be a pool of pg's, such as new Pool({ connectionString }) from ` +
        `'pg'; got ${given === null || typeof given !== 'object' ? shown(given) : 'an object without query()'}.`,
    );
  }
  if (typeof given.totalCount !== 'number') {
    throw new TypeError(
      'PostgresTokenStore: give it a pool (new Pool() from pg), not one connection (new Client()): the store sends ' +
        "each statement through the pool, so that a holder's read never waits behind another's lock.",
    );
  }
  if (given.ending === true || given.ended === true) {
    throw new TypeError('PostgresTokenStore: the pool was ended (pool.end()): give the store a pool that is open.');
  }
}

/** The plugin's default `storeTimeoutMs`, until a lock request says the one it has. */
const DEFAULT_CALL_BOUND_MS = 5_000;

/** The SQLSTATE of a table that does not exist, and of a column that does not. */
const UNDEFINED_TABLE = '42P01';
const UNDEFINED_COLUMN = '42703';

/**
 * An error of the connection rather than of the statement: the server ended it (57P01 an administrator's shutdown,
 * 57P02 a crash, 57P03 not accepting connections yet, 08… a connection exception), it ended under pg ("Connection
 * terminated"), or none could be opened.
 */
function connectionLost(caught: unknown): boolean {
  const { code, message } = (caught ?? {}) as { code?: unknown; message?: unknown };
  if (typeof code === 'string' && (code.startsWith('57P') || code.startsWith('08'))) return true;
  if (typeof message === 'string' && /^Connection terminated|^Client has encountered a connection error/.test(message))
    return true;
  // The server not there at all: refused, or reset while connecting.
  return typeof code === 'string' && ['ECONNREFUSED', 'ECONNRESET', 'EPIPE'].includes(code);
}

/** The pool, with each statement's failure said in the store's words. */
export class Queries {
  /**
   * @param table The table as the options give it, which a message names.
   * @param migration What to run when the table is missing or of another shape, as a message says it.
   */
  constructor(
    private readonly pool: PgPoolLike,
    private readonly table: string,
    private readonly migration: string,
  ) {}

  /** How long the plugin lets one store call take (its `storeTimeoutMs`), as its lock requests say. */
  private callBoundMs = DEFAULT_CALL_BOUND_MS;

  /** The plugin's bound on one store call, as a lock request gives it (`tryTimeoutMs`); none keeps the last one. */
  bound(callBoundMs: number | undefined): void {
    this.callBoundMs = callBoundMs ?? this.callBoundMs;
  }

  /**
   * The rows of `text` run with `values`; `what` names it in an error ("the lock's try"). A statement that meets a
   * connection the server ended (a restart, a crash, a failover) is sent again, on another connection, after 0, 100,
   * 200, 400 … ms, for as long as the plugin lets one store call take: a holder's write after its token call lands
   * once the server (or the promoted standby) answers, rather than leave the older pair, whose refresh token it spent.
   * Every statement of the store may run twice: a lock try by the same owner is granted again, a write under the same
   * fence lands again, a release or an extension by the same owner does what it did.
   */
  async run(what: string, text: string, values: unknown[]): Promise<Record<string, unknown>[]> {
    const until = Date.now() + this.callBoundMs;
    for (let wait = 0; ; wait = Math.max(100, wait * 2)) {
      try {
        return (await this.pool.query(text, values)).rows;
      } catch (caught) {
        if (!connectionLost(caught) || Date.now() + wait > until) throw this.failure(what, caught);
      }
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    }
  }

  /**
   * The error of a failed statement: for a missing table or column, the statement to run; for any other, pg's message
   * and code alone. pg's `detail` may show the row a statement failed on, tokens and all: it is left out.
   */
  private failure(what: string, caught: unknown): Error {
    const { code, message } = (caught ?? {}) as { code?: unknown; message?: unknown };
    if (code === UNDEFINED_TABLE || code === UNDEFINED_COLUMN) {
      const missing = code === UNDEFINED_TABLE ? 'does not exist' : 'lacks a column this version needs';
      return Object.assign(
        new Error(
          `PostgresTokenStore: the table ${this.table} ${missing} (${String(message)}): create it once with ` +
            `\`await PostgresTokenStore.createSchema(pool${this.table === 'axios_token_keeper' ? '' : `, { table: '${this.table}' }`})\`, ` +
            `or run this migration (docs/stores.md):\n${this.migration}`,
        ),
        { code },
      );
    }
    return Object.assign(new Error(`PostgresTokenStore: ${what} failed: ${String(message ?? caught)}`), {
      ...(typeof code === 'string' && { code }),
    });
  }
}
