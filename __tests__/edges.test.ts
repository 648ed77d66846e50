import { Readable } from 'node:stream';
import axios from 'axios';
import nock from 'nock';
import { attachTokenAuth, isTokenAuthError, MemoryTokenStore } from '../lib/index.js';
import type { TokenStore } from '../lib/index.js';
import { closeEmulatorsAfterEach, e2e, E2E_PASSWORD, E2E_USER, emulator } from './helpers/emulator.js';
import { burst, fulfilled, until } from './helpers/flow.js';
import { findLeaks } from './helpers/scan-secrets.js';
import { failureOf } from './helpers/settled.js';

// Edges of the plugin's life among the rest of axios: shared stores, logout and eject mid-renewal, the user's own
// transforms, bodies that cannot be sent twice, redirects, and what errors carry back. Mostly on the emulator over
// the loopback, which nock lets through; a redirect across origins over nock.
beforeEach(() => {
  nock.enableNetConnect('127.0.0.1');
});
closeEmulatorsAfterEach();

const credentials = { username: E2E_USER, password: E2E_PASSWORD };

describe('a 401 that a renewal does not cure', () => {
  it('marks that endpoint only: a later expiry of the token still renews for the others', async () => {
    const { emulator: service, api } = await e2e({}, { alwaysUnauthorized: ['/forbidden'] });
    await api.get('/ok');
    await failureOf(api.get('/forbidden'));
    expect(service.counters.refreshes).toBe(1);

    service.expireAccessTokens();
    const results = await burst(10, () => api.get('/ok'));

    expect(fulfilled(results)).toBe(10);
    expect(service.counters.refreshes).toBe(2);
  });

  it('costs one token call for both holders, not one per request nor per holder, when two instances share a store: the store keeps what the account learnt', async () => {
    const service = await emulator({ alwaysUnauthorized: ['/forbidden'] });
    const store = new MemoryTokenStore();
    const [a, b] = [axios.create({ baseURL: service.url }), axios.create({ baseURL: service.url })];
    for (const api of [a, b]) attachTokenAuth(api, { credentials, store });

    for (let i = 0; i < 12; i += 1) await failureOf((i % 2 ? a : b).get('/forbidden'));

    expect(service.counters.logins).toBe(1);
    expect(service.counters.refreshes).toBe(1);
  });
});

describe('logout() while a renewal runs', () => {
  it('fails the waiting requests with LOGGED_OUT and does not bring the tokens back', async () => {
    const store = new MemoryTokenStore();
    const { emulator: service, api, auth } = await e2e({ store }, { latency: { login: 120 } });
    // The login answers after the logout; it counts, and what it brought must be dropped.
    const answered = new Promise((resolve) => auth.on('login', resolve));

    const waiting = failureOf(api.get('/orders'), isTokenAuthError);
    await until(() => service.calls.some((call) => call.route === 'login'));
    await auth.logout();

    const error = await waiting;
    expect(error.code).toBe('LOGGED_OUT');
    expect(error.message).toBe(
      '`auth.logout()` was called while this request waited for tokens; the tokens obtained meanwhile were dropped.',
    );
    await answered;
    await auth.flush();
    expect(await auth.getTokens()).toBeNull();
    expect(store.get()).toBeNull();
  });
});

describe('eject() while a renewal runs', () => {
  it('hands the 401 to the caller instead of replaying it without a token', async () => {
    const { emulator: service, api, auth } = await e2e({}, { latency: { token: 100 } });
    await api.get('/orders');
    service.expireAccessTokens();

    const refused = failureOf(api.get('/orders'), axios.isAxiosError);
    await until(() => service.calls.some((call) => call.route === 'token'));
    auth.eject();

    expect((await refused).response?.status).toBe(401);
    expect(service.calls.filter((call) => call.route === 'data')).toHaveLength(2);
  });
});

describe('replays', () => {
  it('stay replays when a user interceptor sets its own transformRequest: no renewal loop', async () => {
    const { emulator: service, api } = await e2e({}, { alwaysUnauthorized: ['/forbidden'] });
    api.interceptors.request.use((config) => {
      config.transformRequest = [(data: unknown) => (data === undefined ? data : JSON.stringify(data))];
      return config;
    });

    const error = await failureOf(api.post('/forbidden', { a: 1 }), axios.isAxiosError);

    expect(error.response?.status).toBe(401);
    expect(service.counters.tokenCalls).toBe(2);
    expect(service.calls.filter((call) => call.path === '/forbidden')).toHaveLength(2);
  });

  it('are not attempted for a stream body, which the first send consumed: the caller gets the 401, and the renewal serves the next', async () => {
    const { emulator: service, api } = await e2e();
    await api.get('/orders');
    service.expireAccessTokens();

    const errors = await Promise.all(
      [1, 2, 3].map(() =>
        failureOf(
          api.post('/upload', Readable.from(['line 1\n', 'line 2\n']), { headers: { 'Content-Type': 'text/plain' } }),
          axios.isAxiosError,
        ),
      ),
    );

    expect(errors.map((error) => error.response?.status)).toEqual([401, 401, 401]);
    // The refusal reaches the caller masked, as any other: no token in its config's headers or anywhere in it.
    expect(findLeaks(errors, [], { reachable: true })).toEqual([]);
    expect(service.calls.filter((call) => call.path === '/upload').map((call) => call.body)).toEqual(
      Array(3).fill('line 1\nline 2\n'),
    );
    // One renewal for the three, for the uploads that follow: the next one goes through.
    expect(service.counters.refreshes).toBe(1);
    const next = await api.post('/upload', Readable.from(['line 3\n']), { headers: { 'Content-Type': 'text/plain' } });
    expect(next.status).toBe(200);
    expect(service.counters.refreshes).toBe(1);
  });

  it('a stream endpoint that renewing does not cure costs one token call, not one per upload', async () => {
    const { emulator: service, api } = await e2e({}, { alwaysUnauthorized: ['/forbidden-upload'] });
    await api.get('/orders');

    for (let i = 0; i < 5; i += 1) {
      const error = await failureOf(
        api.post('/forbidden-upload', Readable.from([`part ${i}\n`]), { headers: { 'Content-Type': 'text/plain' } }),
        axios.isAxiosError,
      );
      expect(error.response?.status).toBe(401);
    }

    expect(service.counters.refreshes).toBe(1);
    expect((await api.get('/orders')).status).toBe(200);
  });
});

describe('options checked at attach', () => {
  it('refuses tokenTimeoutMs: 0, which axios reads as no timeout at all', () => {
    expect(() =>
      attachTokenAuth(axios.create({ baseURL: 'https://api.example.com' }), { credentials, tokenTimeoutMs: 0 }),
    ).toThrow(/`tokenTimeoutMs` must be a number of milliseconds \(more than 0\)/);
  });
});

describe('secrets in what comes back', () => {
  it('masks an Authorization header that has no scheme', async () => {
    const { emulator: service, api } = await e2e({
      applyToken: (config, access) => void config.headers.set('Authorization', access),
    });
    service.inject('data', { status: 503 });

    const error = await failureOf(api.get('/orders'), axios.isAxiosError);

    expect(error.config?.headers.Authorization).toBe('[REDACTED]');
  });

  it('scrubs a token an endpoint echoes in its error body, and keeps non-secret params usable', async () => {
    const since = new Date('2026-01-01T00:00:00Z');
    const { emulator: service, api, auth } = await e2e();
    await api.get('/orders');
    const { access } = (await auth.getTokens())!;
    service.inject('data', { status: 500, body: { detail: `could not use Bearer ${access}` } });

    const error = await failureOf(api.get('/orders', { params: { since } }), axios.isAxiosError);

    expect(JSON.stringify(error.response?.data)).not.toContain(access);
    expect((error.config?.params as { since?: unknown } | undefined)?.since).toBe(since);
  });

  it('does not let a custom token header follow a redirect to another origin', async () => {
    nock.disableNetConnect();
    const seen: Array<string | undefined> = [];
    nock('https://auth.test')
      .persist()
      .post('/auth/api/v1/accounts/login')
      .reply(200, { access: 'acc-redirect-123456', refresh: 'ref-redirect-123456' });
    nock('https://api.test').get('/moved').reply(302, undefined, { Location: 'https://elsewhere.test/landing' });
    nock('https://elsewhere.test')
      .get('/landing')
      .reply(function () {
        seen.push(this.req.headers['x-session']);
        return [200, {}];
      });
    const api = axios.create({ baseURL: 'https://api.test' });
    attachTokenAuth(api, {
      credentials,
      authBaseURL: 'https://auth.test',
      applyToken: (config, access) => void config.headers.set('X-Session', access),
    });

    await api.get('/moved');

    expect(seen).toEqual([undefined]);
  });

  it('redacts a store error that quotes a token, in the cause as well', async () => {
    let failing = false;
    const inner = new MemoryTokenStore();
    const store: TokenStore = {
      get: () => inner.get(),
      set: (pair) => {
        if (failing) throw new Error(`cannot write ${pair.access}`);
        inner.set(pair);
      },
      clear: () => inner.clear(),
    };
    const { api, auth } = await e2e({ store });
    const causes: unknown[] = [];
    auth.on('failure', (event) =>
      causes.push(event.error.message, (event.error.cause as Error).message, (event.error.cause as Error).stack),
    );
    failing = true;

    await auth.refresh();
    await api.get('/orders');

    const { access } = (await auth.getTokens())!;
    expect(causes.length).toBe(3);
    expect(causes.join('\n')).not.toContain(access);
  });

  it('keeps an application-wide default Authorization off the token calls', async () => {
    const service = await emulator();
    axios.defaults.headers.common.Authorization = 'Bearer app-wide-secret';
    try {
      const api = axios.create({ baseURL: service.url });
      attachTokenAuth(api, { credentials });
      await api.get('/orders');
      service.expireAccessTokens();
      await api.get('/orders');
    } finally {
      delete axios.defaults.headers.common.Authorization;
    }

    const tokenCall = service.calls.find((call) => call.route === 'token');
    expect(tokenCall?.authorization).toBeUndefined();
  });
});

describe('logout()', () => {
  it('forgets the endpoints a renewal did not cure: the next login may be another account', async () => {
    const { emulator: service, api, auth } = await e2e({}, { alwaysUnauthorized: ['/reports'] });
    await api.get('/orders');
    await failureOf(api.get('/reports'));
    expect(service.counters.refreshes).toBe(1);

    await auth.logout();
    await auth.login();
    service.setAlwaysUnauthorized('/reports', false);
    await api.get('/orders');
    service.expireAccessTokens();

    await expect(api.get('/reports')).resolves.toMatchObject({ status: 200 });
    expect(service.counters).toMatchObject({ logins: 2, refreshes: 2 });
  });
});
