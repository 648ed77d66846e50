import axios, { AxiosError, isAxiosError } from 'axios';
import type { AxiosInstance } from 'axios';
import nock from 'nock';
import { attachTokenAuth, isTokenAuthError } from '../lib/index.js';
import { isRetried } from '../lib/token-calls/retries.js';
import { TokenClient } from '../lib/token-calls/client.js';
import { resolveOptions } from '../lib/options/resolve.js';
import type { TokenAuthErrorCode, TokenAuthOptions } from '../lib/index.js';
import { closeEmulatorsAfterEach, e2e } from './helpers/emulator.js';
import { API, FakeTokenService, LOGIN, PASSWORD, TOKEN, USERNAME } from './helpers/service.js';
import type { Fault } from './helpers/service.js';
import { burst, fulfilled, rig, useNock } from './helpers/setup.js';
import type { Rig } from './helpers/setup.js';

useNock();

const credentials = { username: USERNAME, password: PASSWORD };

type Route = 'login' | 'token';

function faultsOf(setup: Rig, route: Route): Fault[] {
  return route === 'login' ? setup.service.loginFaults : setup.service.tokenFaults;
}

/** The `route` calls the service received, faults and refusals included. */
function callsTo(service: FakeTokenService, route: Route): number {
  return route === 'login' ? service.counters.loginCalls : service.counters.refreshCalls;
}

/**
 * Brings the rig to the point where the next request needs a `route` call: nothing stored for a login; a stored
 * pair whose access token the service no longer accepts for a token call (the request's 401 starts the refresh).
 */
async function needing(route: Route, setup: Rig): Promise<void> {
  if (route === 'login') return;
  await setup.api.get('/prime');
  setup.service.expireAccessTokens();
}

/** Login calls made before the `route` call under test, by {@link needing}. */
const loginsBefore = (route: Route): number => (route === 'login' ? 0 : 1);

function codeOf(error: unknown): TokenAuthErrorCode | false {
  return isTokenAuthError(error) && error.code;
}

function reasons<T>(results: PromiseSettledResult<T>[]): unknown[] {
  return results.map((result): unknown => (result.status === 'rejected' ? result.reason : result));
}

describe('token calls and the instance they serve', () => {
  /** Counts what the user's own interceptors on `api` see. */
  function watch(api: AxiosInstance, seen: { requests: string[]; responses: string[]; errors: string[] }): void {
    api.interceptors.request.use((config) => {
      seen.requests.push(`${config.baseURL ?? ''}|${config.url ?? ''}`);
      return config;
    });
    api.interceptors.response.use(
      (response) => {
        seen.responses.push(response.config.url ?? '');
        return response;
      },
      (error: unknown) => {
        seen.errors.push(isAxiosError(error) ? (error.config?.url ?? '') : String(error));
        throw error;
      },
    );
  }

  it('keeps login and token calls out of the interceptors registered before and after attaching, with authBaseURL equal to baseURL', async () => {
    const service = new FakeTokenService();
    expect(service.authBase).toBe(service.dataBase);
    const api = axios.create({ baseURL: service.dataBase });
    const before = { requests: [] as string[], responses: [] as string[], errors: [] as string[] };
    const after = { requests: [] as string[], responses: [] as string[], errors: [] as string[] };
    watch(api, before);
    const auth = attachTokenAuth(api, { credentials, tokenRetryDelayMs: 1 });
    watch(api, after);

    await api.get('/prime');
    service.expireAccessTokens();
    const results = await burst(5, (i) => api.get(`/orders/${i}`));

    expect(fulfilled(results)).toBe(5);
    expect(service.counters.loginCalls).toBe(1);
    expect(service.counters.refreshCalls).toBe(1);
    expect(auth.stats()).toMatchObject({ logins: 1, refreshes: 1, replays: 5 });
    // Each request of the user passes every interceptor once, replay or not; nothing else does.
    const sent = ['/prime', ...Array.from({ length: 5 }, (_, i) => `/orders/${i}`)].sort();
    for (const seen of [before, after]) {
      expect(seen.requests.map((entry) => entry.split('|')[1]).sort()).toEqual(sent);
      expect(seen.requests.every((entry) => entry.startsWith(`${API}|`))).toBe(true);
      expect(seen.responses).toHaveLength(6);
      expect([...seen.requests, ...seen.responses, ...seen.errors].some((url) => url.includes('/auth/'))).toBe(false);
      // The data 401s were cured below the interceptors: none of them saw one.
      expect(seen.errors).toHaveLength(0);
    }
  }, 8000);

  it.each(['when created', 'after attaching'])(
    'sends token calls without the instance defaults, such as an Authorization header set %s',
    async (when) => {
      const service = new FakeTokenService();
      const api = axios.create({
        baseURL: service.dataBase,
        headers: when === 'when created' ? { Authorization: 'Token set-by-the-user' } : {},
      });
      attachTokenAuth(api, { credentials, tokenRetryDelayMs: 1 });
      if (when === 'after attaching') api.defaults.headers.common.Authorization = 'Token set-by-the-user';

      await api.get('/prime');
      service.expireAccessTokens();
      await api.get('/orders');

      const calls = service.received.filter((entry) => entry.route !== 'data');
      expect(calls.map((entry) => entry.route)).toEqual(['login', 'token']);
      expect(calls[0]?.authorization).toBe(
        `Basic ${Buffer.from(`${USERNAME}:${PASSWORD}`, 'utf8').toString('base64')}`,
      );
      expect(calls[1]?.authorization).toBeUndefined();
    },
    8000,
  );

  describe("with axios' default export as the instance", () => {
    // Restores the shared default export even when the test times out, so that other tests do not inherit it.
    let restore: (() => void) | undefined;
    afterEach(() => {
      restore?.();
      restore = undefined;
    });

    it('keeps token calls out of its interceptors', async () => {
      const service = new FakeTokenService();
      const seen: string[] = [];
      const requestId = axios.interceptors.request.use((config) => {
        seen.push(config.url ?? '');
        return config;
      });
      const auth = attachTokenAuth(axios, { credentials, authBaseURL: API, tokenRetryDelayMs: 1 });
      restore = () => {
        auth.eject();
        axios.interceptors.request.eject(requestId);
      };

      await axios.get(`${API}/prime`);
      service.expireAccessTokens();
      const results = await burst(3, (i) => axios.get(`${API}/orders/${i}`));

      expect(fulfilled(results)).toBe(3);
      expect(service.counters.loginCalls).toBe(1);
      expect(service.counters.refreshCalls).toBe(1);
      expect(seen.filter((url) => url.includes('/auth/'))).toEqual([]);
      // Each request once: the replays go out below the interceptors.
      expect(seen).toHaveLength(1 + 3);
    }, 8000);
  });
});

describe('timeouts of token calls', () => {
  it.each<Route>(['login', 'token'])(
    'fails a %s call that never answers after tokenTimeoutMs with TOKEN_SERVICE_UNAVAILABLE, and does not retry it',
    async (route) => {
      const setup = rig({ tokenTimeoutMs: 200, tokenRetries: 3 });
      const { service, api } = setup;
      await needing(route, setup);
      faultsOf(setup, route).push('hang');

      const results = await burst(5, (i) => api.get(`/orders/${i}`));

      const errors = reasons(results);
      expect(errors.map(codeOf)).toEqual(Array(5).fill('TOKEN_SERVICE_UNAVAILABLE'));
      expect(new Set(errors).size).toBe(1);
      const error = errors[0] as Error;
      expect(error.message).toMatch(/timed out after 200 ms/);
      expect(isAxiosError(error.cause) && error.cause.code).toBe('ECONNABORTED');
      expect(callsTo(service, route)).toBe(1);
      expect(service.counters.loginCalls).toBe(loginsBefore(route) + (route === 'login' ? 1 : 0));

      // The service answers again: the next request renews by itself.
      await expect(api.get('/after')).resolves.toMatchObject({ status: 200 });
      expect(callsTo(service, route)).toBe(2);
    },
    5000,
  );

  it('gives each retry its own tokenTimeoutMs: a 503 then a hang make two calls and end in a timeout', async () => {
    const { service, api } = rig({ tokenTimeoutMs: 200, tokenRetries: 3 });
    service.loginFaults.push([503, { detail: 'down' }], 'hang');

    const error = await api.get('/orders').catch((e: unknown) => e);

    expect(codeOf(error)).toBe('TOKEN_SERVICE_UNAVAILABLE');
    expect((error as Error).message).toMatch(/timed out after 200 ms/);
    expect(service.counters.loginCalls).toBe(2);
    expect(service.counters.logins).toBe(0);
  }, 5000);

  it('gives a retry the whole tokenTimeoutMs, not what the failed try left of it', async () => {
    // Each answer takes 200 ms of the 300 allowed: a retry held to the remaining ~100 ms would time out.
    const { service, api } = rig({ tokenTimeoutMs: 300, tokenRetries: 3 });
    service.tokenDelayMs = 200;
    service.loginFaults.push([503, { detail: 'down' }]);

    await expect(api.get('/orders')).resolves.toMatchObject({ status: 200 });

    expect(service.counters.loginCalls).toBe(2);
    expect(service.counters.logins).toBe(1);
  });
});

describe('retries of token calls', () => {
  it.each<Route>(['login', 'token'])(
    'retries a %s call answered 503, and every waiter gets the one success',
    async (route) => {
      const setup = rig();
      const { service, api, auth } = setup;
      await needing(route, setup);
      faultsOf(setup, route).push([503, { detail: 'Service Unavailable' }]);

      const results = await burst(10, (i) => api.get(`/orders/${i}`));

      expect(fulfilled(results)).toBe(10);
      expect(callsTo(service, route)).toBe(2);
      expect(callsTo(service, route === 'login' ? 'token' : 'login')).toBe(route === 'login' ? 0 : 1);
      expect(route === 'login' ? service.counters.logins : service.counters.refreshes).toBe(1);
      expect(auth.stats()).toMatchObject({ logins: 1, refreshes: route === 'token' ? 1 : 0, failures: 0 });
      if (route === 'token') {
        // The retry sends the very refresh token the first try sent.
        const bodies = service.received
          .filter((entry) => entry.route === 'token')
          .map((entry) => JSON.parse(entry.body) as unknown);
        expect(bodies[1]).toEqual(bodies[0]);
        expect(bodies[0]).toEqual({ refresh_token: service.issued[1] });
      }
    },
  );

  it('honours Retry-After on a 429: the retry reaches the service no sooner than the header asks', async () => {
    const { service, api } = rig({ tokenRetryDelayMs: 1 });
    service.loginFaults.push([429, { detail: 'Too many requests' }, { 'Retry-After': '1' }]);

    const results = await burst(3, (i) => api.get(`/orders/${i}`));

    expect(fulfilled(results)).toBe(3);
    const logins = service.received.filter((entry) => entry.route === 'login');
    expect(logins).toHaveLength(2);
    // tokenRetryDelayMs alone would retry after ~1 ms; the header asks for 1 s (less a margin for timer slack).
    expect(logins[1]!.at - logins[0]!.at).toBeGreaterThanOrEqual(900);
    expect(service.counters.logins).toBe(1);
  });

  it.each([429, 503])('does not retry a %i whose Retry-After is longer than tokenTimeoutMs', async (status) => {
    const { service, api } = rig({ tokenTimeoutMs: 200, tokenRetries: 3 });
    service.loginFaults.push([status, { detail: 'busy' }, { 'Retry-After': '1' }]);

    const error = await api.get('/orders').catch((e: unknown) => e);

    expect(codeOf(error)).toBe('TOKEN_SERVICE_UNAVAILABLE');
    expect(isTokenAuthError(error) && error.status).toBe(status);
    expect(service.counters.loginCalls).toBe(1);

    await expect(api.get('/after')).resolves.toMatchObject({ status: 200 });
    expect(service.counters.loginCalls).toBe(2);
  });

  it('honours Retry-After given as an HTTP date: the retry waits until then', async () => {
    const { service, api } = rig({ tokenRetryDelayMs: 1 });
    // An HTTP date has whole seconds: two seconds on, the date is between one and two seconds away.
    const until = new Date(Date.now() + 2000).toUTCString();
    service.loginFaults.push([503, { detail: 'Maintenance' }, { 'Retry-After': until }]);

    await expect(api.get('/orders')).resolves.toMatchObject({ status: 200 });

    const logins = service.received.filter((entry) => entry.route === 'login');
    expect(logins).toHaveLength(2);
    expect(logins[1]!.at).toBeGreaterThanOrEqual(Date.parse(until) - 100);
    expect(service.counters.logins).toBe(1);
  });

  it('does not retry a 503 whose Retry-After is an HTTP date further than tokenTimeoutMs', async () => {
    const { service, api } = rig({ tokenTimeoutMs: 1000, tokenRetries: 3 });
    service.loginFaults.push([
      503,
      { detail: 'Maintenance' },
      { 'Retry-After': new Date(Date.now() + 60_000).toUTCString() },
    ]);

    const error = await api.get('/orders').catch((e: unknown) => e);

    expect(codeOf(error)).toBe('TOKEN_SERVICE_UNAVAILABLE');
    expect(service.counters.loginCalls).toBe(1);
  });

  it('waits tokenRetryDelayMs before the first retry and doubles it before each next one', async () => {
    const { service, api } = rig({ tokenRetryDelayMs: 100, tokenRetries: 3 });
    service.loginFaults.push([500, { detail: 'boom' }], [502, { detail: 'boom' }], [503, { detail: 'boom' }]);

    await expect(api.get('/orders')).resolves.toMatchObject({ status: 200 });

    const at = service.received.filter((entry) => entry.route === 'login').map((entry) => entry.at);
    expect(at).toHaveLength(4);
    // Lower bounds only (a timer never fires early, less a few ms of clock rounding); the 20% of jitter above is not
    // measured, as speed is not asserted here.
    const gaps = at.slice(1).map((time, i) => time - at[i]!);
    gaps.forEach((gap, i) => expect(gap).toBeGreaterThanOrEqual(100 * 2 ** i - 5));
  });

  it('ends the retries at an error that is no failed call, such as the budget refusing a retry before it leaves', async () => {
    // budget.test.ts shows the refusal over real HTTP; here, that nothing is tried after it.
    const service = new FakeTokenService();
    service.loginFaults.push(Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' }));
    const refusal = new Error('refused by the budget');
    let passed = 0;
    const gate = {
      pass: () => {
        passed += 1;
        if (passed === 2) throw refusal;
      },
    };
    const options = resolveOptions(axios.create({ baseURL: API }), { tokenRetries: 5, tokenRetryDelayMs: 1 });
    const outcome = { attempts: 0, status: undefined };

    const login = new TokenClient(options).login(
      { username: USERNAME, password: PASSWORD },
      { account: undefined, gate, outcome },
    );

    await expect(login).rejects.toBe(refusal);
    expect([passed, outcome.attempts, service.counters.loginCalls]).toEqual([2, 1, 1]);
  });

  /** A connection that fails with `code`, as Node reports it. */
  const failing = (code: string): Error => Object.assign(new Error(`connect ${code} api.test`), { code });

  // is-retry-allowed 2.2.0's list, through which axios-retry decided before the plugin wrote its retries out.
  const DENIED = [
    'ENOTFOUND',
    'ENETUNREACH',
    'UNABLE_TO_GET_ISSUER_CERT',
    'UNABLE_TO_GET_CRL',
    'UNABLE_TO_DECRYPT_CERT_SIGNATURE',
    'UNABLE_TO_DECRYPT_CRL_SIGNATURE',
    'UNABLE_TO_DECODE_ISSUER_PUBLIC_KEY',
    'CERT_SIGNATURE_FAILURE',
    'CRL_SIGNATURE_FAILURE',
    'CERT_NOT_YET_VALID',
    'CERT_HAS_EXPIRED',
    'CRL_NOT_YET_VALID',
    'CRL_HAS_EXPIRED',
    'ERROR_IN_CERT_NOT_BEFORE_FIELD',
    'ERROR_IN_CERT_NOT_AFTER_FIELD',
    'ERROR_IN_CRL_LAST_UPDATE_FIELD',
    'ERROR_IN_CRL_NEXT_UPDATE_FIELD',
    'OUT_OF_MEM',
    'DEPTH_ZERO_SELF_SIGNED_CERT',
    'SELF_SIGNED_CERT_IN_CHAIN',
    'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
    'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
    'CERT_CHAIN_TOO_LONG',
    'CERT_REVOKED',
    'INVALID_CA',
    'PATH_LENGTH_EXCEEDED',
    'INVALID_PURPOSE',
    'CERT_UNTRUSTED',
    'CERT_REJECTED',
    'HOSTNAME_MISMATCH',
  ];
  const RETRIED = ['ECONNREFUSED', 'ECONNRESET', 'EAI_AGAIN', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ERR_NETWORK'];

  it('tells the codes another try cures from those it would meet again, as is-retry-allowed did', () => {
    const fault = (code: string) => new AxiosError(`failed with ${code}`, code);
    const retried = (code: string) => isRetried(fault(code), { timeoutMs: 1_000 });
    expect(DENIED.filter(retried)).toEqual([]);
    expect(RETRIED.filter((code) => !retried(code))).toEqual([]);
  });

  it.each(['ENOTFOUND', 'ENETUNREACH', 'CERT_HAS_EXPIRED', 'DEPTH_ZERO_SELF_SIGNED_CERT', 'HOSTNAME_MISMATCH'])(
    'does not retry a login that failed with %s, which another try would meet again',
    async (code) => {
      const { service, api } = rig({ tokenRetries: 3 });
      service.loginFaults.push(failing(code));

      const error = await api.get('/orders').catch((e: unknown) => e);

      expect(codeOf(error)).toBe('TOKEN_SERVICE_UNAVAILABLE');
      expect(((error as Error).cause as { code?: string }).code).toBe(code);
      expect(service.counters.loginCalls).toBe(1);
    },
  );

  it.each(['ECONNREFUSED', 'ECONNRESET', 'EAI_AGAIN'])(
    'retries a login that failed with %s, and it succeeds',
    async (code) => {
      const { service, api } = rig({ tokenRetries: 3 });
      service.loginFaults.push(failing(code));

      await expect(api.get('/orders')).resolves.toMatchObject({ status: 200 });

      expect(service.counters.loginCalls).toBe(2);
      expect(service.counters.logins).toBe(1);
    },
  );

  it('gives up after tokenRetries + 1 calls answered 500, failing every waiter with the same TOKEN_SERVICE_UNAVAILABLE', async () => {
    const { service, api, auth } = rig({ tokenRetries: 2 });
    service.loginFaults.push([500, { detail: 'boom' }], [500, { detail: 'boom' }], [500, { detail: 'boom' }]);

    const results = await burst(10, (i) => api.get(`/orders/${i}`));

    const errors = reasons(results);
    expect(errors.map(codeOf)).toEqual(Array(10).fill('TOKEN_SERVICE_UNAVAILABLE'));
    for (const error of errors) expect(error).toBe(errors[0]);
    expect(isTokenAuthError(errors[0]) && errors[0].status).toBe(500);
    expect(service.counters.loginCalls).toBe(3);
    expect(service.received.filter((entry) => entry.route === 'data')).toHaveLength(0);
    expect(auth.stats()).toMatchObject({ logins: 0, failures: 1 });

    // Recovered: the next request logs in by itself.
    await expect(api.get('/after')).resolves.toMatchObject({ status: 200 });
    expect(service.counters.loginCalls).toBe(4);
    expect(service.counters.logins).toBe(1);
  });

  it('makes 20 requests refused with 401 wait on one failing refresh series and reject with the same error object', async () => {
    const { service, api, auth } = rig({ tokenRetries: 2 });
    await api.get('/prime');
    service.expireAccessTokens();
    service.tokenFaults.push([502, { detail: 'bad gateway' }], [503, { detail: 'down' }], [500, { detail: 'boom' }]);

    const results = await burst(20, (i) => api.get(`/orders/${i}`));

    const errors = reasons(results);
    expect(fulfilled(results)).toBe(0);
    expect(codeOf(errors[0])).toBe('TOKEN_SERVICE_UNAVAILABLE');
    for (const error of errors) expect(error).toBe(errors[0]);
    expect(isTokenAuthError(errors[0]) && errors[0].status).toBe(500);
    expect(service.counters.refreshCalls).toBe(3);
    expect(service.counters.loginCalls).toBe(1);
    expect(auth.stats()).toMatchObject({ logins: 1, refreshes: 0, replays: 0, failures: 1 });

    // Recovered: the refresh token the service never spent renews on the next 401, with no login.
    await expect(api.get('/after')).resolves.toMatchObject({ status: 200 });
    expect(service.counters.refreshCalls).toBe(4);
    expect(service.counters.loginCalls).toBe(1);
    expect(service.counters.refreshes).toBe(1);
  });

  it('does not retry a login answered 4xx', async () => {
    const { service, api } = rig({ tokenRetries: 3 });
    service.loginFaults.push([403, { detail: 'Account locked.' }]);

    const results = await burst(5, (i) => api.get(`/orders/${i}`));

    expect(reasons(results).map(codeOf)).toEqual(Array(5).fill('LOGIN_REJECTED'));
    expect(service.counters.loginCalls).toBe(1);
  });

  it('does not retry a token call answered 4xx, and logs in instead', async () => {
    const { service, api } = rig({ tokenRetries: 3 });
    await api.get('/prime');
    service.expireAccessTokens();
    service.tokenFaults.push([400, { detail: 'Malformed' }]);

    const results = await burst(5, (i) => api.get(`/orders/${i}`));

    expect(fulfilled(results)).toBe(5);
    expect(service.counters.refreshCalls).toBe(1);
    expect(service.counters.loginCalls).toBe(2);
  });

  it.each([
    ['login', 502],
    ['token', 503],
  ] as Array<[Route, number]>)('makes one %s call with tokenRetries: 0 when it fails with %p', async (route, fault) => {
    const setup = rig({ tokenRetries: 0 });
    const { service, api } = setup;
    await needing(route, setup);
    faultsOf(setup, route).push([fault, { detail: 'down' }]);

    const error = await api.get('/orders').catch((e: unknown) => e);

    expect(codeOf(error)).toBe('TOKEN_SERVICE_UNAVAILABLE');
    const cause = (error as Error).cause;
    // A failure the default retries would have retried: one call is down to `tokenRetries: 0`.
    expect(
      isAxiosError(cause) &&
        (cause.response === undefined ? isRetried(cause, { timeoutMs: 1_000 }) : cause.response.status >= 500),
    ).toBe(true);
    expect(callsTo(service, route)).toBe(1);

    await expect(api.get('/after')).resolves.toMatchObject({ status: 200 });
    expect(callsTo(service, route)).toBe(2);
  });

  it.each<[Route, number]>([
    ['login', 302],
    ['login', 307],
    ['token', 302],
    ['token', 307],
  ])(
    'does not follow a redirect of the %s call (%i) to another origin, and fails TOKEN_SERVICE_UNAVAILABLE',
    async (route, status) => {
      const elsewhere = 'https://elsewhere.test';
      const hits: string[] = [];
      const record = function (this: nock.ReplyFnContext, path: string): [number, unknown] {
        hits.push(`${this.req.method} ${path} ${String(this.req.headers.authorization ?? '')}`);
        return [200, { access: 'stolen', refresh: 'stolen' }];
      };
      nock(elsewhere)
        .persist()
        .post(() => true)
        .reply(record)
        .get(() => true)
        .reply(record);
      const setup = rig({ tokenRetries: 3 });
      const { service, api } = setup;
      await needing(route, setup);
      faultsOf(setup, route).push([status, '', { Location: `${elsewhere}${route === 'login' ? LOGIN : TOKEN}` }]);

      const error = await api.get('/orders').catch((e: unknown) => e);

      expect(codeOf(error)).toBe('TOKEN_SERVICE_UNAVAILABLE');
      expect(isTokenAuthError(error) && error.status).toBe(status);
      expect((error as Error).message).toMatch(/redirect/);
      expect(hits).toEqual([]);
      expect(callsTo(service, route)).toBe(1);

      await expect(api.get('/after')).resolves.toMatchObject({ status: 200 });
      expect(callsTo(service, route)).toBe(2);
      expect(hits).toEqual([]);
    },
  );
});

// Connection errors come from real sockets: nock 14's simulated socket errors are unreliable.
describe('token calls whose connection drops, over real sockets', () => {
  closeEmulatorsAfterEach();
  beforeEach(() => {
    nock.enableNetConnect('127.0.0.1');
  });

  async function needingOnEmulator(route: Route, options: Partial<TokenAuthOptions> = {}) {
    const setup = await e2e(options);
    if (route === 'token') {
      await setup.api.get('/prime');
      setup.emulator.expireAccessTokens();
    }
    return setup;
  }

  it.each<Route>(['login', 'token'])(
    'retries a %s call whose connection drops, and every waiter gets the one success',
    async (route) => {
      const { emulator: service, api } = await needingOnEmulator(route);
      service.inject(route, 'drop', 2);

      const results = await burst(5, (i) => api.get(`/orders/${i}`));

      expect(fulfilled(results)).toBe(5);
      expect(service.calls.filter((call) => call.route === route)).toHaveLength(3);
      expect(service.counters).toMatchObject(
        route === 'login' ? { logins: 1, refreshes: 0 } : { logins: 1, refreshes: 1 },
      );
    },
  );

  it('makes one call with tokenRetries: 0 when the connection drops, and recovers on the next request', async () => {
    const { emulator: service, api } = await needingOnEmulator('login', { tokenRetries: 0 });
    service.inject('login', 'drop');

    const error = await api.get('/orders').catch((e: unknown) => e);

    expect(codeOf(error)).toBe('TOKEN_SERVICE_UNAVAILABLE');
    expect(((error as Error).cause as { code?: string }).code).toBe('ECONNRESET');
    expect(service.counters.tokenCalls).toBe(1);
    await expect(api.get('/after')).resolves.toMatchObject({ status: 200 });
    expect(service.counters).toMatchObject({ tokenCalls: 2, logins: 1 });
  });
});
