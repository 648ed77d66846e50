// Retries of the token calls answered with an error: which answers are retried (5xx, 429) and which not (4xx, a
// Retry-After past `tokenTimeoutMs`, a redirect to another origin), the delays between the tries, and every waiter of
// a renewal getting its one outcome. The retries of failed connections: token-client-connection-errors.test.ts.
import axios, { isAxiosError } from 'axios';
import nock from 'nock';
import { isTokenAuthError } from '../lib/index.js';
import { isRetried } from '../lib/token-calls/retries.js';
import { TokenClient } from '../lib/token-calls/client.js';
import { resolveOptions } from '../lib/options/resolve.js';
import { API, FakeTokenService, LOGIN, PASSWORD, TOKEN, USERNAME } from './helpers/service.js';
import { burst, fulfilled, rig } from './helpers/setup.js';
import { reasons } from './helpers/settled.js';
import { callsTo, codeOf, faultsOf, needing } from './helpers/token-calls.js';
import type { Route } from './helpers/token-calls.js';

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
    // 2 s, not 200 ms: the login of /after must be answered within it, which a busy machine did not always do in 200.
    const { service, api } = rig({ tokenTimeoutMs: 2_000, tokenRetries: 3 });
    service.loginFaults.push([status, { detail: 'busy' }, { 'Retry-After': '5' }]);

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

    const login = new TokenClient(options).login(
      { username: USERNAME, password: PASSWORD },
      { account: undefined, gate },
    );

    await expect(login).rejects.toBe(refusal);
    // The first attempt passed and went; the retry was refused at its gate, and nothing was tried after it.
    expect([passed, service.counters.loginCalls]).toEqual([2, 1]);
  });

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
