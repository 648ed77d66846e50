import axios from 'axios';
import type { AxiosError } from 'axios';
import { isTokenAuthError } from '../lib/index.js';
import { closeEmulatorsAfterEach, e2e, emulator, E2E_PASSWORD, E2E_USER } from './helpers/emulator.js';
import { burst, fulfilled, manualClock, until } from './helpers/flow.js';

// The plugin's core behaviours, numbered, against the emulator over real HTTP: no nock.
closeEmulatorsAfterEach();

const ORDERS = '/allocation/api/v1/tracking/order-list';

describe('end to end on the emulator', () => {
  it('1. shares one Basic login among concurrent first requests', async () => {
    const { emulator: service, api, auth } = await e2e();

    const results = await burst(50, () => api.get(ORDERS));

    expect(fulfilled(results)).toBe(50);
    expect(service.counters).toMatchObject({ logins: 1, refreshes: 0, rejected: 0, unauthorized: 0 });
    const login = service.calls.find((call) => call.route === 'login');
    expect(login?.authorization).toBe(`Basic ${Buffer.from(`${E2E_USER}:${E2E_PASSWORD}`).toString('base64')}`);
    expect((await auth.getTokens())?.refresh).toMatch(/^ref_/);
  });

  it('2. shares one renewal among 200 requests refused at once, each replayed once', async () => {
    const { emulator: service, api, auth } = await e2e();
    await api.get(ORDERS);
    service.expireAccessTokens();

    const results = await burst(200, (i) => api.post(ORDERS, { i }));

    expect(fulfilled(results)).toBe(200);
    expect(service.counters).toMatchObject({ logins: 1, refreshes: 1, unauthorized: 200 });
    expect(auth.stats()).toMatchObject({ logins: 1, refreshes: 1, replays: 200, failures: 0 });
  });

  it('3. replays a late 401 with the stored token and no new renewal', async () => {
    const { emulator: service, api } = await e2e({}, { latency: { data: ({ path }) => (path === '/slow' ? 150 : 0) } });
    await api.get(ORDERS);
    service.expireAccessTokens();

    const results = await Promise.allSettled([api.get('/slow'), api.get(ORDERS), api.get(ORDERS)]);

    expect(fulfilled(results)).toBe(3);
    expect(service.counters.refreshes).toBe(1);
  });

  it('4. hands a 401 the renewal does not cure to the caller, and spends no more token calls on it', async () => {
    const { emulator: service, api } = await e2e({}, { alwaysUnauthorized: ['/admin'] });
    await api.get(ORDERS);

    const first = (await api.get('/admin').catch((e: unknown) => e)) as AxiosError;
    const later = await burst(30, () => api.get('/admin'));

    expect(first.response?.status).toBe(401);
    expect(fulfilled(later)).toBe(0);
    expect(service.counters.refreshes).toBe(1);
    expect(service.calls.filter((call) => call.path === '/admin')).toHaveLength(2 + 30);
  });

  it('5. uses the rotated refresh token: each expiry spends the last one issued', async () => {
    const { emulator: service, api } = await e2e();
    await api.get(ORDERS);

    for (let expiry = 1; expiry <= 4; expiry += 1) {
      service.expireAccessTokens();
      expect(fulfilled(await burst(20, () => api.get(ORDERS)))).toBe(20);
    }

    expect(service.counters).toMatchObject({ logins: 1, refreshes: 4, rejected: 0 });
  });

  it('6a. logs in once when the refresh token is refused, then replays', async () => {
    const { emulator: service, api } = await e2e();
    await api.get(ORDERS);
    service.expireAccessTokens();
    service.revokeRefreshTokens();

    const results = await burst(40, () => api.get(ORDERS));

    expect(fulfilled(results)).toBe(40);
    expect(service.counters).toMatchObject({ logins: 2, refreshes: 0, rejected: 1 });
  });

  it('6b. rejects everyone with LOGIN_REJECTED and waits out the cooldown before trying again', async () => {
    const clock = manualClock();
    const started = await emulator();
    const api = axios.create({ baseURL: started.url });
    const { attachTokenAuth } = await import('../lib/index.js');
    attachTokenAuth(api, { credentials: { username: E2E_USER, password: 'wrong' }, clock: clock.now });

    const first = await burst(10, () => api.get(ORDERS));
    const during = await burst(10, () => api.get(ORDERS));
    clock.advance(60_000);
    await api.get(ORDERS).catch(() => undefined);

    const codes = [...first, ...during].map(
      (r) => r.status === 'rejected' && isTokenAuthError(r.reason) && r.reason.code,
    );
    expect(new Set(codes)).toEqual(new Set(['LOGIN_REJECTED']));
    expect(started.counters.rejected).toBe(2);
  });

  it('7. renews a token known to be expired before sending, with no 401 collected', async () => {
    const clock = manualClock();
    const { emulator: service, api } = await e2e(
      { clock: clock.now },
      { clock: clock.now, tokenFormat: 'jwt', accessTtlMs: 10 * 60_000 },
    );
    await api.get(ORDERS);

    clock.advance(10 * 60_000 - 29_000);
    const results = await burst(20, () => api.get(ORDERS));

    expect(fulfilled(results)).toBe(20);
    expect(service.counters).toMatchObject({ logins: 1, refreshes: 1, unauthorized: 0 });
  });

  it('8. keeps token calls off the user’s instance, times a hung one out, and retries a 503', async () => {
    const { emulator: service, api } = await e2e({ tokenTimeoutMs: 300 });
    const seen: string[] = [];
    api.interceptors.request.use((config) => (seen.push(config.url ?? ''), config));
    service.inject('login', 'hang');

    const hung = await burst(5, () => api.get(ORDERS));
    service.inject('login', { status: 503 });
    const retried = await api.get(ORDERS);

    expect(hung.map((r) => r.status === 'rejected' && isTokenAuthError(r.reason) && r.reason.code)).toEqual(
      Array(5).fill('TOKEN_SERVICE_UNAVAILABLE'),
    );
    expect(retried.status).toBe(200);
    expect(service.counters).toMatchObject({ tokenCalls: 3, logins: 1 });
    expect(seen.every((url) => url === ORDERS)).toBe(true);
  });

  it('9. rejects an aborted waiter at once as CanceledError while the others go on', async () => {
    // The login is slow enough that the abort, sent as soon as the login call arrives, comes before its answer.
    const { emulator: service, api } = await e2e({}, { latency: { login: 500 } });
    const controller = new AbortController();

    const aborted = api.get(ORDERS, { signal: controller.signal });
    const others = burst(5, () => api.get(ORDERS));
    await until(() => service.calls.some((call) => call.route === 'login'));
    controller.abort();

    const error = await aborted.catch((e: unknown) => e);
    expect(axios.isCancel(error)).toBe(true);
    expect(service.counters.logins).toBe(0);
    expect(fulfilled(await others)).toBe(5);
    expect(service.counters.logins).toBe(1);
  });

  it('10. sends each secret only where it belongs, and no token to another origin', async () => {
    const { emulator: service, api, auth } = await e2e();
    const stranger = await emulator();
    await api.get(ORDERS);
    service.expireAccessTokens();
    await api.post(ORDERS, { a: 1 });
    await api.get(`${stranger.url}/elsewhere`).catch(() => undefined);

    const refreshTokens = service.calls
      .filter((call) => call.route === 'token')
      .map((call) => (JSON.parse(call.body) as { refresh_token: string }).refresh_token);
    for (const call of service.calls) {
      if (call.route === 'login') expect(call.authorization).toMatch(/^Basic /);
      else expect(call.authorization ?? '').not.toMatch(/^Basic /);
      if (call.route !== 'data') expect(call.authorization ?? '').not.toMatch(/^Bearer /);
      if (call.route !== 'token') for (const token of refreshTokens) expect(call.body).not.toContain(token);
    }
    expect(stranger.calls.map((call) => call.authorization)).toEqual([undefined]);
    expect(auth.stats().refreshes).toBe(1);
  });

  it('11. replays the request as sent: method, query, JSON body and content type', async () => {
    const { emulator: service, api } = await e2e();
    await api.get(ORDERS);
    service.expireAccessTokens();

    const response = await api.patch(
      `${ORDERS}/7`,
      { status: 'packed', tags: ['a'] },
      { params: { site: 'n' }, headers: { 'X-Trace': 't-1' } },
    );

    const sends = service.calls.filter((call) => call.path.startsWith(`${ORDERS}/7`));
    expect(sends.map((call) => [call.method, call.path, call.body])).toEqual([
      ['PATCH', `${ORDERS}/7?site=n`, '{"status":"packed","tags":["a"]}'],
      ['PATCH', `${ORDERS}/7?site=n`, '{"status":"packed","tags":["a"]}'],
    ]);
    expect(response.data).toMatchObject({
      method: 'PATCH',
      body: { status: 'packed', tags: ['a'] },
      // eslint-disable-next-line @typescript-eslint/no-unsafe-assignment -- jest types its asymmetric matchers as any
      contentType: expect.stringMatching(/application\/json/),
    });
  });
});

describe('at scale on the emulator', () => {
  it('a burst of 1,000 concurrent requests across an expiry costs exactly one refresh and no failure', async () => {
    const { emulator: service, api } = await e2e({}, { log: false });
    await api.get(ORDERS);
    service.expireAccessTokens();

    const results = await burst(1000, () => api.get(ORDERS));

    expect(fulfilled(results)).toBe(1000);
    expect(service.counters).toMatchObject({ logins: 1, refreshes: 1 });
  });

  it('a long run of 40 expiries costs one refresh each and one login in all', async () => {
    // Forty expiries in seconds is far past any sane budget of token calls per hour: this test is about the count.
    const { emulator: service, api } = await e2e(
      { tokenBudget: false },
      { log: false, latency: { data: ({ path }) => Number(path.split('/').pop()) % 7 } },
    );

    for (let expiry = 1; expiry <= 40; expiry += 1) {
      const results = await burst(25, (i) => api.get(`/stock/${i}`));
      expect(fulfilled(results)).toBe(25);
      service.expireAccessTokens();
    }
    expect(fulfilled(await burst(25, (i) => api.get(`/stock/${i}`)))).toBe(25);

    expect(service.counters).toMatchObject({ logins: 1, refreshes: 40, expiries: 40 });
  });
});
