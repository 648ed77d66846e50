/**
 * {@link PostgresTokenStore}: one token pair shared by processes on any number of hosts, through one PostgreSQL
 * database and no Redis. Bring your own pg `Pool` (pg 8 or later): pg is not imported.
 *
 * @module axios-token-keeper/postgres-store
 */
export { PostgresTokenStore } from './store.js';
export type { PostgresTableOptions } from './schema.js';

/** The lock's lease options, which this store's options extend. */
export type { LeaseOptions } from '../common/lease.js';

/** The store's options. */
export type { PostgresTokenStoreOptions } from './options.js';

/** The pool the store takes, as its shape: pg is not imported. */
export type { PgClientClass, PgClientLike, PgPoolLike, PgResultLike } from './pool.js';

/** The `encryption` option: its keys, or the functions of your KMS, and the switch from clear; or `sealing()`'s. */
export type { SealingFunctions, SealingSecret, SealingSwitch, StoreEncryption } from '../sealing/options.js';
export type { Sealing } from '../sealing/index.js';
