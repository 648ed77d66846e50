// For people who sign in: a sign-in a person types is never refused by the plugin's own budget nor paused; a logout
// means logged out, for every holder of the store, until the user signs in again, and can tell the server; a
// request's axios `timeout` bounds its waits for a renewal; getState()/subscribe() give a UI its state.
import axios, { isAxiosError } from 'axios';
import nock from 'nock';
import { attachTokenAuth, isTokenAuthError, MemoryTokenStore } from '../lib/index.js';
import type { TokenAuthEvents, TokenAuthState, TokenAuthStatus } from '../lib/index.js';
import { closeEmulatorsAfterEach, e2e } from './helpers/emulator.js';
import { expectNoLeaks } from './helpers/scan-secrets.js';
import { API, FakeTokenService, PASSWORD, TOKEN, USERNAME } from './helpers/service.js';
import { rig, until } from './helpers/setup.js';
import { failureOf } from './helpers/settled.js';

closeEmulatorsAfterEach();

const LOGOUT = '/auth/api/v1/accounts/logout';
const typed = (password: string) => ({ username: USERNAME, password });
const codeOf = (error: unknown) => (isTokenAuthError(error) ? error.code : error);

describe('a person signing in', () => {
  it('ten mistyped passwords, then the right one: each answered by the service, none refused by the budget', async () => {
    const { service, api, auth } = rig({ credentials: undefined, tokenBudget: { logins: 3 } });

    for (let attempt = 0; attempt < 10; attempt += 1)
      expect(codeOf(await failureOf(auth.login(typed(`typo-${attempt}`))))).toBe('LOGIN_REJECTED');
    await auth.login(typed(PASSWORD));
    await api.get('/orders');

    expect(service.counters).toMatchObject({ loginCalls: 11, rejected: 10, logins: 1, dataCalls: 1 });
    expect(auth.stats().budget).toEqual({ login: 3, refresh: 30 });
  });

  it('a rejected sign-in pauses no automatic login; the app’s own login() is still held to the budget', async () => {
    const { service, api, auth } = rig({ tokenBudget: { logins: 2 } });

    expect(codeOf(await failureOf(auth.login(typed('typo'))))).toBe('LOGIN_REJECTED');
    await api.get('/orders');
    await auth.login();
    expect(codeOf(await failureOf(auth.login()))).toBe('TOKEN_BUDGET_EXCEEDED');
    await auth.login(typed(PASSWORD));

    expect(service.counters).toMatchObject({ loginCalls: 4, logins: 3, rejected: 1 });
    expect(auth.stats().budget).toEqual({ login: 0, refresh: 30 });
  });
});

describe('logout means logged out', () => {
  it('nothing signs in by itself after logout(), with the refresh token in a cookie too, until refresh()', async () => {
    const { service, api, auth } = rig({ refreshTokenInCookie: true });
    await api.get('/orders');
    await auth.logout();
    const results = await Promise.allSettled([api.get('/orders'), api.get('/stock'), auth.accessToken()]);

    expect(results.map((result) => result.status === 'rejected' && codeOf(result.reason))).toEqual([
      'LOGGED_OUT',
      'LOGGED_OUT',
      'LOGGED_OUT',
    ]);
    // Before the logout: the token call a returning session makes with the cookie alone, refused here (the service
    // holds no session for a body without a refresh token), then the login.
    expect(service.counters).toMatchObject({ refreshCalls: 1, loginCalls: 1, dataCalls: 1 });
    // The restore a browser app makes at start-up, as refused, then the login with the credentials.
    await auth.refresh();
    await api.get('/orders');
    expect(service.counters).toMatchObject({ refreshCalls: 2, loginCalls: 2, dataCalls: 2 });
  });

  it('setTokens() after logout() signs in again', async () => {
    const { service, api, auth } = rig();
    await api.get('/orders');
    const pair = (await auth.getTokens())!;
    await auth.logout();

    await auth.setTokens(pair);
    await api.get('/orders');

    expect(service.counters).toMatchObject({ loginCalls: 1, dataCalls: 2 });
  });

  it('a logout by one holder of a store signs out every holder, and one attached later; a sign-in anywhere ends it', async () => {
    const store = new MemoryTokenStore();
    const first = rig({ store });
    const second = rig({ store }, first.service);
    const { service } = first;
    await first.api.get('/orders');
    await second.api.get('/orders');

    await first.auth.logout();
    expect(second.auth.getState()).toEqual({ status: 'signed-out' });
    const later = rig({ store }, service);
    const refused = await Promise.all([second.api.get('/orders'), later.api.get('/orders')].map((p) => failureOf(p)));

    expect(refused.map(codeOf)).toEqual(['LOGGED_OUT', 'LOGGED_OUT']);
    expect(service.counters).toMatchObject({ tokenCalls: 1, dataCalls: 2 });
    await second.auth.login();
    await Promise.all([first.api.get('/orders'), second.api.get('/orders'), later.api.get('/orders')]);
    expect(first.auth.getState()).toEqual({ status: 'signed-in' });
    expect(service.counters).toMatchObject({ tokenCalls: 2, dataCalls: 5 });
  });

  it('logoutRequest tells the server once, with what it returns, and spends no budget', async () => {
    const calls: Array<{ body: unknown; authorization: unknown }> = [];
    nock(API)
      .post(LOGOUT)
      .reply(function (this: nock.ReplyFnContext, _uri, body) {
        calls.push({ body, authorization: this.req.headers.authorization });
        return [200, { status: true }];
      });
    const { api, auth } = rig({
      logoutRequest: (pair) => ({ path: LOGOUT, data: { refresh_token: pair?.refresh } }),
    });
    await api.get('/orders');
    const held = (await auth.getTokens())!;

    await auth.logout();

    expect(calls).toEqual([{ body: { refresh_token: held.refresh }, authorization: undefined }]);
    expect(await auth.getTokens()).toBeNull();
    expect(auth.stats()).toMatchObject({ failures: 0, budget: { login: 9, refresh: 30 } });
  });

  it('logoutRequest that returns nothing makes no call', async () => {
    const asked: unknown[] = [];
    const { service, auth } = rig({
      logoutRequest: (pair) => {
        asked.push(pair);
        return pair?.refresh === undefined ? undefined : { path: LOGOUT };
      },
    });

    await auth.logout();

    expect(asked).toEqual([null]);
    expect(service.counters.tokenCalls).toBe(0);
  });

  it.each([
    [
      503,
      'TOKEN_SERVICE_UNAVAILABLE',
      /answered POST https:\/\/api\.test\/auth\/api\/v1\/accounts\/logout with an error/,
    ],
    [400, 'LOGOUT_REJECTED', /rejected the logout/],
    [404, 'TOKEN_ENDPOINT_NOT_FOUND', /no logout call at .*the `path` that `logoutRequest` returns/],
  ])(
    'a logout call answered %d: the tokens are dropped all the same, and logout() rejects with %s, once, masked',
    async (status, code, message) => {
      const held: { refresh?: string | undefined } = {};
      let sent = 0;
      nock(API)
        .post(LOGOUT)
        .times(4)
        .reply(() => {
          sent += 1;
          return [status, { detail: `the session of ${held.refresh} lives on` }];
        });
      const failures: Array<TokenAuthEvents['failure']> = [];
      const { service, api, auth } = rig({
        logoutRequest: (pair) => ({ path: LOGOUT, data: { refresh_token: pair?.refresh } }),
      });
      auth.on('failure', (failure) => failures.push(failure));
      await api.get('/orders');
      held.refresh = (await auth.getTokens())?.refresh;

      const error = await failureOf(auth.logout());

      expect(codeOf(error)).toBe(code);
      expect((error as Error).message).toMatch(message);
      expect((error as Error).message).toMatch(
        /The tokens were dropped here, but the server may still hold the session/,
      );
      expect(sent).toBe(1);
      expect(failures).toMatchObject([{ operation: 'logout', code, attempts: 1, status }]);
      expect(await auth.getTokens()).toBeNull();
      expect(auth.getState()).toEqual({ status: 'signed-out' });
      expectNoLeaks(
        { error, failures },
        service.issued.map((value) => ({ name: 'a token the service issued', value })),
      );
    },
  );

  it('a logout call that never answers ends after tokenTimeoutMs', async () => {
    nock(API)
      .post(LOGOUT)
      .reply(() => new Promise<never>(() => undefined));
    const { auth } = rig({ tokenTimeoutMs: 200, logoutRequest: () => ({ path: LOGOUT }) });

    const error = await failureOf(auth.logout());

    expect(codeOf(error)).toBe('TOKEN_SERVICE_UNAVAILABLE');
    expect((error as Error).message).toMatch(/timed out after 200 ms/);
  });
});

describe('a request’s timeout bounds the whole request', () => {
  it('its wait for a login: it fails as axios’ own timeout would, and the login goes on for the others', async () => {
    const { service, api } = rig();
    const release = service.hold('token');
    const patient = api.get('/orders');

    const [bounded, clarified, named] = await Promise.all([
      failureOf(api.get('/orders', { timeout: 300 })),
      failureOf(api.get('/orders', { timeout: 300, transitional: { clarifyTimeoutError: true } })),
      failureOf(api.get('/orders', { timeout: 300, timeoutErrorMessage: 'the orders took too long' })),
    ]);
    release();

    expect(isAxiosError(bounded) && [bounded.code, bounded.message, bounded.config?.timeout]).toEqual([
      'ECONNABORTED',
      'timeout of 300ms exceeded',
      300,
    ]);
    expect(isAxiosError(clarified) && clarified.code).toBe('ETIMEDOUT');
    expect(isAxiosError(named) && named.message).toBe('the orders took too long');
    await expect(patient).resolves.toMatchObject({ status: 200 });
    expect(service.counters).toMatchObject({ loginCalls: 1, dataCalls: 1 });
  });

  it('its wait for the renewal its 401 started', async () => {
    const { service, api } = rig();
    await api.get('/orders');
    service.expireAccessTokens();
    const release = service.hold('token');

    const bounded = await failureOf(api.get('/orders', { timeout: 300 }));
    release();

    expect(isAxiosError(bounded) && bounded.code).toBe('ECONNABORTED');
    await expect(api.get('/orders')).resolves.toMatchObject({ status: 200 });
    expect(service.counters).toMatchObject({ loginCalls: 1, refreshCalls: 1 });
  });

  it('its waits and its sends share one timeout: a login that takes most of it leaves the data call the rest', async () => {
    nock.enableNetConnect('127.0.0.1');
    // Each part alone takes well under the timeout; both together do not.
    const { emulator: service, api } = await e2e({}, { latency: { login: 400, data: 400 } });

    const bounded = await failureOf(api.get('/orders', { timeout: 600 }));

    expect(isAxiosError(bounded) && [bounded.code, bounded.message, bounded.config?.timeout]).toEqual([
      'ECONNABORTED',
      'timeout of 600ms exceeded',
      600,
    ]);
    await expect(api.get('/orders', { timeout: 5_000 })).resolves.toMatchObject({ status: 200 });
    expect(service.counters.logins).toBe(1);
  });
});

describe('getState() and subscribe(), for a UI', () => {
  it('says where the sign-in stands, one snapshot per change', async () => {
    const { service, api, auth } = rig({ credentials: undefined });
    const told: TokenAuthStatus[] = [];
    const stop = auth.subscribe(() => told.push(auth.getState().status));
    const first = auth.getState();
    expect(first).toEqual({ status: 'signed-out' });
    expect(auth.getState()).toBe(first);

    let release = service.hold('token');
    const typo = auth.login(typed('typo'));
    expect(auth.getState()).toEqual({ status: 'signing-in' });
    release();
    const rejected = await failureOf(typo);
    const failed = auth.getState();
    expect(failed).toEqual({ status: 'signed-out', error: rejected });
    expect(codeOf(failed.error)).toBe('LOGIN_REJECTED');
    expect(auth.getState()).toBe(failed);

    await auth.login(typed(PASSWORD));
    expect(auth.getState()).toEqual({ status: 'signed-in' });
    service.expireAccessTokens();
    release = service.hold('token');
    const renewed = api.get('/orders');
    await until(() => service.counters.refreshCalls === 1);
    expect(auth.getState()).toEqual({ status: 'renewing' });
    release();
    await renewed;
    await auth.logout();
    stop();
    await auth.login(typed(PASSWORD));

    expect(told).toEqual([
      'signing-in',
      'signed-out',
      'signing-in',
      'signed-in',
      'renewing',
      'signed-in',
      'signed-out',
    ]);
  });

  it('a store that holds a pair: signing-in while it is read, signed-in after, with no request', async () => {
    const store = new MemoryTokenStore();
    store.set({ access: 'acc-1-held', refresh: 'ref-1-held', expiresAt: Date.now() + 60_000 });
    const auth = attachTokenAuth(axios.create({ baseURL: API }), { store });
    const states: TokenAuthState[] = [];
    auth.subscribe(() => states.push(auth.getState()));

    expect(auth.getState()).toEqual({ status: 'signing-in' });
    await until(() => auth.getState().status === 'signed-in');

    expect(states).toEqual([{ status: 'signed-in' }]);
  });

  it('a logout that ends the renewal under way: signed-out, with no error to show (a logout is no failure)', async () => {
    const { service, api, auth } = rig();
    await api.get('/orders');
    service.expireAccessTokens();
    const release = service.hold('token');
    const renewing = failureOf(api.get('/orders'));
    await until(() => service.counters.refreshCalls === 1);

    // The logout waits for the renewal's turn, which ends once its token call has answered.
    const loggingOut = auth.logout();
    release();
    await loggingOut;

    expect(codeOf(await renewing)).toBe('LOGGED_OUT');
    expect(auth.getState()).toEqual({ status: 'signed-out' });
  });

  it('a sign-in typed while a renewal is under way is a login of its own, with what was typed, once the renewal ends', async () => {
    const { service, api, auth } = rig();
    await api.get('/orders');
    service.expireAccessTokens();
    const release = service.hold('token');
    const renewed = api.get('/orders');
    await until(() => service.counters.refreshCalls === 1);

    const signingIn = auth.login(typed('typo'));
    release();

    expect(codeOf(await failureOf(signingIn))).toBe('LOGIN_REJECTED');
    await expect(renewed).resolves.toMatchObject({ status: 200 });
    expect(service.counters).toMatchObject({ refreshCalls: 1, loginCalls: 2, rejected: 1 });
  });

  it('flush() resolves once the renewal under way has ended: its pair is then the one in use', async () => {
    const { service, api, auth } = rig();
    await api.get('/orders');
    const before = await auth.getTokens();
    service.expireAccessTokens();
    const release = service.hold('token');
    const renewed = api.get('/orders');
    await until(() => service.counters.refreshCalls === 1);

    let flushed = false;
    const flushing = auth.flush().then(() => (flushed = true));
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(flushed).toBe(false);
    release();
    await flushing;

    expect((await auth.getTokens())?.access).not.toBe(before?.access);
    await expect(renewed).resolves.toMatchObject({ status: 200 });
  });

  it('holders of one store hear each other’s sign-in and sign-out', async () => {
    const service = new FakeTokenService();
    const store = new MemoryTokenStore();
    const tabs = [rig({ credentials: undefined, store }, service), rig({ credentials: undefined, store }, service)];
    const told = tabs.map((tab) => {
      const statuses: TokenAuthStatus[] = [];
      tab.auth.subscribe(() => statuses.push(tab.auth.getState().status));
      return statuses;
    });
    await until(() => tabs.every((tab) => tab.auth.getState().status === 'signed-out'));

    await tabs[0]!.auth.login(typed(PASSWORD));
    await tabs[1]!.auth.logout();

    expect(told).toEqual([
      ['signed-out', 'signing-in', 'signed-in', 'signed-out'],
      ['signed-out', 'signed-in', 'signed-out'],
    ]);
  });

  it('restoring at start-up with the refresh token in a cookie: signing-in at once, then signed-in or signed-out', async () => {
    // Node keeps no cookies: the token call answers as a service that finds the session cookie, or does not.
    let session = true;
    nock(API)
      .persist()
      .post(TOKEN)
      .reply(() => (session ? [200, { access_token: 'acc-7-cookie' }] : [401, { detail: 'No session.' }]));
    const restore = async (): Promise<{ seen: TokenAuthStatus[]; outcome: unknown }> => {
      const auth = attachTokenAuth(axios.create({ baseURL: API }), { refreshTokenInCookie: true });
      const seen = [auth.getState().status];
      const restoring = auth.refresh().catch(codeOf);
      seen.push(auth.getState().status);
      const outcome = await restoring;
      seen.push(auth.getState().status);
      return { seen, outcome };
    };

    expect(await restore()).toEqual({ seen: ['signed-out', 'signing-in', 'signed-in'], outcome: undefined });
    session = false;
    expect(await restore()).toEqual({ seen: ['signed-out', 'signing-in', 'signed-out'], outcome: 'NO_CREDENTIALS' });
  });
});
