// PostgresTokenStore itself; index.ts is the entry `axios-token-keeper/postgres-store`, with the public types it shows.
import type {
  AccountRecord,
  TokenPair,
  TokenStore,
  TokenStoreLock,
  TokenStoreLockRequest,
} from '../../contract/store.js';
import { parseAccountRecord, pausesLogins } from '../common/account-record.js';
import { isPair, parseRecord } from '../common/record.js';
import { Announcer } from '../common/announcer.js';
import { checkAccountName, checkAccountsRoot, escapeAccountName } from '../common/account-key.js';
import { SealedRecords } from '../sealing/records.js';
import type { Sealer } from '../sealing/records.js';
import { sealerOf } from '../sealing/platform.js';
import { checkKeyLength, quoted, resolvePostgresOptions } from './options.js';
import type { PostgresTokenStoreOptions, ResolvedPostgresOptions } from './options.js';
import { checkPool, Queries } from './pool.js';
import type { PgPoolLike } from './pool.js';
import { statementsOf } from './statements.js';
import { createSchema, deleteExpired, migrationOf } from './schema.js';
import type { PostgresTableOptions } from './schema.js';
import type { Statements } from './statements.js';
import { PostgresLock } from './lock.js';
import { PostgresNews } from './news.js';
import type { RowListener } from './news.js';

/** Where forAccount hands the new store what it shares with its parent: a symbol, so that no option of yours is it. */
const PARENT = Symbol('the store an account is of');

/** The options of a named account's store: its parent's, and what it shares with it. */
interface AccountStoreOptions extends PostgresTokenStoreOptions {
  [PARENT]?: { news: PostgresNews; sealer: Sealer | undefined };
}

/**
 * Keeps the pair in a PostgreSQL table, for processes on any number of hosts that share a database and no Redis. One
 * process renews at a time under a lock kept as a lease in the account's row (an owner, an expiry and a fence, taken,
 * extended and let go by single statements, so that no pooled connection is held between them), and the others take
 * its pair without calling the service. The holders hear of a new pair by LISTEN on one connection of the store's own,
 * or by polling where that hears nothing (behind PgBouncer in transaction mode). Takes your pg `Pool` as it is; pg
 * stays an optional peer. One table keeps every account, one row each: create it with
 * {@link PostgresTokenStore.createSchema} or the migration in docs/stores.md.
 *
 * @example
 * import { Pool } from 'pg';
 * import { PostgresTokenStore } from 'axios-token-keeper/postgres-store';
 * const pool = new Pool({ connectionString: process.env.DATABASE_URL, max: 5 });
 * pool.on('error', (error) => logger.warn(error)); // pg's idle connections fail when the server restarts
 * await PostgresTokenStore.createSchema(pool); // once, or the migration in docs/stores.md
 * const store = new PostgresTokenStore(pool, { key: 'orders-api' });
 * attachTokenAuth(api, { credentials, store });
 */
export class PostgresTokenStore implements TokenStore {
  private readonly options: ResolvedPostgresOptions;
  private readonly pool: PgPoolLike;
  private readonly queries: Queries;
  private readonly statements: Statements;
  private readonly news: PostgresNews;
  /** The account's row. */
  private readonly key: string;
  private readonly named: boolean;
  private readonly announcer = new Announcer();
  private readonly rowLock: PostgresLock;
  /** This store's listening to its row, while it has listeners or lock waiters. */
  private stopListening: (() => void) | undefined;
  /** The pair's records, sealed with `encryption` (or in clear): private, so that nothing prints the keys. */
  readonly #records: SealedRecords<TokenPair>;

  /**
   * @param pool A pool of pg's (`new Pool()` from 'pg', 8 or later). The store never ends it. Give it an `'error'`
   * listener: pg emits `'error'` for its idle connections when the server restarts, which ends a process that has none
   * (the store says so through `onWarning`).
   * @param options `key` (required, one per account), the table, the news, the timings.
   * @throws TypeError, saying what to pass instead, when `pool` is no pool of pg's, one connection, or ended; when
   * `key` is missing or over 1,000 characters, `table` is not a plain name, or an option is out of range; when
   * `encryption` is not an object of `keys` or of `seal` and `unseal`, naming what to fix.
   */
  constructor(pool: PgPoolLike, options: PostgresTokenStoreOptions) {
    const parent = (options as AccountStoreOptions | undefined)?.[PARENT];
    if (!parent) checkPool(pool);
    const { options: resolved, encryption } = resolvePostgresOptions(options ?? {});
    this.options = resolved;
    this.pool = pool;
    this.key = resolved.key;
    this.named = parent !== undefined;
    this.queries = new Queries(pool, resolved.table, migrationOf(resolved.table));
    this.statements = statementsOf(quoted(resolved.table));
    this.news = parent?.news ?? new PostgresNews(pool, this.queries, this.statements, resolved.table, resolved);
    this.rowLock = new PostgresLock(
      this.queries,
      this.statements,
      this.key,
      resolved.table,
      resolved,
      () => this.news.hears,
      (record) => this.noticed(record),
    );
    this.#records = new SealedRecords<TokenPair>(
      parent ? parent.sealer : sealerOf('PostgresTokenStore', encryption),
      `postgres:${this.key}`,
      this.where(),
      isPair,
    );
    if (!parent && pool.listenerCount?.('error') === 0)
      resolved.onWarning(
        "PostgresTokenStore: the pool has no 'error' listener: when the server restarts, pg emits 'error' for " +
          "each idle connection, which ends the process. Add one: pool.on('error', (error) => logger.warn(error)).",
      );
  }

  /**
   * Creates the table and its index, if they are not there (`CREATE TABLE IF NOT EXISTS`): run it once, at deploy
   * or at start, by a role that may create tables; processes that start together may each run it. docs/stores.md shows the same as a migration.
   */
  static createSchema(pool: PgPoolLike, options: PostgresTableOptions = {}): Promise<void> {
    return createSchema(pool, options);
  }

  /**
   * Deletes the rows of accounts nobody used for `keyTtlMs` (their `expires_at` passed more than `graceMs` ago) and
   * whose lock nobody holds: run it now and then (a cron job, pg_cron). Gives how many went. A row read as expired is
   * no pair already; this only frees the space.
   */
  static deleteExpired(pool: PgPoolLike, options: PostgresTableOptions & { graceMs?: number } = {}): Promise<number> {
    return deleteExpired(pool, options);
  }

  /**
   * The store of account `name`, with the same options, on the same pool and listening connection: its row is
   * `{key}#{name}`, the name escaped (see `escapeAccountName`: letters, digits, `_` and `-` as they are, anything else
   * as `%XX`, so that it holds no `#`).
   *
   * @throws TypeError when the key holds `#`, which would let an account's row be that of another key's account.
   */
  forAccount(name: string): PostgresTokenStore {
    checkAccountName('PostgresTokenStore', name);
    checkAccountsRoot('PostgresTokenStore', 'key', this.options.key, 'keys');
    const key = `${this.key}#${escapeAccountName(name)}`;
    checkKeyLength(key);
    const options: AccountStoreOptions = {
      ...this.options,
      key,
      [PARENT]: { news: this.news, sealer: this.#records.sealer },
    };
    return new PostgresTokenStore(this.pool, options);
  }

  /** With `encryption` (not `writeClear`), a pair's DPoP key goes into the sealed record; without it, none is kept. */
  get dpopKeys(): 'sealed' | undefined {
    return this.#records.keepsDpopKeys ? 'sealed' : undefined;
  }

  /**
   * The stored pair, or null; rejects, naming the row, when what is there is not a record of this package. With
   * `encryption`, rejects with a `TokenAuthError`: `STORE_KEY_MISSING` for a pair sealed with a key it lacks,
   * `STORE_FAILED` for one that fails authentication (or is in clear without `acceptClear`).
   */
  async get(): Promise<TokenPair | null> {
    const [row] = await this.queries.run('the read of the pair', this.statements.read, [this.key]);
    const text = row?.['pair'];
    return typeof text === 'string' ? this.#records.open(parseRecord(text, this.where())) : null;
  }

  /** Writes the pair (sealed, with `encryption`); false, without writing, when `fence` is older than the last lock granted. */
  async set(pair: TokenPair, fence?: number): Promise<boolean> {
    const record = await this.#records.toJson(fence ?? 0, pair);
    return this.write(record, pair, fence);
  }

  /** Drops the pair; false, without dropping it, as for `set`. */
  clear(fence?: number): Promise<boolean> {
    return this.write(null, null, fence);
  }

  /** The account's record, which every process sharing the pair consults; null when none, or when it expired. */
  async getAccount(): Promise<AccountRecord | null> {
    const [row] = await this.queries.run("the read of the account's record", this.statements.readAccount, [this.key]);
    return parseAccountRecord(row?.['account'] as string | undefined) ?? null;
  }

  /**
   * Writes the account's record, to say something until the last pause, back-off or spent call it describes ends;
   * false, without writing, when `fence` is older than the last lock granted.
   */
  async setAccount(record: AccountRecord, fence?: number): Promise<boolean> {
    const { keyTtlMs, table } = this.options;
    const ttlMs = Math.max(0, Math.ceil(record.expiresAt - Date.now()));
    const values = [this.key, JSON.stringify(record), fence ?? null, ttlMs, keyTtlMs, table, pausesLogins(record)];
    const rows = await this.queries.run("the write of the account's record", this.statements.writeAccount, values);
    return rows.length === 1;
  }

  /**
   * Waits for the lock, at most `lockTimeoutMs`, and holds it, extending its lease, until `release()`. The holders of
   * this process wait in turn, so that one statement at a time tries the row; each try that is refused also reads the
   * pair, and announces it when it changed: a waiter whose `request.signal` then aborts stops waiting.
   */
  async lock(request?: TokenStoreLockRequest): Promise<TokenStoreLock> {
    this.queries.bound(request?.tryTimeoutMs);
    this.listenWhileHeard();
    try {
      return await this.rowLock.take(request);
    } finally {
      this.unlistenWhenUnheard();
    }
  }

  subscribe(listener: (pair: TokenPair | null) => void): () => void {
    return this.heard(this.announcer.add(listener));
  }

  /** Calls `listener` when another process writes the account's record with a login pause in it. */
  subscribeAccount(listener: () => void): () => void {
    return this.heard(this.announcer.addAccount(listener));
  }

  /**
   * Stops listening, for good, and closes the store's listening connection (the pool stays open: it is yours); the
   * store you made stops its accounts' stores listening too.
   */
  async close(): Promise<void> {
    this.stopListening?.();
    this.stopListening = undefined;
    if (!this.named) await this.news.close();
  }

  private async write(record: string | null, pair: TokenPair | null, fence: number | undefined): Promise<boolean> {
    const { keyTtlMs, table } = this.options;
    const rows = await this.queries.run(
      pair ? 'the write of the pair' : 'the drop of the pair',
      this.statements.write,
      [this.key, record, fence ?? null, keyTtlMs, table],
    );
    if (rows.length === 1) this.announcer.announce(record ?? '', pair);
    return rows.length === 1;
  }

  /** Listens for a listener just added, until `remove`, which the answer calls. */
  private heard(remove: () => void): () => void {
    this.listenWhileHeard();
    return () => {
      remove();
      this.unlistenWhenUnheard();
    };
  }

  private listenWhileHeard(): void {
    this.stopListening ??= this.news.listen(this.key, this.onNews);
  }

  /** The store stops listening once nothing listens to it nor waits for its lock. */
  private unlistenWhenUnheard(): void {
    if (this.announcer.size > 0 || this.rowLock.waiting) return;
    this.stopListening?.();
    this.stopListening = undefined;
  }

  /**
   * A release wakes this process's lock waiter; a new pair is announced (read first, when the news did not carry it),
   * which ends the waits it makes needless; a login pause written is announced.
   */
  private readonly onNews: RowListener = (kind, record) => {
    if (kind === 'released') this.rowLock.released();
    else if (kind === 'account') void this.accountNews();
    else if (record !== undefined) this.noticed(record);
    else void this.pickUp(kind === 'changed');
  };

  /** Reads the pair and announces it; its absence too when `absence` (a drop was told, not merely missed). */
  private async pickUp(absence: boolean): Promise<void> {
    try {
      const [row] = await this.queries.run('the read of the pair', this.statements.read, [this.key]);
      const text = row?.['pair'];
      if (typeof text === 'string' || absence) this.noticed(typeof text === 'string' ? text : null);
    } catch {
      // A failed read is the next one's business.
    }
  }

  /** A poll saw the account's record change: announced when it pauses logins (a notification says only that). */
  private async accountNews(): Promise<void> {
    try {
      const record = await this.getAccount();
      if (record && pausesLogins(record)) this.announcer.announceAccount();
    } catch {
      // As for pickUp.
    }
  }

  /** Announces the record read (null for none), when it changed: in the order read, each opened first. */
  private noticed(record: string | null): void {
    const text = record ?? '';
    this.announcer.announceRead(text, () => (text === '' ? null : this.#records.open(parseRecord(text, this.where()))));
  }

  private where(): string {
    return `The row "${this.key}" of ${this.options.table}`;
  }
}
