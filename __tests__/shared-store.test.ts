// How the plugin renews under a store that other holders share: the fence it passes back, a write refused because a
// later holder has written, a lock that is not granted in time, a refresh token another holder has already spent.
import { mkdtemp, rm, unlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isTokenAuthError, TokenAuthError } from '../lib/index.js';
import type { TokenAuthEvents, TokenPair, TokenStore, TokenStoreLock } from '../lib/index.js';
import { FileTokenStore } from '../lib/stores/file/index.js';
import { LocklessStore } from './helpers/lockless-store.js';
import { reasons } from './helpers/settled.js';
import { burst, fulfilled, rig, until } from './helpers/setup.js';
import { FakeTokenService } from './helpers/service.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'token-keeper-shared-'));
});
afterEach(async () => {
  // A renewal's write goes on off the request's path: a test that does not flush may still be writing here.
  await rm(dir, { recursive: true, force: true, maxRetries: 5 });
});

/** A pair the service will accept, as another holder of the store would have got it. */
function otherHoldersPair(service: FakeTokenService): TokenPair {
  const pair = { access: 'other-holders-access', refresh: 'other-holders-refresh' };
  service.validAccess.add(pair.access);
  service.validRefresh.add(pair.refresh);
  return pair;
}

describe('the plugin under a shared store', () => {
  it('writes with the fence of the lock it renewed under', async () => {
    const store = new FileTokenStore(join(dir, 'tokens.json'));
    const locks = jest.spyOn(store, 'lock');
    const writes = jest.spyOn(store, 'set');
    const { api, auth } = rig({ store });

    await api.get('/orders');
    await auth.refresh();

    const fences = await Promise.all(
      locks.mock.results.map((result) => (result.value as Promise<TokenStoreLock>).then((lock) => lock.fence)),
    );
    expect(fences).toHaveLength(2);
    expect(fences[1]).toBeGreaterThan(fences[0]!);
    expect(writes.mock.calls.map((call) => call[1])).toEqual(fences);
  });

  it('takes the newer pair when its write is refused because its lock lapsed and a later holder wrote', async () => {
    const path = join(dir, 'tokens.json');
    const { api, auth, service } = rig({ store: new FileTokenStore(path) });
    await api.get('/prime');
    const loaded: TokenAuthEvents['load'][] = [];
    auth.on('load', (event) => loaded.push(event));
    service.expireAccessTokens();
    service.tokenDelayMs = 300;

    const pending = api.get('/orders');
    await until(() => service.counters.refreshCalls === 1);
    // The renewer stalls past its lease: the lock passes to another holder, which renews and writes first.
    await unlink(`${path}.lock`);
    const other = new FileTokenStore(path);
    const later = await other.lock();
    const newer = otherHoldersPair(service);
    expect(await other.set(newer, later.fence)).toBe(true);

    // The waiting request leaves with the renewer's own pair, valid too: its write goes on off the request's path.
    const response = await pending;
    await later.release();
    await auth.flush();
    await api.get('/next');

    expect(response.status).toBe(200);
    expect(await other.get()).toEqual(newer);
    expect(await auth.getTokens()).toEqual(newer);
    expect(loaded).toHaveLength(1);
    const dataCalls = service.received.filter((entry) => entry.route === 'data');
    expect(dataCalls.at(-1)?.authorization).toBe(`Bearer ${newer.access}`);
    expect(service.counters.refreshCalls).toBe(1);
  });

  it('generates no token when the lock is not granted within `lockTimeoutMs`, by default: tries the store again for `storeOutageWaitMs`, then fails with STORE_UNAVAILABLE, and says so once', async () => {
    const path = join(dir, 'tokens.json');
    // A live holder's lock that does not end while this test runs.
    await writeFile(`${path}.lock`, 'another-process');
    const store = new FileTokenStore(path, { lockTimeoutMs: 200, lockTtlMs: 60_000 });
    const { api, auth, service } = rig({ store, storeOutageWaitMs: 1_000 });
    const failures: TokenAuthEvents['failure'][] = [];
    const warnings: TokenAuthEvents['warning'][] = [];
    auth.on('failure', (event) => failures.push(event));
    auth.on('warning', (event) => warnings.push(event));

    const results = await burst(10, (i) => api.get(`/orders/${i}`));
    await auth.flush();

    const errors = reasons(results);
    expect(errors.map((error) => isTokenAuthError(error) && error.code)).toEqual(Array(10).fill('STORE_UNAVAILABLE'));
    expect(((errors[0] as Error).cause as Error).message).toContain('`lockTimeoutMs`');
    expect(service.counters.loginCalls).toBe(0);
    // The first failure of the outage is reported; the tries after it are not, one by one.
    expect(failures.map((event) => [event.operation, event.code])).toEqual([['store', 'STORE_FAILED']]);
    expect(warnings.map((event) => event.code)).toEqual(['STORE_UNAVAILABLE']);
    expect(await new FileTokenStore(path).get()).toBeNull();
  });

  it("with `whenStoreDown: 'go-alone'`, renews without the lock when it is not granted for the wait: a pair of its own, kept out of the store, and says so", async () => {
    const path = join(dir, 'tokens.json');
    await writeFile(`${path}.lock`, 'another-process');
    const store = new FileTokenStore(path, { lockTimeoutMs: 200, lockTtlMs: 60_000 });
    const { api, auth, service } = rig({ store, whenStoreDown: 'go-alone', storeOutageWaitMs: 900 });
    const failures: TokenAuthEvents['failure'][] = [];
    const warnings: TokenAuthEvents['warning'][] = [];
    auth.on('failure', (event) => failures.push(event));
    auth.on('warning', (event) => warnings.push(event));

    const results = await burst(10, (i) => api.get(`/orders/${i}`));
    await auth.flush();

    expect(fulfilled(results)).toBe(10);
    expect(service.counters.loginCalls).toBe(1);
    expect(failures.map((event) => [event.operation, event.code])).toEqual([['store', 'STORE_FAILED']]);
    expect(failures[0]!.error.message).toContain('`lockTimeoutMs`');
    expect(warnings.map((event) => event.code)).toEqual(['STORE_UNAVAILABLE', 'STORE_LOCK_MISSED']);
    // Written without the lock, the pair could replace the one the holder of the lock is writing.
    expect(await new FileTokenStore(path).get()).toBeNull();
  });

  it('takes the pair another holder stored when its refresh token was already spent by that holder, with no login', async () => {
    const store = new LocklessStore();
    const a = rig({ store });
    const service = a.service;
    const b = rig({ store }, service);
    await a.api.get('/prime');
    await b.api.get('/prime');
    expect(service.counters.loginCalls).toBe(1);
    service.expireAccessTokens();
    service.tokenDelayMs = 100;

    // A spends the refresh token first; B, which read the store before A wrote, sends it again and is refused.
    const first = a.api.get('/a');
    await until(() => service.counters.refreshCalls === 1);
    const second = b.api.get('/b');
    const results = await Promise.allSettled([first, second]);

    expect(fulfilled(results)).toBe(2);
    expect(service.counters.refreshCalls).toBe(2);
    expect(service.counters.refreshes).toBe(1);
    expect(service.counters.loginCalls).toBe(1);
    expect(await b.auth.getTokens()).toEqual(await a.auth.getTokens());
    expect(b.auth.stats()).toMatchObject({ logins: 0, refreshes: 0, failures: 1 });
  });

  it('renews once more when its replay is refused with a pair another holder stored that has died since, and marks nothing uncured', async () => {
    // Two holders of one file that they do not watch: the second learns of the first's pair only by reading the store.
    const path = join(dir, 'tokens.json');
    const first = rig({ store: new FileTokenStore(path, { watch: false }) });
    const { service } = first;
    const second = rig({ store: new FileTokenStore(path, { watch: false }) }, service);
    await first.api.get('/orders');
    await second.api.get('/orders');
    service.expireAccessTokens();
    await first.api.get('/orders');
    // The pair the first holder stored dies too (a revocation, an expiry), before the second holder ever sends it.
    service.expireAccessTokens();

    const refused = await second.api.get('/orders');
    const again = await second.api.get('/orders');

    await Promise.all([first.auth.flush(), second.auth.flush()]);
    expect([refused.status, again.status]).toEqual([200, 200]);
    // The second holder took the stored pair, was refused with it, and renewed with its refresh token, unspent.
    expect(service.counters).toMatchObject({ loginCalls: 1, refreshCalls: 2, rejected: 0 });
    expect(second.auth.stats()).toMatchObject({ refreshes: 1, replays: 2 });
  });

  it('fails requests at once, with no login, while the store holds a record sealed with a key this holder lacks', async () => {
    const path = join(dir, 'tokens.json');
    const file = new FileTokenStore(path);
    let keyDeployed = false;
    // The store a sealing store is to this holder while a key of `encryption.keys` is missing here.
    const store: TokenStore = {
      get: () => {
        if (keyDeployed) return file.get();
        throw new TokenAuthError(
          'STORE_KEY_MISSING',
          'The token store holds a record sealed with key "k2", which `encryption.keys` lacks here.',
        );
      },
      set: (pair, fence) => file.set(pair, fence),
      clear: (fence) => file.clear(fence),
      lock: (request) => file.lock(request),
    };
    const { api, auth, service } = rig({ store });
    const failures: TokenAuthEvents['failure'][] = [];
    auth.on('failure', (event) => failures.push(event));

    const refused = await Promise.allSettled([api.get('/orders'), api.get('/orders'), auth.accessToken()]);
    await api.get('/orders').catch(() => undefined);

    expect(refused.map((result) => result.status === 'rejected' && (result.reason as TokenAuthError).code)).toEqual([
      'STORE_KEY_MISSING',
      'STORE_KEY_MISSING',
      'STORE_KEY_MISSING',
    ]);
    expect(service.counters.tokenCalls).toBe(0);
    expect(failures.map((event) => [event.operation, event.code])).toEqual([['store', 'STORE_KEY_MISSING']]);
    // The key deployed, the holder goes on as any other.
    keyDeployed = true;
    await expect(api.get('/orders')).resolves.toMatchObject({ status: 200 });
    await auth.flush();
    expect(service.counters.loginCalls).toBe(1);
  });

  it.each([
    ['says it holds a record it cannot vouch for (TokenAuthError STORE_FAILED)', 'untrusted', 1],
    ['fails to read (any other error)', 'failing', 2],
  ] as const)(
    'logs in once for all its holders when the store %s: read as no pair, reported, and overwritten under the lock',
    async (_, how, logins) => {
      const file = new FileTokenStore(join(dir, 'tokens.json'));
      // What the file holds stops being readable (a sealed pair tampered with), until a holder writes a new pair.
      let unreadable = false;
      const store: TokenStore = {
        get: () => {
          if (!unreadable) return file.get();
          if (how === 'failing') throw new Error('the store read nothing it could parse');
          throw new TokenAuthError('STORE_FAILED', 'The token file holds a sealed pair that failed authentication.');
        },
        set: async (pair, fence) => {
          unreadable = false;
          return file.set(pair, fence);
        },
        clear: (fence) => file.clear(fence),
        lock: (request) => file.lock(request),
      };
      const first = rig({ store });
      const { service } = first;
      const second = rig({ store }, service);
      await first.api.get('/orders');
      await second.api.get('/orders');
      const failures: TokenAuthEvents['failure'][] = [];
      for (const { auth } of [first, second]) auth.on('failure', (event) => failures.push(event));
      unreadable = true;
      service.expireAccessTokens();

      const results = await Promise.allSettled([
        ...Array.from({ length: 5 }, () => first.api.get('/orders')),
        ...Array.from({ length: 5 }, () => second.api.get('/orders')),
      ]);
      await Promise.all([first.auth.flush(), second.auth.flush()]);

      expect(fulfilled(results)).toBe(10);
      // One login at the start, then one per holder that could not write what it got: one for the holders together
      // when the store answered, one each when it failed (its turn writes nothing).
      expect(service.counters.loginCalls).toBe(1 + logins);
      expect(service.counters.refreshCalls).toBe(0);
      expect(failures.map((event) => [event.operation, event.code])).toContainEqual(['store', 'STORE_FAILED']);
      if (how === 'failing') return;
      expect(failures[0]!.error.message).toBe('The token file holds a sealed pair that failed authentication.');
      // The pair that overwrote the record is the one both hold.
      expect(await first.auth.getTokens()).toEqual(await second.auth.getTokens());
      expect(await file.get()).toEqual(await first.auth.getTokens());
    },
  );

  it('writes in the order it obtained the pairs, even to a slow store without a lock', async () => {
    // The first write takes a while, the next one none: without order, the older pair would land last.
    const kept = new LocklessStore();
    const delays = [100, 0];
    const store: TokenStore = {
      get: () => kept.get(),
      set: async (pair) => {
        // A slow store is the scenario: the first write takes long enough for the second to overtake it.
        await new Promise((resolve) => setTimeout(resolve, delays.shift() ?? 0));
        kept.set(pair);
      },
      clear: () => kept.clear(),
    };
    const { api, auth, service } = rig({ store });
    const later = otherHoldersPair(service);

    await api.get('/orders');
    await auth.setTokens(later);
    await auth.flush();

    expect(kept.get()).toMatchObject(later);
    expect(await auth.getTokens()).toMatchObject(later);
  });
});
