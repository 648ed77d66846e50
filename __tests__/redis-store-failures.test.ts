// The plugin on the RedisTokenStore when Redis fails, against a real redis-server (paused, full, or answering with a
// stale pair) and the emulator: requests wait for the store, or go on alone when told to, a lock wait ends when
// another holder stores a newer pair, a pair given up is never taken back, and Redis's errors carry no token.
import { inspect } from 'node:util';
import axios from 'axios';
import { attachTokenAuth } from '../lib/index.js';
import { closeEmulatorsAfterEach, E2E_PASSWORD, E2E_USER, emulator } from './helpers/emulator.js';
import { burst, fulfilled, until } from './helpers/flow.js';
import { whileRedisRefusesWrites } from './helpers/redis.js';
import { redisStoreForFile } from './helpers/redis-store.js';

closeEmulatorsAfterEach();
const { server, redis, prefix, undo, key, store, attachWatched } = redisStoreForFile();

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

    server().pause();
    let results: PromiseSettledResult<unknown>[];
    try {
      const pending = burst(5, () => api.get('/orders'));
      // Pacing: the first read, a try at the lock and the tries after it go unanswered.
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      expect(auth.getState().storeDownSince).toEqual(expect.any(Number));
      server().resume();
      results = await pending;
    } finally {
      server().resume();
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

    server().pause();
    try {
      const results = await burst(5, () => api.get('/orders'));
      expect(fulfilled(results)).toBe(5);
    } finally {
      server().resume();
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
    server().pause();
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
      server().resume();
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
    await until(async () => (await redis().exists(key('lock'))) === 0, 5_000);

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
      await redis().del(key('pair'), key('fence'));
      const service = await emulator();
      // Without pub/sub, the read that comes with each refused try ends the wait; with it, the message does, before
      // any poll (a minute apart here).
      const { api, auth, sent } = attachWatched(service, {
        pubsub,
        pollMs: pubsub ? 60_000 : 50,
        lockTtlMs: 60_000,
      });
      const failed: string[] = [];
      auth.on('failure', (event) => failed.push(event.error.message));
      await api.get('/warm');
      // Another process holds the lock, renews, and stores its pair.
      await redis().set(key('lock'), 'another-process', 'PX', 60_000);
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
      expect(await redis().get(key('lock'))).toBe('another-process');
      expect(service.counters).toMatchObject({ logins: 2, refreshes: 0 });
      expect(auth.stats()).toMatchObject({ logins: 1, refreshes: 0, failures: 0 });
      expect(failed).toEqual([]);
      await redis().del(key('lock'));
    }
  });

  it('never takes back a pair it gave up: a logout waiting for the lock, a stale copy written back after a renewal', async () => {
    const service = await emulator();
    const { api, auth, sent } = attachWatched(service, { pubsub: true, pollMs: 20 });
    await api.get('/warm');
    const first = (await redis().get(key('pair')))!;
    service.expireAccessTokens();
    await api.get('/renewed');
    const renewed = await auth.getTokens();

    // A replica behind its master, or a write replayed after a reconnect, puts the first pair back and says so.
    const readsBefore = sent.reads;
    await redis().set(key('pair'), first);
    await redis().publish(`{${prefix()}}:changed`, 'changed');
    // The message makes the store read the pair: the stale one it gave up, which it must not take back.
    await until(() => sent.reads > readsBefore);
    await api.get('/after');

    expect(await auth.getTokens()).toEqual(renewed);
    expect(service.calls.at(-1)?.authorization).toBe(`Bearer ${renewed!.access}`);

    // A logout waits for the lock another process holds; every refused try reads the pair it is dropping.
    await redis().set(key('lock'), 'another-process', 'PX', 60_000);
    const triesBefore = sent.lockTries;
    const loggingOut = auth.logout();
    await until(() => sent.lockTries >= triesBefore + 2);
    expect(await auth.getTokens()).toBeNull();
    await redis().del(key('lock'));
    await loggingOut;

    expect(await auth.getTokens()).toBeNull();
    expect(await redis().get(key('pair'))).toBeNull();
    expect(service.counters).toMatchObject({ logins: 1, refreshes: 1 });
  });

  it('reports a Redis error without the command ioredis attaches to it, which carries the tokens written', async () => {
    const service = await emulator();
    // A full Redis refuses every write: the error ioredis builds names the command and its arguments.
    const { failures, status, tokens } = await whileRedisRefusesWrites(redis(), service, store(), (auth) =>
      undo.push(() => auth.eject()),
    );

    expect(status).toBe(200);
    const reported = inspect(failures, { depth: Infinity, showHidden: true });
    expect(failures.length).toBeGreaterThan(0);
    expect(reported).toMatch(/OOM/);
    expect(reported).not.toContain(tokens!.access);
    expect(reported).not.toContain(tokens!.refresh);
  });
});
