// The RedisTokenStore against a real redis-server (never a mock). Two stores on two clients with one prefix stand in
// for two processes; the test's own client looks at the keys. Then the plugin on top of it, against the emulator.
import { inspect } from 'node:util';
import axios from 'axios';
import Redis from 'ioredis';
import { attachTokenAuth } from '../lib/index.js';
import type { TokenStoreLock } from '../lib/index.js';
import { RedisTokenStore } from '../lib/stores/redis.js';
import type { RedisTokenStoreOptions } from '../lib/stores/redis.js';
import { closeEmulatorsAfterEach, E2E_PASSWORD, E2E_USER, emulator } from './helpers/emulator.js';
import { burst, fulfilled, undoAfterEach, until } from './helpers/flow.js';
import {
  accountRecord as accountRecordOf,
  expectRoundTrip,
  HOSTILE_NAMES,
  PAIR_A,
  PAIR_B,
  STALE,
  testAccountRecord,
  testStoreAccounts,
  testStoreLock,
  undoable,
} from './helpers/store-contract.js';
import type { LeaseRig } from './helpers/store-contract.js';
import { escapeAccountName } from '../lib/stores/account-key.js';
import { expectOneClientForTwoHolders } from './helpers/holders.js';
import { requireRedisServer, startRedisServer } from '../harness/redis-server.js';
import type { RedisServer } from '../harness/redis-server.js';
import { isLockScript } from '../harness/redis-clients.js';

// Without redis-server this file fails here, once, with the command that installs it.
requireRedisServer();
closeEmulatorsAfterEach();

let server: RedisServer;
/** The test's own connection, to look at and plant keys. */
let redis: Redis;
let serial = 0;
let prefix: string;
/** Connections, locks, subscriptions and plugin handles the test took: undone after it, even when it fails. */
const undo = undoAfterEach();

beforeAll(async () => {
  server = await startRedisServer();
  redis = new Redis(server.url);
});

// A server that did not start fails beforeAll for every test; these hooks add no error of their own to that.
afterAll(async () => {
  await redis?.quit();
  await server?.stop();
});

beforeEach(() => {
  serial += 1;
  prefix = `token-keeper-test:${serial}`;
});

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
const key = (name: 'pair' | 'fence' | 'lock' | 'account' | 'changed') => `{${prefix}}:${name}`;

/** A new connection, as another process would have; closed after the test. */
function connection(name?: string): Redis {
  const client = new Redis(server.url, name ? { connectionName: name } : {});
  undo.push(() => client.quit());
  return client;
}

/**
 * Counts what a store sends on `client` (wrapped in place, before the store is made): its lock tries (the LOCK
 * script's EVALs) and its reads of the pair (GETs), so that a test waits for the try or the read it means.
 */
function watched(client: Redis): { lockTries: number; reads: number } {
  const seen = { lockTries: 0, reads: 0 };
  const evaluate = client.eval.bind(client) as (script: string, ...rest: (string | number)[]) => Promise<unknown>;
  const read = client.get.bind(client);
  client.eval = ((script: string, ...rest: (string | number)[]) => {
    if (isLockScript(script)) seen.lockTries += 1;
    return evaluate(script, ...rest);
  }) as typeof client.eval;
  client.get = (name: string) => {
    seen.reads += 1;
    return read(name);
  };
  return seen;
}

/** A second connection for pub/sub, as the README shows (`redis.duplicate()`); closed after the test. */
function subscriberOf(client: Redis): Redis {
  const subscriber = client.duplicate();
  undo.push(() => subscriber.quit());
  return subscriber;
}

/** A store on a connection of its own; with `pubsub`, on a subscriber connection too. */
function store(
  options: Partial<RedisTokenStoreOptions> & { pubsub?: boolean } = {},
  client = connection(),
): RedisTokenStore {
  const { pubsub, ...rest } = options;
  const created = new RedisTokenStore(client, {
    prefix,
    ...rest,
    ...(pubsub ? { subscriber: subscriberOf(client) } : {}),
  });
  if (pubsub) undo.push(() => created.close());
  return created;
}

const { locked, listen } = undoable(() => undo);

/** Waits until `condition` holds, asking again every few milliseconds; fails after `timeoutMs`. */
async function eventually(condition: () => Promise<boolean>, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await sleep(5);
  }
}

/**
 * How many subscriptions Redis counts on this prefix's channels, its named accounts' included: a store listens once
 * Redis has its SUBSCRIBE.
 */
async function subscriptions(): Promise<number> {
  const channels = (await redis.call('PUBSUB', 'CHANNELS', `{${prefix}[#}]*`)) as string[];
  if (channels.length === 0) return 0;
  const counts = (await redis.call('PUBSUB', 'NUMSUB', ...channels)) as Array<string | number>;
  return counts.filter((_, index) => index % 2 === 1).reduce<number>((sum, count) => sum + Number(count), 0);
}

async function keys(): Promise<string[]> {
  return (await redis.keys(`{${prefix}}*`)).sort();
}

describe('RedisTokenStore: keys and values', () => {
  it('gives back the pair set, and null before any set and after clear()', async () => {
    expect(await store().get()).toBeNull();
    await expectRoundTrip(() => store());
  });

  it('keeps exactly the keys {prefix}:pair, {prefix}:fence and {prefix}:lock', async () => {
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

    const ttl = await redis.pttl(key('pair'));
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(60_000);
  });

  it('lets the pair go once keyTtlMs has passed since the last write', async () => {
    const tokens = store({ keyTtlMs: 1_100, lockTtlMs: 1_000 });
    await tokens.set(PAIR_A);
    expect(await tokens.get()).toEqual(PAIR_A);

    await eventually(async () => (await redis.exists(key('pair'))) === 0);

    expect(await tokens.get()).toBeNull();
  });

  it.each([
    ['text that is not JSON', 'some-other-app-value'],
    ['JSON of something else', '{"access":"x"}'],
  ])(
    'rejects get() of %s at {prefix}:pair with an error naming the key, and leaves the value',
    async (_what, value) => {
      await redis.set(key('pair'), value);

      const error = (await store()
        .get()
        .catch((reason: unknown) => reason)) as Error;

      expect(error).toBeInstanceOf(Error);
      expect(error.message).toContain(key('pair'));
      expect(error.message).toContain('point the store elsewhere or delete it');
      expect(await redis.get(key('pair'))).toBe(value);
    },
  );

  // A shared store reports a value that is not a record of ours rather than overwrite it, so that a wrong path or key
  // loses nothing: the file store in set() and clear() (file-store.test.ts), the Redis WRITE script here.
  it.each([
    ['set()', (tokens: RedisTokenStore) => tokens.set(PAIR_A)],
    ['a fenced set()', (tokens: RedisTokenStore) => tokens.set(PAIR_A, 1)],
    ['clear()', (tokens: RedisTokenStore) => tokens.clear()],
  ])('%s does not overwrite a value at {prefix}:pair that is not ours', async (_what, write) => {
    await redis.set(key('pair'), 'some-other-app-value');

    const outcome = await write(store()).catch(() => 'rejected');

    expect(await redis.get(key('pair'))).toBe('some-other-app-value');
    expect(outcome).not.toBe(true);
  });
});

/** The lease at the lock key that `lockKey()` names, as the lock contract sees it. */
function leaseAt(lockKey: () => string): LeaseRig {
  return {
    where: lockKey,
    owner: () => redis.get(lockKey()),
    ttlLeft: () => redis.pttl(lockKey()),
    // A killed holder's key expires with its lease, as nobody extends it.
    plant: async (owner, holder) =>
      void (await redis.set(lockKey(), owner, 'PX', holder === 'killed' ? 1_000 : 10_000)),
    // Its holder stalled past its lease: the key is gone.
    lapse: async () => void (await redis.del(lockKey())),
  };
}

testStoreLock('RedisTokenStore', {
  open: (timings) => store(timings),
  fences: 'every grant',
  lease: leaseAt(() => key('lock')),
});

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
    const waiterName = `waiter-${serial}`;
    const waiter = store({ pubsub: true, pollMs: 60_000, lockTimeoutMs: 10_000 }, connection(waiterName));
    let granted: TokenStoreLock | undefined;
    const waiting = waiter.lock().then((lock) => {
      granted = lock;
      undo.push(() => lock.release());
      return lock;
    });
    // The waiter has tried once and found the lock taken: it sleeps now.
    await eventually(async () =>
      ((await redis.client('LIST')) as string)
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

describe('RedisTokenStore: fences outlive their key', () => {
  it('grants a fence above the stored record when the fence key is gone, so a stale holder stays refused', async () => {
    const a = store();
    const b = store();
    const lockA = await a.lock();
    await lockA.release();
    const lockB = await b.lock();
    expect(await b.set(PAIR_B, lockB.fence)).toBe(true);
    await lockB.release();
    await redis.del(key('fence'));

    const lockC = await locked(a);

    expect(lockC.fence).toBeGreaterThan(lockB.fence!);
    expect(await a.set(STALE, lockA.fence)).toBe(false);
    expect(await a.get()).toEqual(PAIR_B);
  });

  it('refuses a `keyTtlMs` no longer than `lockTtlMs`, which would let the fence expire under a held lock', () => {
    expect(() => new RedisTokenStore(connection(), { prefix, keyTtlMs: 5_000, lockTtlMs: 5_000 })).toThrow(
      /`keyTtlMs` must be longer than `lockTtlMs`/,
    );
  });
});

describe('RedisTokenStore: when Redis fails', () => {
  it('keeps a holder that starts while Redis is paused from logging in: its first requests wait for the store, and take the pair stored there once it answers', async () => {
    const service = await emulator();
    const credentials = { username: E2E_USER, password: E2E_PASSWORD };
    const first = attachTokenAuth(axios.create({ baseURL: service.url }), { credentials, store: store() });
    undo.push(() => first.eject());
    await first.login();
    const api = axios.create({ baseURL: service.url });
    const auth = attachTokenAuth(api, { credentials, store: store(), tokenTimeoutMs: 500 });
    undo.push(() => auth.eject());

    server.pause();
    let results: PromiseSettledResult<unknown>[];
    try {
      const pending = burst(5, () => api.get('/orders'));
      // Pacing: the first read, a try at the lock and the tries after it go unanswered.
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      expect(auth.getState().storeDownSince).toEqual(expect.any(Number));
      server.resume();
      results = await pending;
    } finally {
      server.resume();
    }
    expect(fulfilled(results)).toBe(5);
    expect(service.counters).toMatchObject({ logins: 1, refreshes: 0 });
    expect(auth.getState().storeDownSince).toBeUndefined();
  });

  it("with `whenStoreDown: 'go-alone'`, keeps a paused Redis from holding requests at first use for long: the first read, the wait, and the login asks it no more", async () => {
    const service = await emulator();
    const api = axios.create({ baseURL: service.url });
    const auth = attachTokenAuth(api, {
      credentials: { username: E2E_USER, password: E2E_PASSWORD },
      store: store({ lockTimeoutMs: 500, lockTtlMs: 1_000 }),
      tokenTimeoutMs: 500,
      whenStoreDown: 'go-alone',
      storeOutageWaitMs: 300,
    });
    undo.push(() => auth.eject());
    const failures: string[] = [];
    auth.on('failure', (event) => failures.push(`${event.operation}: ${event.error.message}`));

    server.pause();
    try {
      const results = await burst(5, () => api.get('/orders'));
      expect(fulfilled(results)).toBe(5);
    } finally {
      server.resume();
    }
    expect(service.counters.logins).toBe(1);
    // The first read got no answer, which is said; the tries at the lock in the wait after it are not, one by one,
    // and the login that follows neither reads nor writes.
    expect(failures).toEqual([expect.stringMatching(/^store: .*did not answer within 167 ms, `storeTimeoutMs`/)]);
  });

  it("with `whenStoreDown: 'go-alone'`, delays no request beyond a try at the lock, the wait and a login when Redis stops answering as a renewal falls due, and fails none", async () => {
    const service = await emulator();
    // Three holders sharing one Redis, as three processes would, on ioredis' default client settings; the lock's own
    // wait is the default two minutes, which a silent Redis must not cost.
    const holders = [1, 2, 3].map(() => {
      const api = axios.create({ baseURL: service.url });
      const auth = attachTokenAuth(api, {
        credentials: { username: E2E_USER, password: E2E_PASSWORD },
        store: store({ pubsub: true }),
        tokenTimeoutMs: 3_000,
        whenStoreDown: 'go-alone',
        storeOutageWaitMs: 900,
      });
      undo.push(() => auth.eject());
      return { api, auth };
    });
    const failures: string[] = [];
    const warnings: string[] = [];
    for (const { auth } of holders) {
      auth.on('failure', (event) => failures.push(event.error.message));
      auth.on('warning', (event) => warnings.push(event.code));
    }
    for (const { api } of holders) await api.get('/warm');
    expect(service.counters.logins).toBe(1);

    service.expireAccessTokens();
    server.pause();
    let latencies: number[];
    let results: PromiseSettledResult<unknown>[];
    try {
      latencies = [];
      results = await burst(80, async (i) => {
        const started = Date.now();
        const response = await holders[i % 3]!.api.get(`/orders/${i}`);
        latencies.push(Date.now() - started);
        return response;
      });
    } finally {
      server.resume();
    }

    expect(fulfilled(results)).toBe(80);
    // A bound, not a speed: a try at the lock (`storeTimeoutMs`, a third of `tokenTimeoutMs`), at most the wait
    // (`storeOutageWaitMs`) and the try under way at its end, then a login.
    expect(Math.max(...latencies)).toBeLessThan(1_000 + 900 + 1_000 + 1_000);
    // Each holder asked the lock, heard nothing within `storeTimeoutMs`, said so (once: the tries of its wait are not
    // said again), and got a pair of its own with one login rather than send the refresh token they share, which
    // another may have spent meanwhile: no refresh token refused. That is what a silent store costs.
    // The first failure of each holder's outage, said once: the record read before the renewal, unanswered.
    expect(failures).toHaveLength(3);
    expect(failures.filter((message) => /did not answer within 1000 ms, `storeTimeoutMs`/.test(message))).toHaveLength(
      3,
    );
    expect(failures.filter((message) => message.includes('still held by another process'))).toEqual([]);
    expect(service.counters).toMatchObject({ logins: 4, refreshes: 0, rejected: 0 });
    expect(warnings.sort()).toEqual([
      'STORE_LOCK_MISSED',
      'STORE_LOCK_MISSED',
      'STORE_LOCK_MISSED',
      'STORE_UNAVAILABLE',
      'STORE_UNAVAILABLE',
      'STORE_UNAVAILABLE',
    ]);
    // The tries Redis answered after its pause granted locks nobody waited for any more: they were released.
    await Promise.all(holders.map(({ auth }) => auth.flush()));
    await until(async () => (await redis.exists(key('lock'))) === 0, 5_000);

    // Once Redis answers, the next expiry brings every holder back on one pair: one token call, with the refresh token
    // of the pair stored before the pause (nobody spent it), and no holder's own pair written.
    service.expireAccessTokens();
    expect(fulfilled(await burst(30, (i) => holders[i % 3]!.api.get(`/after/${i}`)))).toBe(30);
    await Promise.all(holders.map(({ auth }) => auth.flush()));
    expect(service.counters).toMatchObject({ logins: 4, refreshes: 1, rejected: 0 });
    const stored = await Promise.all(holders.map(({ auth }) => auth.getTokens()));
    expect(new Set(stored.map((pair) => pair?.access)).size).toBe(1);
  });

  it('ends a wait for the lock without taking it when another holder stores a newer pair (pub/sub, or the read of a refused try)', async () => {
    for (const pubsub of [true, false]) {
      await redis.del(key('pair'), key('fence'));
      const service = await emulator();
      const api = axios.create({ baseURL: service.url });
      // Without pub/sub, the read that comes with each refused try ends the wait; with it, the message does, before
      // any poll (a minute apart here).
      const client = connection();
      const sent = watched(client);
      const auth = attachTokenAuth(api, {
        credentials: { username: E2E_USER, password: E2E_PASSWORD },
        store: store({ pubsub, pollMs: pubsub ? 60_000 : 50, lockTtlMs: 60_000 }, client),
      });
      undo.push(() => auth.eject());
      const failed: string[] = [];
      auth.on('failure', (event) => failed.push(event.error.message));
      await api.get('/warm');
      // Another process holds the lock, renews, and stores its pair.
      await redis.set(key('lock'), 'another-process', 'PX', 60_000);
      service.expireAccessTokens();
      const other = attachTokenAuth(axios.create({ baseURL: service.url }), {
        credentials: { username: E2E_USER, password: E2E_PASSWORD },
      });
      undo.push(() => other.eject());

      const triesBefore = sent.lockTries;
      const pending = api.get('/orders');
      // The refused request's renewal is waiting for the lock: it has tried it once, and found it held.
      await until(() => sent.lockTries > triesBefore);
      await other.login();
      await store().set((await other.getTokens())!);
      const started = Date.now();
      const response = await pending;

      expect(response.status).toBe(200);
      expect(Date.now() - started).toBeLessThan(1_000);
      expect(await redis.get(key('lock'))).toBe('another-process');
      expect(service.counters).toMatchObject({ logins: 2, refreshes: 0 });
      expect(auth.stats()).toMatchObject({ logins: 1, refreshes: 0, failures: 0 });
      expect(failed).toEqual([]);
      await redis.del(key('lock'));
    }
  });

  it('never takes back a pair it gave up: a logout waiting for the lock, a stale copy written back after a renewal', async () => {
    const service = await emulator();
    const api = axios.create({ baseURL: service.url });
    const client = connection();
    const sent = watched(client);
    const auth = attachTokenAuth(api, {
      credentials: { username: E2E_USER, password: E2E_PASSWORD },
      store: store({ pubsub: true, pollMs: 20 }, client),
    });
    undo.push(() => auth.eject());
    await api.get('/warm');
    const first = (await redis.get(key('pair')))!;
    service.expireAccessTokens();
    await api.get('/renewed');
    const renewed = await auth.getTokens();

    // A replica behind its master, or a write replayed after a reconnect, puts the first pair back and says so.
    const readsBefore = sent.reads;
    await redis.set(key('pair'), first);
    await redis.publish(`{${prefix}}:changed`, 'changed');
    // The message makes the store read the pair: the stale one it gave up, which it must not take back.
    await until(() => sent.reads > readsBefore);
    await api.get('/after');

    expect(await auth.getTokens()).toEqual(renewed);
    expect(service.calls.at(-1)?.authorization).toBe(`Bearer ${renewed!.access}`);

    // A logout waits for the lock another process holds; every refused try reads the pair it is dropping.
    await redis.set(key('lock'), 'another-process', 'PX', 60_000);
    const triesBefore = sent.lockTries;
    const loggingOut = auth.logout();
    await until(() => sent.lockTries >= triesBefore + 2);
    expect(await auth.getTokens()).toBeNull();
    await redis.del(key('lock'));
    await loggingOut;

    expect(await auth.getTokens()).toBeNull();
    expect(await redis.get(key('pair'))).toBeNull();
    expect(service.counters).toMatchObject({ logins: 1, refreshes: 1 });
  });

  it('reports a Redis error without the command ioredis attaches to it, which carries the tokens written', async () => {
    const service = await emulator();
    const api = axios.create({ baseURL: service.url });
    // Going on alone after a short wait: the request is served, with the lock's error reported.
    const auth = attachTokenAuth(api, {
      credentials: { username: E2E_USER, password: E2E_PASSWORD },
      store: store(),
      whenStoreDown: 'go-alone',
      storeOutageWaitMs: 300,
    });
    undo.push(() => auth.eject());
    const failures: unknown[] = [];
    auth.on('failure', (event) => failures.push(event));
    // A full Redis refuses every write: the error ioredis builds names the command and its arguments.
    await redis.config('SET', 'maxmemory', '1');
    try {
      expect((await api.get('/orders')).status).toBe(200);
    } finally {
      await redis.config('SET', 'maxmemory', '0');
    }

    const tokens = await auth.getTokens();
    const reported = inspect(failures, { depth: Infinity, showHidden: true });
    expect(failures.length).toBeGreaterThan(0);
    expect(reported).toMatch(/OOM/);
    expect(reported).not.toContain(tokens!.access);
    expect(reported).not.toContain(tokens!.refresh);
  });
});

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
    const make = () => new RedisTokenStore(redis, options as RedisTokenStoreOptions);
    expect(make).toThrow(TypeError);
    expect(make).toThrow(message);
  });

  // The clients it refuses, and what each refusal says: redis-clients.test.ts.

  it('takes an ioredis client and `redis.duplicate()` as they are (type-checked by tsc)', async () => {
    // Never connects: lazyConnect opens no socket until a command is sent, and this store sends none.
    expect(new RedisTokenStore(new Redis(server.url, { lazyConnect: true }), { prefix })).toBeInstanceOf(
      RedisTokenStore,
    );
    const client = connection();
    const subscriber = client.duplicate();
    undo.push(() => subscriber.quit());
    const withPubsub = new RedisTokenStore(client, { prefix, subscriber });
    undo.push(() => withPubsub.close());
    // @ts-expect-error: `prefix` is required
    expect(() => new RedisTokenStore(client, {})).toThrow(TypeError);

    await new RedisTokenStore(connection(), { prefix }).set(PAIR_A);
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

testAccountRecord('RedisTokenStore', { open: () => store(), fences: 'every grant' });

/** A named account's key, as RedisTokenStore.forAccount documents it: `{prefix#escaped name}#pair`, … */
const accountKey = (name: string, what: 'pair' | 'fence' | 'lock' | 'account' | 'changed') =>
  `{${prefix}#${escapeAccountName(name)}}#${what}`;

testStoreAccounts('RedisTokenStore', {
  open: (timings) => store({ ...timings, pubsub: true }),
  fences: 'every grant',
  record: true,
  lease: (name) => leaseAt(() => accountKey(name, 'lock')),
  listening: (count) => eventually(async () => (await subscriptions()) === count),
});

/** Every key of this test's prefix, its named accounts' included, as SCAN finds them on the server. */
async function scanned(): Promise<string[]> {
  const found: string[] = [];
  let cursor = '0';
  do {
    const [next, batch] = await redis.scan(cursor, 'MATCH', `{${prefix}[#}]*`, 'COUNT', 1_000);
    found.push(...batch);
    cursor = next;
  } while (cursor !== '0');
  return found.sort();
}

describe('RedisTokenStore: named accounts', () => {
  /** The connections' lines of CLIENT LIST whose name is `name`. */
  const connectionsNamed = async (name: string): Promise<string[]> =>
    ((await redis.client('LIST')) as string).split('\n').filter((line) => line.includes(` name=${name} `));
  /** How many channels the connection of that line is subscribed to. */
  const channelsOf = (line: string | undefined) => Number(/ sub=(\d+) /.exec(line ?? '')?.[1] ?? NaN);

  it('keeps exactly the keys {prefix#name}#pair, #fence, #lock and #account, the name escaped, and none of the default account', async () => {
    const name = 'tenant:{42}/../a.lock';
    const escaped = 'tenant%3A%7B42%7D%2F%2E%2E%2Fa%2Elock';
    const tenant = store().forAccount(name);
    const lock = await tenant.lock();
    await tenant.set(PAIR_A, lock.fence);
    await tenant.setAccount(accountRecordOf());

    expect(await scanned()).toEqual(
      ['account', 'fence', 'lock', 'pair'].map((what) => `{${prefix}#${escaped}}#${what}`),
    );
    await lock.release();
    expect(await scanned()).toEqual(['account', 'fence', 'pair'].map((what) => `{${prefix}#${escaped}}#${what}`));
    expect(await store().get()).toBeNull();
  });

  it('writes every hostile name’s keys under its own escaped name, and each reads its own', async () => {
    for (const name of HOSTILE_NAMES) await store().forAccount(name).set({ access: name });

    const written = await scanned();
    expect(written).toEqual(HOSTILE_NAMES.map((name) => accountKey(name, 'pair')).sort());
    expect(written.every((each) => /^\{[^#{}]+#([A-Za-z0-9_-]|%[0-9A-F]{2})+\}#pair$/.test(each))).toBe(true);
    for (const name of HOSTILE_NAMES) expect(await store().forAccount(name).get()).toEqual({ access: name });
  });

  it('never shares a key with a default account, whatever its prefix: `a` with account `b`, and the prefix `a#b`', async () => {
    const named = new RedisTokenStore(connection(), { prefix: `${prefix}:a` }).forAccount('b');
    const lookalike = new RedisTokenStore(connection(), { prefix: `${prefix}:a#b` });
    await named.set(PAIR_A);
    await lookalike.set(PAIR_B);

    expect(await named.get()).toEqual(PAIR_A);
    expect(await lookalike.get()).toEqual(PAIR_B);
  });

  it('refuses at forAccount a prefix holding `#`, naming `prefix` and the fix, and a name that is no string', () => {
    const hashed = new RedisTokenStore(connection(), { prefix: 'tokens#orders' });
    expect(() => hashed.forAccount('alice')).toThrow(TypeError);
    expect(() => hashed.forAccount('alice')).toThrow(
      'RedisTokenStore: `prefix` "tokens#orders" holds `#`, which separates an account\'s name in its keys, so that two ' +
        'accounts could share keys: give the store a prefix without `#` to keep named accounts in it.',
    );
    expect(() => store().forAccount('')).toThrow(
      /^RedisTokenStore\.forAccount: the account's name must be a non-empty string/,
    );
  });

  it('serves the default account and several named ones on one subscriber connection, one channel each', async () => {
    const subscriberName = `accounts-subscriber-${serial}`;
    const client = connection();
    const subscriber = connection(subscriberName);
    const parent = new RedisTokenStore(client, { prefix, subscriber });
    undo.push(() => parent.close());
    const names = ['alice', 'bob', 'a:b', '{c}'];
    const heard = [listen(parent).heard, ...names.map((name) => listen(parent.forAccount(name)).heard)];
    await eventually(async () => channelsOf((await connectionsNamed(subscriberName))[0]) === 5);

    expect(await connectionsNamed(subscriberName)).toHaveLength(1);
    const channels = (await redis.call('PUBSUB', 'CHANNELS', `{${prefix}*`)) as string[];
    expect(channels.sort()).toEqual([key('changed'), ...names.map((name) => accountKey(name, 'changed'))].sort());

    // Another process writes each account: each hears its own.
    const writer = new RedisTokenStore(connection(), { prefix });
    for (const [index, name] of names.entries()) await writer.forAccount(name).set({ access: `access-${index}` });
    await writer.set(PAIR_A);
    await until(() => heard.every((each) => each.length === 1), 5_000);
    expect(heard).toEqual([[PAIR_A], ...names.map((_, index) => [{ access: `access-${index}` }])]);
  });

  it('lets an account’s channel go with its last listener, and with a lock wait that has ended', async () => {
    const subscriberName = `accounts-subscriber-${serial}`;
    const parent = new RedisTokenStore(connection(), { prefix, subscriber: connection(subscriberName) });
    undo.push(() => parent.close());
    const channels = async () => channelsOf((await connectionsNamed(subscriberName))[0]);
    const first = listen(parent.forAccount('alice'));
    const second = listen(parent.forAccount('alice'));
    const other = listen(parent.forAccount('bob'));
    await eventually(async () => (await channels()) === 2);

    first.stop();
    // Alice is still heard: a listener of hers is left.
    await store().forAccount('alice').set(PAIR_A);
    await until(() => second.heard.length === 1, 5_000);
    second.stop();
    other.stop();
    await eventually(async () => (await channels()) === 0);

    // A lock of an account nobody listens to listens while it waits, and not after.
    const lock = await parent.forAccount('carol').lock();
    await lock.release();
    await eventually(async () => (await channels()) === 0);
  });

  it('stops every account listening when the store is closed', async () => {
    const subscriberName = `accounts-subscriber-${serial}`;
    const parent = new RedisTokenStore(connection(), { prefix, subscriber: connection(subscriberName) });
    listen(parent);
    listen(parent.forAccount('alice'));
    await eventually(async () => channelsOf((await connectionsNamed(subscriberName))[0]) === 2);

    await parent.close();

    expect(channelsOf((await connectionsNamed(subscriberName))[0])).toBe(0);
  });

  it('with the plugin, keeps the channels of the accounts it holds alone: a dropped account’s goes', async () => {
    const users = { ops: 'ops-password', a: 'pw-a', b: 'pw-b', c: 'pw-c', d: 'pw-d' };
    const service = await emulator({ users });
    const subscriberName = `accounts-subscriber-${serial}`;
    const shared = new RedisTokenStore(connection(), { prefix, subscriber: connection(subscriberName) });
    undo.push(() => shared.close());
    const api = axios.create({ baseURL: service.url });
    const auth = attachTokenAuth(api, {
      credentials: (account) => {
        const user = (account ?? 'ops') as keyof typeof users;
        return { username: user, password: users[user] };
      },
      store: shared,
      maxAccounts: 2,
    });
    undo.push(() => auth.eject());

    for (const account of ['a', 'b', 'c', 'd', 'a']) {
      const { data } = await api.get<{ user: string }>('/orders', { account });
      expect(data.user).toBe(account);
    }

    // The default account's channel, and those of the two accounts held (d and a); b's and c's went with them.
    const subscribed = async () => ((await redis.call('PUBSUB', 'CHANNELS', `{${prefix}*`)) as string[]).sort();
    await eventually(async () => (await subscribed()).length === 3);
    expect(await subscribed()).toEqual([key('changed'), accountKey('a', 'changed'), accountKey('d', 'changed')].sort());
    // Account a came back after it was dropped, and found its pair in Redis: one login per account.
    expect(service.counters.logins).toBe(4);
  });
});
