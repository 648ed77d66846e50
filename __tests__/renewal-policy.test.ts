import axios, { isAxiosError } from 'axios';
import type { AxiosInstance } from 'axios';
import nock from 'nock';
import { attachTokenAuth, MemoryTokenStore } from '../lib/index.js';
import type { TokenAuth, TokenAuthOptions } from '../lib/index.js';
import { closeEmulatorsAfterEach, e2e, E2E_PASSWORD, E2E_USER } from './helpers/emulator.js';
import { burst, fulfilled, manualClock } from './helpers/flow.js';
import { FakeTokenService } from './helpers/service.js';
import { rig } from './helpers/setup.js';

// What the renewal spends when refusals are not about the token, and how far ahead it renews tokens of any life:
// over nock, and end to end against the emulator on the loopback, which nock lets through.
beforeEach(() => {
  nock.enableNetConnect('127.0.0.1');
});
closeEmulatorsAfterEach();

/** Every result a 401 that reached the caller as axios' own error, untouched by the plugin. */
function expectRefusedAsIs(results: PromiseSettledResult<unknown>[]): void {
  for (const result of results) {
    expect(result.status).toBe('rejected');
    const reason = (result as PromiseRejectedResult).reason as unknown;
    expect(isAxiosError(reason) && reason.response?.status).toBe(401);
  }
}

/** 200 requests to 200 paths, in bursts of 10, one burst after the other. */
async function twoHundredPaths(get: (path: string) => Promise<unknown>): Promise<PromiseSettledResult<unknown>[]> {
  const results: PromiseSettledResult<unknown>[] = [];
  for (let start = 0; start < 200; start += 10) results.push(...(await burst(10, (i) => get(`/orders/${start + i}`))));
  return results;
}

describe('renewals that cure nothing back off', () => {
  it('a service refusing every data call: 200 paths cost one login and one token call, then a real expiry renews once healed', async () => {
    const clock = manualClock();
    const { emulator, api } = await e2e({ clock: clock.now }, { clock: clock.now });
    await api.get('/prime');
    emulator.inject('data', { status: 401, body: { detail: 'Given token not valid for any token type' } }, 100_000);

    const refused = await twoHundredPaths((path) => api.get(path));

    expectRefusedAsIs(refused);
    // The first renewal's pair, refused at once on ten paths: refusals are general, and renewals for them wait.
    expect(emulator.counters).toMatchObject({ logins: 1, refreshes: 1, tokenCalls: 2 });

    emulator.clearFaults();
    emulator.expireAccessTokens();
    clock.advance(1_000);
    const healed = await burst(10, (i) => api.get(`/orders/${i}`));

    expect(fulfilled(healed)).toBe(10);
    expect(emulator.counters).toMatchObject({ logins: 1, refreshes: 2, tokenCalls: 3 });
  });

  it('the same over nock: the back-off doubles while renewals cure nothing, and ends with the first renewal that cures', async () => {
    const clock = manualClock();
    const { service, api } = rig({ clock: clock.now });
    await api.get('/prime');
    for (let i = 0; i < 200; i += 1) service.alwaysUnauthorized.add(`/orders/${i}`);

    expectRefusedAsIs(await twoHundredPaths((path) => api.get(path)));
    expect(service.counters.refreshCalls).toBe(1);

    // 1 s after the renewal that cured nothing a refusal may renew again; that one cures nothing either: 2 s more.
    clock.advance(999);
    expectRefusedAsIs(await burst(5, (i) => api.get(`/orders/${i}`)));
    expect(service.counters.refreshCalls).toBe(1);
    clock.advance(1);
    expectRefusedAsIs(await burst(5, (i) => api.get(`/orders/${50 + i}`)));
    expect(service.counters.refreshCalls).toBe(2);
    clock.advance(1_999);
    expectRefusedAsIs(await burst(5, (i) => api.get(`/orders/${100 + i}`)));
    expect(service.counters.refreshCalls).toBe(2);
    clock.advance(1);
    expectRefusedAsIs(await burst(5, (i) => api.get(`/orders/${150 + i}`)));
    expect(service.counters.refreshCalls).toBe(3);

    // A request accepted elsewhere says nothing of the endpoints that refuse: the 4 s wait holds.
    expect((await api.get('/healthy')).status).toBe(200);
    service.expireAccessTokens();
    expectRefusedAsIs(await burst(5, (i) => api.get(`/after/${i}`)));
    expect(service.counters.refreshCalls).toBe(3);

    // Once it is over, a renewal cures the refusals: its replays are accepted, and the back-off ends.
    clock.advance(4_000);
    expect(fulfilled(await burst(10, (i) => api.get(`/after/${i}`)))).toBe(10);
    expect(service.counters.refreshCalls).toBe(4);
    service.expireAccessTokens();
    expect(fulfilled(await burst(10, (i) => api.get(`/again/${i}`)))).toBe(10);
    expect(service.counters.refreshCalls).toBe(5);
    expect(service.counters.loginCalls).toBe(1);
  });

  it('a permission on each object, with a healthy endpoint answered between: the healthy answers do not reopen renewals', async () => {
    const { service, api } = rig({ clock: manualClock().now });
    await api.get('/prime');
    for (let i = 0; i < 20; i += 1) service.alwaysUnauthorized.add(`/orders/${i}`);

    for (let i = 0; i < 20; i += 1) {
      expectRefusedAsIs(await burst(1, () => api.get(`/orders/${i}`)));
      expect((await api.get('/me')).status).toBe(200);
    }

    // The first object's refusal is a permission of it; the second makes refusals general, and the back-off holds.
    expect(service.counters.refreshCalls).toBe(2);
  });

  it('one request at a time, each to a new path: the second path refusing a renewed pair holds renewals back', async () => {
    const { service, api } = rig({ clock: manualClock().now });
    await api.get('/prime');
    for (let i = 0; i < 50; i += 1) service.alwaysUnauthorized.add(`/orders/${i}`);

    for (let i = 0; i < 50; i += 1) expectRefusedAsIs(await burst(1, () => api.get(`/orders/${i}`)));

    expect(service.counters.refreshCalls).toBe(2);
    expect(service.counters.loginCalls).toBe(1);
  });

  it('a permission on one endpoint while others work: one token call, its 401s reach the caller, the others unaffected', async () => {
    const { emulator, api } = await e2e({}, { alwaysUnauthorized: ['/admin'] });

    const bursts: PromiseSettledResult<unknown>[][] = [];
    for (let round = 0; round < 5; round += 1)
      bursts.push(await burst(10, (i) => api.get(i < 2 ? '/admin' : `/orders/${round * 10 + i}`)));

    for (const results of bursts) {
      expectRefusedAsIs(results.slice(0, 2));
      expect(fulfilled(results.slice(2))).toBe(8);
    }
    expect(emulator.counters).toMatchObject({ logins: 1, refreshes: 1 });

    // A real expiry still renews for the others.
    emulator.expireAccessTokens();
    expect(fulfilled(await burst(10, (i) => api.get(`/orders/${i}`)))).toBe(10);
    expect(emulator.counters).toMatchObject({ logins: 1, refreshes: 2 });
  });
});

describe('margins from the token’s own life', () => {
  it('`accessTokenLifetimeMs: 3000` alone: 9 s of steady traffic renewed ahead, no 401, four token-service calls', async () => {
    const clock = manualClock();
    const { emulator, api } = await e2e(
      { clock: clock.now, accessTokenLifetimeMs: 3_000 },
      { clock: clock.now, accessTtlMs: 3_000 },
    );

    let failed = 0;
    for (let elapsed = 0; elapsed < 9_000; elapsed += 100) {
      failed += 3 - fulfilled(await burst(3, (i) => api.get(`/orders/${i}`)));
      clock.advance(100);
    }

    expect(failed).toBe(0);
    expect(emulator.counters.unauthorized).toBe(0);
    // A login, then a renewal 300 ms (a tenth of the life) before each expiry: at 2.7 s, 5.4 s and 8.1 s.
    expect(emulator.counters).toMatchObject({ logins: 1, refreshes: 3, tokenCalls: 4 });
  });

  it.each<[string, Partial<TokenAuthOptions>, (service: FakeTokenService) => void]>([
    ['`expires_in: 60`', {}, (service) => void (service.expiresIn = 60)],
    ['a JWT of 60 s', {}, (service) => void (service.jwtLifetimeSec = 60)],
    ['`accessTokenLifetimeMs: 60_000`', { accessTokenLifetimeMs: 60_000 }, () => {}],
  ])('a 60 s token told by %s renews 6 s before it expires: five times in 300 s', async (_, options, steer) => {
    const clock = manualClock();
    const { service, api } = rig({ clock: clock.now, ...options });
    service.clockSec = () => Math.floor(clock.now() / 1000);
    steer(service);

    for (let second = 0; second < 300; second += 1) {
      await api.get('/orders');
      clock.advance(1_000);
    }

    // Renewals at 54 s, 108 s, 162 s, 216 s and 270 s: one per lifetime less the margin, never a 401.
    expect(service.counters.loginCalls).toBe(1);
    expect(service.counters.refreshCalls).toBe(5);
    expect(service.counters.dataCalls).toBe(300);
  });
});

describe('one lifetime rule for an answer and the pair held', () => {
  it('a JWT of 60 s from a service 57 s behind our clock: trusted to its 401, not renewed before every request', async () => {
    const clock = manualClock();
    const behind = () => clock.now() - 57_000;
    const { emulator, api } = await e2e(
      { clock: clock.now },
      { clock: behind, tokenFormat: 'jwt', accessTtlMs: 60_000 },
    );

    for (let i = 0; i < 10; i += 1) expect((await api.get(`/orders/${i}`)).status).toBe(200);

    // 3 s left by our clock, within the 6 s margin of a 60 s token: acted on at its 401 only, so no token call.
    expect(emulator.counters).toMatchObject({ logins: 1, tokenCalls: 1, unauthorized: 0 });
  });
});

/**
 * A first instance's pair, logged in once, put in a new store as a custom store or another library would keep it: no
 * expiry beside the tokens. The first instance is ejected.
 */
async function storedWithoutExpiry({ api, auth }: { api: AxiosInstance; auth: TokenAuth }) {
  await api.get('/prime');
  const stored = (await auth.getTokens())!;
  auth.eject();
  const store = new MemoryTokenStore();
  store.set({ access: stored.access, refresh: stored.refresh! });
  return { stored, store };
}

describe('stored pairs know their expiry', () => {
  it('an expired JWT stored without `expiresAt`: 5 concurrent requests, none sent with it, one token call', async () => {
    const clock = manualClock();
    const service = new FakeTokenService();
    service.clockSec = () => Math.floor(clock.now() / 1000);
    service.jwtLifetimeSec = 600;
    const { stored, store } = await storedWithoutExpiry(rig({ clock: clock.now }, service));
    clock.advance(601_000);
    const dataBefore = service.counters.dataCalls;

    const { api } = rig({ clock: clock.now, store }, service);
    const results = await burst(5, (i) => api.get(`/orders/${i}`));

    expect(fulfilled(results)).toBe(5);
    expect(service.counters.refreshCalls).toBe(1);
    const sent = service.received.filter((entry) => entry.route === 'data').slice(dataBefore);
    expect(sent).toHaveLength(5);
    expect(sent.filter((entry) => entry.authorization === `Bearer ${stored.access}`)).toHaveLength(0);
  });

  it('the same against the emulator’s JWTs', async () => {
    const clock = manualClock();
    const first = await e2e({ clock: clock.now }, { clock: clock.now, tokenFormat: 'jwt', accessTtlMs: 60_000 });
    const { store } = await storedWithoutExpiry(first);
    clock.advance(61_000);

    const api = axios.create({ baseURL: first.emulator.url });
    attachTokenAuth(api, { credentials: { username: E2E_USER, password: E2E_PASSWORD }, clock: clock.now, store });
    const results = await burst(5, (i) => api.get(`/orders/${i}`));

    expect(fulfilled(results)).toBe(5);
    expect(first.emulator.counters).toMatchObject({ logins: 1, refreshes: 1, unauthorized: 0 });
  });
});
