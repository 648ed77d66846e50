// The RedisTokenStore's lock against a real redis-server: the lock contract (helpers/store-lock-contract.ts) with its
// lease at the lock key, the record contract, and fences that outlive their key. Stores on connections of their own
// stand in for processes; the test's own connection plants and removes keys.
import { RedisTokenStore } from '../lib/stores/redis/index.js';
import { redisStoreForFile } from './helpers/redis-store.js';
import { PAIR_B, STALE, testAccountRecord, testStoreLock } from './helpers/store-contract.js';

const { redis, prefix, key, connection, store, locked, leaseAt } = redisStoreForFile();

testStoreLock('RedisTokenStore', {
  open: (timings) => store(timings),
  fences: 'every grant',
  lease: leaseAt(() => key('lock')),
});

describe('RedisTokenStore: fences outlive their key', () => {
  it('grants a fence above the stored record when the fence key is gone, so a stale holder stays refused', async () => {
    const a = store();
    const b = store();
    const lockA = await a.lock();
    await lockA.release();
    const lockB = await b.lock();
    expect(await b.set(PAIR_B, lockB.fence)).toBe(true);
    await lockB.release();
    await redis().del(key('fence'));

    const lockC = await locked(a);

    expect(lockC.fence).toBeGreaterThan(lockB.fence!);
    expect(await a.set(STALE, lockA.fence)).toBe(false);
    expect(await a.get()).toEqual(PAIR_B);
  });

  it('refuses a `keyTtlMs` no longer than `lockTtlMs`, which would let the fence expire under a held lock', () => {
    expect(() => new RedisTokenStore(connection(), { prefix: prefix(), keyTtlMs: 5_000, lockTtlMs: 5_000 })).toThrow(
      /`keyTtlMs` must be longer than `lockTtlMs`/,
    );
  });
});

testAccountRecord('RedisTokenStore', { open: () => store(), fences: 'every grant' });
