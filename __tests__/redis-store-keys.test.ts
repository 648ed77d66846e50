// The RedisTokenStore's keys and values against a real redis-server (never a mock): the keys it keeps, their TTL, and
// a value at its key that is not its own, which it reports rather than overwrites. Then two holders of one account on
// it, with the plugin, against the emulator. Stores on connections of their own stand in for processes; the test's own
// connection looks at the keys.
import type { RedisTokenStore } from '../lib/stores/redis/index.js';
import { closeEmulatorsAfterEach, emulator } from './helpers/emulator.js';
import { expectOneClientForTwoHolders } from './helpers/holders.js';
import { eventually, redisStoreForFile } from './helpers/redis-store.js';
import { expectRoundTrip, PAIR_A } from './helpers/store-contract.js';

closeEmulatorsAfterEach();
const { redis, undo, key, keys, store } = redisStoreForFile();

describe('RedisTokenStore: keys and values', () => {
  it('gives back the pair set, and null before any set and after clear()', async () => {
    expect(await store().get()).toBeNull();
    await expectRoundTrip(() => store());
  });

  it('keeps exactly the keys {prefix: prefix()}:pair, {prefix: prefix()}:fence and {prefix: prefix()}:lock', async () => {
    const tokens = store();
    const lock = await tokens.lock();
    await tokens.set(PAIR_A, lock.fence);

    expect(await keys()).toEqual([key('fence'), key('lock'), key('pair')]);
    await lock.release();
    expect(await keys()).toEqual([key('fence'), key('pair')]);
    await tokens.clear();
    expect(await keys()).toEqual([key('fence')]);
  });

  it('gives the pair key a TTL of keyTtlMs at most', async () => {
    await store({ keyTtlMs: 60_000 }).set(PAIR_A);

    const ttl = await redis().pttl(key('pair'));
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(60_000);
  });

  it('lets the pair go once keyTtlMs has passed since the last write', async () => {
    const tokens = store({ keyTtlMs: 1_100, lockTtlMs: 1_000 });
    await tokens.set(PAIR_A);
    expect(await tokens.get()).toEqual(PAIR_A);

    await eventually(async () => (await redis().exists(key('pair'))) === 0);

    expect(await tokens.get()).toBeNull();
  });

  it.each([
    ['text that is not JSON', 'some-other-app-value'],
    ['JSON of something else', '{"access":"x"}'],
  ])(
    'rejects get() of %s at {prefix: prefix()}:pair with an error naming the key, and leaves the value',
    async (_what, value) => {
      await redis().set(key('pair'), value);

      const error = (await store()
        .get()
        .catch((reason: unknown) => reason)) as Error;

      expect(error).toBeInstanceOf(Error);
      expect(error.message).toContain(key('pair'));
      expect(error.message).toContain('point the store elsewhere or delete it');
      expect(await redis().get(key('pair'))).toBe(value);
    },
  );

  // A shared store reports a value that is not a record of ours rather than overwrite it, so that a wrong path or key
  // loses nothing: the file store in set() and clear() (file-store-files.test.ts), the Redis WRITE script here.
  it.each([
    ['set()', (tokens: RedisTokenStore) => tokens.set(PAIR_A)],
    ['a fenced set()', (tokens: RedisTokenStore) => tokens.set(PAIR_A, 1)],
    ['clear()', (tokens: RedisTokenStore) => tokens.clear()],
  ])('%s does not overwrite a value at {prefix: prefix()}:pair that is not ours', async (_what, write) => {
    await redis().set(key('pair'), 'some-other-app-value');

    const outcome = await write(store()).catch(() => 'rejected');

    expect(await redis().get(key('pair'))).toBe('some-other-app-value');
    expect(outcome).not.toBe(true);
  });
});

describe.each([
  ['with pub/sub', true],
  ['without pub/sub', false],
])('RedisTokenStore: with the plugin, %s', (_how, pubsub) => {
  it('gives two instances on two connections one login and one refresh per expiry, and a restart no login', async () => {
    await expectOneClientForTwoHolders(
      await emulator(),
      () => store({ pubsub }),
      (auth) => undo.push(() => auth.eject()),
    );
    // The pair, its fence, and the account's record (the budget the two spent), in one slot.
    expect(await keys()).toEqual([key('account'), key('fence'), key('pair')]);
  });
});
