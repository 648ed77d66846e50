// The RedisTokenStore's pub/sub against a real redis-server: a subscribed store hears the writes of others and wakes
// its lock waiters on a release; one without a subscriber hears nothing and polls; close() stops listening. Stores on
// connections of their own stand in for processes; the test's own connection counts the subscriptions.
import type { TokenStoreLock } from '../lib/index.js';
import { until } from './helpers/flow.js';
import { eventually, redisStoreForFile, watched } from './helpers/redis-store.js';
import { PAIR_A, PAIR_B } from './helpers/store-contract.js';

const { redis, serial, undo, connection, store, listen, subscriptions } = redisStoreForFile();

describe('RedisTokenStore: pub/sub', () => {
  it('tells a subscribed store of the writes of another store, and its own writes once', async () => {
    const subscribed = store({ pubsub: true });
    const other = store();
    const heard = listen(subscribed).heard;
    await eventually(async () => (await subscriptions()) === 1);

    await other.set(PAIR_A);
    await until(() => heard.length >= 1, 5_000);
    await subscribed.set(PAIR_B);
    await other.clear();
    await until(() => heard.length >= 3, 5_000);

    // Its own write is heard at once, and not again when its message comes back.
    expect(heard).toEqual([PAIR_A, PAIR_B, null]);
  });

  it('wakes a lock waiter on release, long before its next poll', async () => {
    // A lease and a poll far longer than the test: only the release message can wake the waiter in time.
    const holder = await store({ lockTtlMs: 60_000 }).lock();
    const waiterName = `waiter-${serial()}`;
    const waiter = store({ pubsub: true, pollMs: 60_000, lockTimeoutMs: 10_000 }, connection(waiterName));
    let granted: TokenStoreLock | undefined;
    const waiting = waiter.lock().then((lock) => {
      granted = lock;
      undo.push(() => lock.release());
      return lock;
    });
    // The waiter has tried once and found the lock taken: it sleeps now.
    await eventually(async () =>
      ((await redis().client('LIST')) as string)
        .split('\n')
        .some((line) => line.includes(` name=${waiterName} `) && line.includes(' cmd=eval ')),
    );
    expect(granted).toBeUndefined();

    await holder.release();

    await until(() => granted !== undefined, 3_000);
    expect((await waiting).fence).toBeGreaterThan(holder.fence!);
  });

  it('without a subscriber, hears nothing of other stores, and a lock waiter finds the released lock by polling', async () => {
    const deaf = store();
    const heardByDeaf = listen(deaf).heard;
    const witness = store({ pubsub: true });
    const heardByWitness = listen(witness).heard;
    await eventually(async () => (await subscriptions()) === 1);

    await store().set(PAIR_A);
    await until(() => heardByWitness.length === 1, 5_000);
    expect(heardByDeaf).toEqual([]);

    const holder = await deaf.lock();
    let released = false;
    let releasedWhenGranted: boolean | undefined;
    const waiterClient = connection();
    const waiter = watched(waiterClient);
    const waiting = store({ pollMs: 20 }, waiterClient)
      .lock()
      .then((lock) => {
        releasedWhenGranted = released;
        undo.push(() => lock.release());
        return lock;
      });
    // Several polls while the lock is held: none may take it.
    await until(() => waiter.lockTries >= 4);
    released = true;
    await holder.release();
    await waiting;
    expect(releasedWhenGranted).toBe(true);
  });

  it('stops listening on close()', async () => {
    const closing = store({ pubsub: true });
    const heardByClosing = listen(closing).heard;
    const witness = store({ pubsub: true });
    const heardByWitness = listen(witness).heard;
    await eventually(async () => (await subscriptions()) === 2);

    await closing.close();
    await eventually(async () => (await subscriptions()) === 1);
    await store().set(PAIR_A);
    await until(() => heardByWitness.length === 1, 5_000);

    expect(heardByWitness).toEqual([PAIR_A]);
    expect(heardByClosing).toEqual([]);

    // A lock taken after close() does not listen again.
    const lock = await closing.lock();
    await lock.release();
    expect(await subscriptions()).toBe(1);
  });
});
