// The options of PostgresTokenStore: what each does, their defaults, and their checks, which name the option at fault.
import { LEASE_DEFAULTS } from '../common/lease.js';
import type { LeaseOptions } from '../common/lease.js';
import { checkStoreOptions, shown } from '../common/options.js';
import type { OptionNames } from '../common/options.js';
import type { Sealing } from '../sealing/index.js';
import type { StoreEncryption } from '../sealing/options.js';

/** Options of `PostgresTokenStore`. Only `key` is required. */
export interface PostgresTokenStoreOptions extends LeaseOptions {
  /**
   * The account's row: its primary key in the table. One key per account: two accounts under one key would swap
   * tokens. The named accounts of `PostgresTokenStore.forAccount` have rows of their own (`{key}#{name}`); their key
   * may not hold `#`. At most 1,000 characters.
   */
  key: string;
  /**
   * The table, as `name` or `schema.name` (letters, digits and `_`): one table keeps every account, one row each.
   * Create it with `PostgresTokenStore.createSchema(pool)` or the migration in docs/stores.md.
   * @default 'axios_token_keeper'
   */
  table?: string;
  /**
   * An account's row expires this long after its last write or lock, so the pair of an account nobody uses any more
   * stops being read; `PostgresTokenStore.deleteExpired(pool)` removes such rows. Longer than `lockTtlMs`.
   * @default 86_400_000 (one day)
   */
  keyTtlMs?: number;
  /**
   * How the holders hear of a new pair, a released lock and a login pause: `'listen'`, by LISTEN on one connection
   * of the store's own (made with the pool's settings, outside the pool, so that it holds none of the pool's), where
   * the server delivers notifications; the store checks that it does, and where it does not (PgBouncer in transaction
   * mode takes LISTEN and drops what it would hear) it polls instead and says so through `onWarning`. `'poll'`: one
   * statement every `newsPollMs` for all the accounts this store's holders use, while any listens.
   * @default 'listen'
   */
  news?: 'listen' | 'poll';
  /**
   * How often the store reads the rows it listens to when it polls (`news: 'poll'`, or LISTEN that hears nothing, or
   * its connection lost). A new pair reaches the other holders within it; a holder that meets a 401 first reads the
   * row at once.
   * @default 1_000
   */
  newsPollMs?: number;
  /**
   * Seal the tokens in the table: `keys`, each `{ id, secret }` with 32 random bytes (`openssl rand -base64 32`), the
   * first sealing and every one opening (AES-256-GCM, bound to the row's key); or `seal` and `unseal` of your KMS; or
   * what `sealing()` (axios-token-keeper/sealing) made of them. A pair's DPoP key is kept only sealed. See
   * docs/stores.md, "Tokens sealed at rest".
   * @default none: the pair is kept in clear
   */
  encryption?: StoreEncryption | Sealing;
  /**
   * Told what the store found worth knowing and went on with: LISTEN that hears nothing (it polls), a pool with no
   * `'error'` listener (a restart of the server would end the process), its listening connection lost.
   * @default console.warn, with the package's name before the message
   */
  onWarning?: (message: string) => void;
}

const POSTGRES_DEFAULTS = {
  ...LEASE_DEFAULTS,
  table: 'axios_token_keeper',
  keyTtlMs: 86_400_000,
  news: 'listen',
  newsPollMs: 1_000,
} satisfies Required<Omit<PostgresTokenStoreOptions, 'key' | 'encryption' | 'onWarning'>>;

const POSTGRES_OPTIONS: OptionNames<PostgresTokenStoreOptions> = {
  key: true,
  table: true,
  lockTtlMs: true,
  lockTimeoutMs: true,
  pollMs: true,
  keyTtlMs: true,
  news: true,
  newsPollMs: true,
  encryption: true,
  onWarning: true,
};

/** The longest row key: a notification carries it, and its payload is at most 8,000 bytes. */
export const KEY_LIMIT = 1_000;

/** A table's name as the options take it: `name` or `schema.name`, unquoted. */
const TABLE = /^[A-Za-z_][A-Za-z0-9_]{0,62}(\.[A-Za-z_][A-Za-z0-9_]{0,62})?$/;

/** The options with their defaults. */
export type ResolvedPostgresOptions = Required<Omit<PostgresTokenStoreOptions, 'encryption'>>;

/** A table (checked by the options) as the statements name it: each part in double quotes, so that its case is kept. */
export function quoted(table: string): string {
  return table
    .split('.')
    .map((part) => `"${part}"`)
    .join('.');
}

/**
 * `options` checked, with their defaults, and `encryption` apart (checked by the sealing). Throws a TypeError naming
 * the option for an option it does not know or out of range, a missing `key`, a key too long, a table that is not a
 * plain name, and a `keyTtlMs` no longer than `lockTtlMs`.
 */
export function resolvePostgresOptions(options: Partial<PostgresTokenStoreOptions>): {
  options: ResolvedPostgresOptions;
  encryption: unknown;
} {
  checkStoreOptions('PostgresTokenStore', options, POSTGRES_OPTIONS);
  const { key } = options;
  if (typeof key !== 'string' || key === '') {
    throw new TypeError(
      `PostgresTokenStore: \`key\` is required: one string per account, such as "orders-api"; got ${shown(key)}.`,
    );
  }
  checkKeyLength(key);
  const table = options.table ?? POSTGRES_DEFAULTS.table;
  if (typeof table !== 'string' || !TABLE.test(table) || table.length > 63) {
    throw new TypeError(
      `PostgresTokenStore: \`table\` must be a table's name or \`schema.name\`, of letters, digits and \`_\` (63 characters in all: the channel of its news bears the name), such as ` +
        `"axios_token_keeper" or "auth.tokens"; got ${shown(table)}.`,
    );
  }
  const news = options.news ?? POSTGRES_DEFAULTS.news;
  if (news !== 'listen' && news !== 'poll') {
    throw new TypeError(`PostgresTokenStore: \`news\` must be 'listen' or 'poll'; got ${shown(news)}.`);
  }
  const onWarning =
    options.onWarning ??
    // eslint-disable-next-line no-console -- what a user must know and gave no listener for, said once
    ((message: string) => console.warn(`axios-token-keeper: ${message}`));
  if (typeof onWarning !== 'function') {
    throw new TypeError(
      `PostgresTokenStore: \`onWarning\` must be a function, such as (message) => logger.warn(message); got ${shown(onWarning)}.`,
    );
  }
  const lockTtlMs = options.lockTtlMs ?? POSTGRES_DEFAULTS.lockTtlMs;
  const keyTtlMs = options.keyTtlMs ?? POSTGRES_DEFAULTS.keyTtlMs;
  if (keyTtlMs <= lockTtlMs) {
    throw new TypeError(
      'PostgresTokenStore: `keyTtlMs` must be longer than `lockTtlMs`, or a row could expire while its lock is held.',
    );
  }
  return {
    options: {
      key,
      table,
      lockTtlMs: Math.ceil(lockTtlMs),
      lockTimeoutMs: options.lockTimeoutMs ?? POSTGRES_DEFAULTS.lockTimeoutMs,
      pollMs: options.pollMs ?? POSTGRES_DEFAULTS.pollMs,
      keyTtlMs: Math.ceil(keyTtlMs),
      news,
      newsPollMs: options.newsPollMs ?? POSTGRES_DEFAULTS.newsPollMs,
      onWarning,
    },
    encryption: options.encryption,
  };
}

/** Refuses a row key longer than {@link KEY_LIMIT}, which no notification could carry. */
export function checkKeyLength(key: string): void {
  if (key.length > KEY_LIMIT) {
    throw new TypeError(
      `PostgresTokenStore: an account's row key may have at most ${KEY_LIMIT} characters (a notification carries ` +
        `it); this one has ${key.length}: give a shorter \`key\` or account name.`,
    );
  }
}
