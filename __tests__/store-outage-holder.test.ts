// What one holder does while its store is down, beyond the fleet's counts (store-outage.test.ts): a token within its
// expiry margin goes on, a logout ends the wait, each outage is said once, a holder already alone renews its own pair
// at once, and a store that stops answering under the lock generates nothing. Holders in this process, each on
// connections of its own, on a real redis-server paused with SIGSTOP; without it this file fails here, once, with the
// command that installs it.
import axios from 'axios';
import Redis from 'ioredis';
import { attachTokenAuth, isTokenAuthError } from '../lib/index.js';
import type { TokenAuthEvents, TokenAuthOptions, TokenStore } from '../lib/index.js';
import { RedisTokenStore } from '../lib/stores/redis/index.js';
import { isLockScript } from '../harness/redis-clients.js';
import { closeEmulatorsAfterEach, E2E_PASSWORD, E2E_USER, emulator } from './helpers/emulator.js';
import { manualClock, undoAfterEach, until } from './helpers/flow.js';
import { failureOf } from './helpers/settled.js';
import { redisServerForFile } from './helpers/redis.js';
import type { TokenServiceEmulator } from '../lib/emulator/index.js';

closeEmulatorsAfterEach();
const server = redisServerForFile();
const undo = undoAfterEach();
let serial = 0;

const credentials = { username: E2E_USER, password: E2E_PASSWORD };
/** Store calls and lock tries time out at 500 ms: a third of `tokenTimeoutMs`. */
const TOKEN_TIMEOUT_MS = 1_500;

/** A connection of its own, as another process would have, counting the store's tries at the lock; closed after. */
function connection(): { client: Redis; lockTries: () => number } {
  const client = new Redis(server().url, { maxRetriesPerRequest: 1 });
  undo.push(() => client.quit().catch(() => client.disconnect()));
  let tries = 0;
  const evaluate = client.eval.bind(client) as (script: string, ...rest: (string | number)[]) => Promise<unknown>;
  client.eval = ((script: string, ...rest: (string | number)[]) => {
    if (isLockScript(script)) tries += 1;
    return evaluate(script, ...rest);
  }) as typeof client.eval;
  return { client, lockTries: () => tries };
}

/** A holder of account `prefix`: an axios instance with the plugin on a store of its own, with pub/sub. */
function holder(service: TokenServiceEmulator, prefix: string, options: Partial<TokenAuthOptions> = {}) {
  const { client, lockTries } = connection();
  const subscriber = client.duplicate();
  undo.push(() => subscriber.quit().catch(() => subscriber.disconnect()));
  const store = new RedisTokenStore(client, { prefix, subscriber });
  undo.push(() => store.close());
  const api = axios.create({ baseURL: service.url });
  const auth = attachTokenAuth(api, { credentials, store, tokenTimeoutMs: TOKEN_TIMEOUT_MS, ...options });
  undo.push(() => auth.eject());
  const warnings: Array<TokenAuthEvents['warning']['code']> = [];
  auth.on('warning', (event) => warnings.push(event.code));
  return { api, auth, store, warnings, lockTries };
}

const nextPrefix = () => `outage-holder:${(serial += 1)}`;

it('sends requests with a token within its expiry margin while its renewal waits for the store: only the generation of a token waits', async () => {
  const service = await emulator();
  const clock = manualClock(Date.now());
  const { api, auth } = holder(service, nextPrefix(), { clock: clock.now });
  await api.get('/warm');
  const { expiresAt } = (await auth.getTokens())!;
  // 10 s before it expires: inside the 30 s margin, so a request renews first; the service still takes the token.
  clock.advance(expiresAt! - 10_000 - clock.now());

  server().pause();
  try {
    const results = await Promise.all([api.get('/a'), api.get('/b'), api.get('/c')]);
    expect(results.map((response) => response.status)).toEqual([200, 200, 200]);
    // The renewal still waits for the store, and says so; nothing was generated.
    expect(auth.getState().status).toBe('renewing');
    expect(typeof auth.getState().storeDownSince).toBe('number');
    expect(service.counters).toMatchObject({ logins: 1, refreshes: 0 });
  } finally {
    server().resume();
  }
  await auth.flush();
  expect(service.counters).toMatchObject({ logins: 1, refreshes: 1 });
  expect(auth.getState().storeDownSince).toBeUndefined();
});

it('ends the wait for the store when `auth.logout()` is called: the waiting request fails with LOGGED_OUT, and nothing is generated', async () => {
  const service = await emulator();
  const { api, auth } = holder(service, nextPrefix());
  await api.get('/warm');
  service.expireAccessTokens();

  server().pause();
  try {
    const waiting = failureOf(api.get('/orders'), isTokenAuthError);
    await until(() => auth.getState().storeDownSince !== undefined);
    await auth.logout();
    const error = await waiting;
    expect(error.code).toBe('LOGGED_OUT');
    expect(auth.getState()).toEqual({ status: 'signed-out' });
  } finally {
    server().resume();
  }
  expect(service.counters).toMatchObject({ logins: 1, refreshes: 0 });
});

it('says each outage once, also when the store came back by another holder’s pair, heard over pub/sub', async () => {
  const service = await emulator();
  const prefix = nextPrefix();
  const a = holder(service, prefix, { storeOutageWaitMs: 1_000 });
  const b = holder(service, prefix);
  await a.api.get('/warm');
  await b.api.get('/warm');

  // First outage: a's renewal waits, and fails.
  service.expireAccessTokens();
  server().pause();
  const first = await failureOf(a.api.get('/orders'), isTokenAuthError).finally(() => server().resume());
  expect(first.code).toBe('STORE_UNAVAILABLE');
  // The store is back: b renews, and a takes b's pair over pub/sub, without a call of its own to the store.
  await b.api.get('/renewed');
  await until(async () => (await a.auth.getTokens())?.access === (await b.auth.getTokens())?.access);
  expect(a.warnings).toEqual(['STORE_UNAVAILABLE']);

  // A second outage is a new one: said again.
  service.expireAccessTokens();
  server().pause();
  const second = await failureOf(a.api.get('/orders'), isTokenAuthError).finally(() => server().resume());
  expect(second.code).toBe('STORE_UNAVAILABLE');
  expect(a.warnings).toEqual(['STORE_UNAVAILABLE', 'STORE_UNAVAILABLE']);
  expect(service.counters).toMatchObject({ logins: 1, refreshes: 1 });
});

it("with `whenStoreDown: 'go-alone'`, renews the pair it got alone at once at the next expiry of the outage, with one try at the store, not another wait", async () => {
  const service = await emulator();
  const { api, auth, warnings, lockTries } = holder(service, nextPrefix(), {
    whenStoreDown: 'go-alone',
    storeOutageWaitMs: 3_000,
  });
  await api.get('/warm');

  server().pause();
  try {
    service.expireAccessTokens();
    await api.get('/alone');
    expect(service.counters).toMatchObject({ logins: 2, refreshes: 0 });
    const triesBefore = lockTries();
    service.expireAccessTokens();
    await api.get('/again');
    // Its own refresh token, after one try at the store: the wait is over for this outage.
    expect(service.counters).toMatchObject({ logins: 2, refreshes: 1 });
    expect(lockTries() - triesBefore).toBe(1);
    expect(warnings).toEqual(['STORE_UNAVAILABLE', 'STORE_LOCK_MISSED']);
  } finally {
    server().resume();
  }
  await auth.flush();
});

it('generates nothing when the store stops answering under its lock: the turn is lost, and the renewal waits for the store, then refreshes', async () => {
  const service = await emulator();
  const { api, auth, store } = holder(service, nextPrefix());
  await api.get('/warm');
  // The store as the plugin sees it: the same, but Redis stops answering right after it grants the lock.
  let stopAfterGrant = false;
  const stopping: TokenStore = {
    get: () => store.get(),
    set: (pair, fence) => store.set(pair, fence),
    clear: (fence) => store.clear(fence),
    getAccount: () => store.getAccount(),
    setAccount: (record, fence) => store.setAccount(record, fence),
    subscribe: (listener) => store.subscribe(listener),
    lock: async (request) => {
      const lock = await store.lock(request);
      if (stopAfterGrant) {
        stopAfterGrant = false;
        server().pause();
        setTimeout(() => server().resume(), 2_000);
      }
      return lock;
    },
  };
  const stoppedApi = axios.create({ baseURL: service.url });
  const stopped = attachTokenAuth(stoppedApi, { credentials, store: stopping, tokenTimeoutMs: TOKEN_TIMEOUT_MS });
  undo.push(() => stopped.eject());
  await stoppedApi.get('/warm');
  await stopped.flush();
  service.expireAccessTokens();

  stopAfterGrant = true;
  const response = await stoppedApi.get('/orders');

  expect(response.status).toBe(200);
  // Under the lock the pair could not be read: no login on a store lost mid-turn, but a refresh once it answered.
  expect(service.counters).toMatchObject({ logins: 1, refreshes: 1 });
  await auth.flush();
});
