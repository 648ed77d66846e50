// The RedisTokenStore's options against a real redis-server: what it refuses at construction, naming the option, and
// the clients it takes as they are. The clients it refuses, and what each refusal says: redis-clients.test.ts.
import Redis from 'ioredis';
import { RedisTokenStore } from '../lib/stores/redis/index.js';
import type { RedisTokenStoreOptions } from '../lib/stores/redis/index.js';
import { redisStoreForFile } from './helpers/redis-store.js';
import { PAIR_A } from './helpers/store-contract.js';

const { server, redis, prefix, undo, connection, store } = redisStoreForFile();

describe('RedisTokenStore: options', () => {
  it.each<[string, unknown, RegExp]>([
    ['no options', undefined, /`prefix` is required/],
    ['no prefix', {}, /`prefix` is required/],
    ['an empty prefix', { prefix: '' }, /`prefix` is required/],
    ['a prefix that is not a string', { prefix: 42 }, /`prefix` is required/],
    ['an unknown option', { prefix: 'p', keyTtl: 1_000 }, /unknown option `keyTtl`/],
    ['a keyTtlMs of 0', { prefix: 'p', keyTtlMs: 0 }, /`keyTtlMs`/],
    ['a negative keyTtlMs', { prefix: 'p', keyTtlMs: -1 }, /`keyTtlMs`/],
    ['an infinite keyTtlMs', { prefix: 'p', keyTtlMs: Infinity }, /`keyTtlMs`/],
    ['a keyTtlMs that is a string', { prefix: 'p', keyTtlMs: '1000' }, /`keyTtlMs`/],
    ['a lockTtlMs under 1000', { prefix: 'p', lockTtlMs: 500 }, /`lockTtlMs`/],
    ['a replicaWaitMs of 0', { prefix: 'p', replicaWaitMs: 0 }, /`replicaWaitMs`/],
    ['a replicaWaitMs that is a string', { prefix: 'p', replicaWaitMs: '1s' }, /`replicaWaitMs`/],
    [
      'a replicaWaitMs no shorter than lockTtlMs (the wait holds the lock)',
      { prefix: 'p', replicaWaitMs: 2_000, lockTtlMs: 2_000 },
      /`replicaWaitMs` \(2000\) must be shorter than `lockTtlMs` \(2000\)/,
    ],
    ['a lockTimeoutMs of NaN', { prefix: 'p', lockTimeoutMs: Number.NaN }, /`lockTimeoutMs`/],
    ['a subscriber that is not a connection', { prefix: 'p', subscriber: {} }, /`subscriber`/],
  ])('refuses %s with a TypeError that names the problem', (_what, options, message) => {
    const make = () => new RedisTokenStore(redis(), options as RedisTokenStoreOptions);
    expect(make).toThrow(TypeError);
    expect(make).toThrow(message);
  });

  // The clients it refuses, and what each refusal says: redis-clients.test.ts.

  it('takes an ioredis client and `redis.duplicate()` as they are (type-checked by tsc)', async () => {
    // Never connects: lazyConnect opens no socket until a command is sent, and this store sends none.
    expect(new RedisTokenStore(new Redis(server().url, { lazyConnect: true }), { prefix: prefix() })).toBeInstanceOf(
      RedisTokenStore,
    );
    const client = connection();
    const subscriber = client.duplicate();
    undo.push(() => subscriber.quit());
    const withPubsub = new RedisTokenStore(client, { prefix: prefix(), subscriber });
    undo.push(() => withPubsub.close());
    // @ts-expect-error: `prefix` is required
    expect(() => new RedisTokenStore(client, {})).toThrow(TypeError);

    await new RedisTokenStore(connection(), { prefix: prefix() }).set(PAIR_A);
    expect(await withPubsub.get()).toEqual(PAIR_A);
  });

  // Validation lets any positive number through, but Redis takes only whole milliseconds for PX and PEXPIRE: the
  // store must either refuse a fraction at construction or work with it, not fail every lock() or set() later.
  it.each([
    ['lockTtlMs', { lockTtlMs: 1_500.5 }],
    ['keyTtlMs', { keyTtlMs: 60_000.5 }],
    ['replicaWaitMs', { replicaWaitMs: 100.5 }],
  ])('refuses a fractional `%s` at construction, or works with it', async (name, options) => {
    const outcome = await (async () => {
      let tokens: RedisTokenStore;
      try {
        tokens = store(options);
      } catch (error) {
        return error instanceof TypeError && error.message.includes(`\`${name}\``)
          ? 'refused at construction'
          : `threw ${String(error)}`;
      }
      try {
        const lock = await tokens.lock();
        await tokens.set(PAIR_A, lock.fence);
        await lock.release();
        return (await tokens.get())?.access === PAIR_A.access ? 'works' : 'lost the pair';
      } catch (error) {
        return `failed later: ${error instanceof Error ? error.message : String(error)}`;
      }
    })();

    expect(['refused at construction', 'works']).toContain(outcome);
  });
});
