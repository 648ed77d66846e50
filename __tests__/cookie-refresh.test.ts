// refreshTokenInCookie: the refresh token lives in an HttpOnly cookie the browser keeps and sends, so the plugin
// never holds it. Its contract, tested directly over nock: a renewal goes through the token call with
// `withCredentials` although no refresh token is held (a returning session, too, before any login); a refusal of
// the cookie leads to a login, or without credentials to NO_CREDENTIALS. Node keeps no cookies, so the test stands in
// for the browser's jar the only way a Node caller can: `refreshRequest` passes the Cookie header.
import axios from 'axios';
import type { AxiosAdapter, InternalAxiosRequestConfig } from 'axios';
import nock from 'nock';
import { attachTokenAuth } from 'axios-token-keeper';
import type { TokenAuthOptions } from 'axios-token-keeper';
import { simpleJwt } from 'axios-token-keeper/presets';
import { burst, fulfilled } from './helpers/flow.js';
import { expectNoLeaks, recordEvents } from './helpers/scan-secrets.js';
import type { FakeServiceCounters } from './helpers/service.js';
import { reasons } from './helpers/settled.js';

const API = 'https://api.test';
const PASSWORD = 'cookie-user-pass-2f8a';

/** What each call of the service carried. */
interface Call {
  route: 'login' | 'token' | 'data';
  status: number;
  cookie: string | undefined;
  body: string;
}

/**
 * A JSON login that answers the access token and sets the refresh token as an HttpOnly cookie (as Django backends
 * with SimpleJWT and dj-rest-auth's JWT_AUTH_HTTPONLY do), a token call that reads the refresh token from that cookie,
 * and an API.
 */
class CookieService {
  private serial = 0;
  readonly calls: Call[] = [];
  readonly issued: string[] = [];
  readonly validAccess = new Set<string>();
  /** The refresh token of the session the login cookie carries, and whether the service still takes it. */
  readonly session = this.issue('ref');
  sessionValid = true;
  /**
   * The browser's cookie jar for the token call's path: what a browser would send with `withCredentials`. The login's
   * Set-Cookie fills it, as a browser would (Node keeps no cookies); a test empties it as an expired cookie would.
   */
  jar: string | undefined;

  constructor() {
    // eslint-disable-next-line @typescript-eslint/no-this-alias
    const service = this;
    const auth = nock(API).persist();
    auth.post('/api/token/').reply(function (this: nock.ReplyFnContext, _uri, body) {
      return service.answer('login', this.req.headers.cookie, body, () => {
        const { username, password } = body as { username?: string; password?: string };
        if (username !== 'ada' || password !== PASSWORD)
          return [401, { detail: 'No active account found with the given credentials' }];
        const cookie = `refresh_token=${service.session}; HttpOnly; Secure; SameSite=Strict; Path=/api/token/refresh/`;
        service.jar = `refresh_token=${service.session}`;
        return [200, { access: service.access() }, { 'Set-Cookie': cookie }];
      });
    });
    auth.post('/api/token/refresh/').reply(function (this: nock.ReplyFnContext, _uri, body) {
      return service.answer('token', this.req.headers.cookie, body, (cookie) => {
        // dj-rest-auth's CookieTokenRefreshSerializer: `refresh = CharField(required=False)` takes a refresh token in
        // the body first, and DRF refuses a blank one before the cookie is read.
        if (typeof body === 'object' && (body as { refresh?: unknown }).refresh === '')
          return [400, { refresh: ['This field may not be blank.'] }];
        return service.sessionValid && cookie === `refresh_token=${service.session}`
          ? [200, { access: service.access() }]
          : [401, { detail: 'Token is invalid or expired', code: 'token_not_valid' }];
      });
    });
    nock(API)
      .persist()
      .get(/^\/api\/orders/)
      .reply(function (this: nock.ReplyFnContext) {
        return service.answer('data', undefined, '', () => {
          const token = /^Bearer (\S+)$/.exec(String(this.req.headers.authorization ?? ''))?.[1];
          return token !== undefined && service.validAccess.has(token)
            ? [200, { ok: true }]
            : [401, { detail: 'Given token not valid for any token type', code: 'token_not_valid' }];
        });
      });
  }

  /** What it has served so far, in the words of FakeTokenService's counters; it injects no faults. */
  get counters(): Omit<FakeServiceCounters, 'faults'> {
    const count = (route: Call['route'], status?: (status: number) => boolean) =>
      this.calls.filter((call) => call.route === route && (status === undefined || status(call.status))).length;
    const [loginCalls, refreshCalls] = [count('login'), count('token')];
    const ok = (status: number) => status === 200;
    const refused = (status: number) => status >= 400 && status < 500;
    return {
      logins: count('login', ok),
      refreshes: count('token', ok),
      rejected: count('login', refused) + count('token', refused),
      unauthorized: count('data', (status) => status === 401),
      dataCalls: count('data'),
      tokenCalls: loginCalls + refreshCalls,
      loginCalls,
      refreshCalls,
    };
  }

  /** Ends the life of every access token issued so far. */
  expireAccessTokens(): void {
    this.validAccess.clear();
  }

  access(): string {
    const token = this.issue('acc');
    this.validAccess.add(token);
    return token;
  }

  private issue(kind: 'acc' | 'ref'): string {
    this.serial += 1;
    const token = `${kind}-${this.serial}-${Math.random().toString(36).slice(2, 10)}`;
    this.issued.push(token);
    return token;
  }

  private answer(
    route: Call['route'],
    cookie: string | string[] | undefined,
    body: nock.Body,
    reply: (cookie: string | undefined) => nock.ReplyFnResult,
  ): nock.ReplyFnResult {
    const sent = Array.isArray(cookie) ? cookie.join('; ') : cookie;
    const result = reply(sent);
    const status = (result as [number])[0];
    this.calls.push({ route, status, cookie: sent, body: typeof body === 'string' ? body : JSON.stringify(body) });
    return result;
  }
}

/**
 * The config of each call the plugin's private token-call instance makes, as its adapter receives it: the only place
 * `withCredentials` can be seen in Node, where the http adapter ignores it. axios.create() copies the default adapter,
 * so it is swapped before attaching and restored after each test.
 */
const tokenCallConfigs: InternalAxiosRequestConfig[] = [];
const defaultAdapter = axios.defaults.adapter;
beforeEach(() => {
  tokenCallConfigs.length = 0;
  const http = axios.getAdapter('http');
  const recording: AxiosAdapter = (config) => {
    if (config.url === '/api/token/refresh/') tokenCallConfigs.push(config);
    return http(config);
  };
  axios.defaults.adapter = recording;
});
afterEach(() => {
  axios.defaults.adapter = defaultAdapter;
});

/** The plugin on an instance for the service, with the cookie jar's header passed as a browser would send it. */
function attach(service: CookieService, options: Partial<TokenAuthOptions> = {}) {
  const refreshArguments: string[] = [];
  const api = axios.create({ baseURL: API });
  const auth = attachTokenAuth(api, {
    ...simpleJwt(),
    refreshTokenInCookie: true,
    refreshRequest: (refreshToken) => {
      refreshArguments.push(refreshToken);
      return service.jar === undefined ? {} : { headers: { Cookie: service.jar } };
    },
    credentials: { username: 'ada', password: PASSWORD },
    tokenRetryDelayMs: 1,
    ...options,
  });
  return { api, auth, refreshArguments };
}

describe('refreshTokenInCookie', () => {
  it('first use, no session cookie yet: one token call (refused), then one login, for a burst of four', async () => {
    const service = new CookieService();
    const { api, auth, refreshArguments } = attach(service);

    const results = await burst(4, (index) => api.get(`/api/orders/${index}`));

    expect(fulfilled(results)).toBe(4);
    expect(service.calls.filter((call) => call.route !== 'data')).toEqual([
      { route: 'token', status: 401, cookie: undefined, body: '' },
      { route: 'login', status: 200, cookie: undefined, body: JSON.stringify({ username: 'ada', password: PASSWORD }) },
    ]);
    expect(refreshArguments).toEqual(['']);
    expect(tokenCallConfigs.map((config) => config.withCredentials)).toEqual([true]);
    expect(auth.stats()).toMatchObject({ logins: 1, refreshes: 0, replays: 0, failures: 1 });
  });

  it('no refresh token held: five refused requests make one token call, with the cookie and withCredentials', async () => {
    const service = new CookieService();
    service.jar = `refresh_token=${service.session}`;
    const { api, auth, refreshArguments } = attach(service);
    // The access token came from the sign-in page, which also set the cookie; the plugin holds no refresh token.
    await auth.setTokens({ access: service.access() });
    await api.get('/api/orders/prime');
    expect(await auth.getTokens()).not.toHaveProperty('refresh');
    service.expireAccessTokens();

    const results = await burst(5, (index) => api.get(`/api/orders/${index}`));

    expect(fulfilled(results)).toBe(5);
    expect(service.calls.filter((call) => call.route !== 'data')).toEqual([
      { route: 'token', status: 200, cookie: `refresh_token=${service.session}`, body: '' },
    ]);
    expect(refreshArguments).toEqual(['']);
    expect(tokenCallConfigs.map((config) => config.withCredentials)).toEqual([true]);
    // The prime, the 5 refused, and their 5 replays.
    expect(service.counters).toMatchObject({ dataCalls: 11, unauthorized: 5 });
    expect(auth.stats()).toMatchObject({ logins: 0, refreshes: 1, replays: 5, failures: 0 });
  });

  it('nothing held at all (a returning session, no credentials): the first requests go to the token call, not to a login', async () => {
    const service = new CookieService();
    service.jar = `refresh_token=${service.session}`;
    const { api, auth } = attach(service, { credentials: undefined });

    const results = await burst(3, (index) => api.get(`/api/orders/${index}`));

    expect(fulfilled(results)).toBe(3);
    expect(service.counters).toMatchObject({ refreshes: 1, loginCalls: 0 });
    expect(tokenCallConfigs.map((config) => config.withCredentials)).toEqual([true]);
    expect(auth.stats()).toMatchObject({ logins: 0, refreshes: 1, replays: 0, failures: 0 });
  });

  it('the session cookie gone: one token call refused, then one login with the credentials, and the burst succeeds', async () => {
    const service = new CookieService();
    const { api, auth } = attach(service);
    await api.get('/api/orders/prime');
    const from = service.calls.length;
    service.jar = undefined;
    service.expireAccessTokens();
    const recorded = recordEvents(auth);

    const results = await burst(4, (index) => api.get(`/api/orders/${index}`));

    expect(fulfilled(results)).toBe(4);
    expect(
      service.calls
        .slice(from)
        .filter((call) => call.route !== 'data')
        .map((call) => `${call.route} ${call.status}`),
    ).toEqual(['token 401', 'login 200']);
    expect(auth.stats()).toMatchObject({ logins: 2, refreshes: 0, replays: 4, failures: 2 });
    expect(recorded.filter((entry) => entry.event !== 'replay').map((entry) => entry.payload)).toEqual([
      expect.objectContaining({ operation: 'refresh', code: 'REFRESH_REJECTED' }),
      expect.objectContaining({ reason: 'refresh-rejected' }),
    ]);
  });

  it('the session cookie gone and no credentials: NO_CREDENTIALS after one token call, and no login', async () => {
    const service = new CookieService();
    const { api, auth } = attach(service, { credentials: undefined });
    // The access token came from a sign-in page whose cookie has since expired.
    await auth.setTokens({ access: service.access() });
    await api.get('/api/orders/prime');
    service.expireAccessTokens();

    const errors = reasons(await burst(3, (index) => api.get(`/api/orders/${index}`)));

    for (const error of errors) expect(error).toMatchObject({ name: 'TokenAuthError', code: 'NO_CREDENTIALS' });
    expect(service.counters).toMatchObject({ refreshCalls: 1, rejected: 1, loginCalls: 0 });
    expect(await auth.getTokens()).toBeNull();
    expectNoLeaks(
      errors,
      service.issued.map((value) => ({ name: 'token', value })),
    );
  });

  it('signed out, the cookie refused: one token call, then NO_CREDENTIALS with no more calls until a pair is handed in', async () => {
    const service = new CookieService();
    service.jar = undefined;
    const { api, auth } = attach(service, { credentials: undefined });

    const errors: unknown[] = [];
    for (let i = 0; i < 35; i += 1) errors.push(await api.get(`/api/orders/${i}`).catch((e: unknown) => e));

    for (const error of errors) expect(error).toMatchObject({ name: 'TokenAuthError', code: 'NO_CREDENTIALS' });
    expect(service.counters).toMatchObject({ refreshCalls: 1, loginCalls: 0 });

    // A sign-in elsewhere hands a pair over: renewals go through the cookie again.
    await auth.setTokens({ access: service.access() });
    service.jar = `refresh_token=${service.session}`;
    service.expireAccessTokens();
    expect(fulfilled(await burst(3, (i) => api.get(`/api/orders/${i}`)))).toBe(3);
    expect(service.counters.refreshCalls).toBe(2);
  });

  it('without refreshTokenInCookie, a pair without a refresh token is renewed by a login, never the token call', async () => {
    const service = new CookieService();
    const { api, auth } = attach(service, { refreshTokenInCookie: false });
    await api.get('/api/orders/prime');
    service.expireAccessTokens();

    expect(fulfilled(await burst(3, (index) => api.get(`/api/orders/${index}`)))).toBe(3);

    expect(service.counters).toMatchObject({ logins: 2, refreshCalls: 0 });
    expect(auth.stats()).toMatchObject({ logins: 2, refreshes: 0, replays: 3, failures: 0 });
  });
});

describe('refreshTokenInCookie with the simpleJwt() preset, and a refused cookie', () => {
  it("simpleJwt()'s token call sends no blank `refresh` field when the refresh token is in the cookie", async () => {
    const service = new CookieService();
    service.jar = `refresh_token=${service.session}`;
    const api = axios.create({ baseURL: API });
    const auth = attachTokenAuth(api, {
      ...simpleJwt(),
      refreshTokenInCookie: true,
      credentials: { username: 'ada', password: PASSWORD },
    });
    await auth.setTokens({ access: service.access() });
    service.expireAccessTokens();

    expect((await api.get('/api/orders/1')).status).toBe(200);

    const tokenCalls = service.calls.filter((call) => call.route === 'token');
    expect(tokenCalls).toHaveLength(1);
    expect(tokenCallConfigs.map((config) => config.withCredentials)).toEqual([true]);
    // Sent `{"refresh":""}`, a Django cookie-refresh endpoint answers 400 before it reads the cookie, and every
    // renewal becomes a login (or NO_CREDENTIALS).
    expect(JSON.parse(tokenCalls[0]!.body || '{}')).not.toHaveProperty('refresh');
  });

  it('a session cookie the service refuses: the Cookie header the token call sent is masked in what the plugin reports', async () => {
    const service = new CookieService();
    const { api, auth } = attach(service);
    const recorded = recordEvents(auth);
    await api.get('/api/orders/prime');
    service.sessionValid = false;
    service.expireAccessTokens();

    expect(fulfilled(await burst(2, (index) => api.get(`/api/orders/${index}`)))).toBe(2);

    expect(service.calls.filter((call) => call.route === 'token').map((call) => call.cookie)).toEqual([
      undefined,
      `refresh_token=${service.session}`,
    ]);
    expect(auth.stats()).toMatchObject({ logins: 2, failures: 2 });
    expectNoLeaks(recorded, [{ name: 'refresh token sent in the Cookie header', value: service.session }]);
  });
});
