// The PostgresTokenStore against a real PostgreSQL server: the lock contract (helpers/store-lock-contract.ts) with its
// lease in the account's row, the record contract, and the contracts per account (store-accounts-contract.ts). Stores
// on pools of their own stand in for processes; the file's own pool plants and reads rows.
import { postgresStoreForFile } from './helpers/postgres-store.js';
import { expectRoundTrip, testAccountRecord, testStoreAccounts, testStoreLock } from './helpers/store-contract.js';

const { store, key, accountKey, leaseAt } = postgresStoreForFile();

describe('PostgresTokenStore: the pair', () => {
  it('gives back the pair set, to itself and to another holder, and null after clear()', async () => {
    await expectRoundTrip(() => store());
  });
});

testStoreLock('PostgresTokenStore', {
  open: (timings) => store(timings),
  fences: 'every grant',
  lease: leaseAt(key),
});

testAccountRecord('PostgresTokenStore', { open: () => store(), fences: 'every grant' });

testStoreAccounts('PostgresTokenStore', {
  open: (timings) => store(timings),
  fences: 'every grant',
  record: true,
  lease: (name) => leaseAt(() => accountKey(name)),
});
