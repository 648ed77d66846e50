// The store contracts, written once and run against every store (in the manner of axios-cache-interceptor's
// `testStorage(name, storage)`), in one import for a store's test file: the lock contract and the pairs it writes
// (store-lock-contract.ts), the account-record contract (store-record-contract.ts) and the contracts per account
// (store-accounts-contract.ts).
export { expectRoundTrip, PAIR_A, PAIR_B, PAIR_C, STALE, testStoreLock, undoable } from './store-lock-contract.js';
export type { LeaseRig, LockRig, LockTimings } from './store-lock-contract.js';
export { accountRecord, testAccountRecord } from './store-record-contract.js';
export { CONTRACT_NAMES, HOSTILE_NAMES, SEPARATOR_NAMES, testStoreAccounts } from './store-accounts-contract.js';
export type { AccountsRig } from './store-accounts-contract.js';
