import axios from 'axios';
import type { AxiosError } from 'axios';
import { attachTokenAuth, DEFAULTS, isTokenAuthError, MemoryTokenStore } from '../lib/index.js';
import type { TokenAuthEvents } from '../lib/index.js';
import { API, PASSWORD, USERNAME } from './helpers/service.js';
import { burst, fulfilled, rig } from './helpers/setup.js';
import { failureOf } from './helpers/settled.js';

const credentials = { username: USERNAME, password: PASSWORD };

function attachWith(options: Record<string, unknown>, instance = axios.create({ baseURL: API })) {
  return () => attachTokenAuth(instance, { credentials, ...options });
}

describe('bad options fail at attach time with a TypeError that names the option', () => {
  it.each<[string, () => unknown, RegExp]>([
    [
      'no options',
      () => attachTokenAuth(axios.create({ baseURL: API }), undefined as never),
      /the second argument must be an options object, such as \{ credentials \}, got undefined/,
    ],
    [
      'credentials as a string',
      attachWith({ credentials: 'jane:secret' }),
      /`credentials` must be \{ username, password \} or a function that returns them, got a string/,
    ],
    [
      'credentials without a password',
      attachWith({ credentials: { username: 'jane' } }),
      /`credentials` must have a string `username` and a string `password`/,
    ],
    [
      'a misspelt option',
      attachWith({ authBaseUrl: 'https://auth.test' }),
      /unknown option `authBaseUrl`; did you mean `authBaseURL`\?/,
    ],
    ['an unknown option', attachWith({ retries: 3 }), /unknown option `retries`\. Known options: credentials/],
    [
      'a parser that is not a function',
      attachWith({ parseTokens: 'json' }),
      /`parseTokens` must be a function, got the string "json"/,
    ],
    ['a negative timeout', attachWith({ tokenTimeoutMs: -1 }), /`tokenTimeoutMs` must be a number of milliseconds/],
    ['fractional retries', attachWith({ tokenRetries: 1.5 }), /`tokenRetries` must be a whole number of times/],
    [
      'a margin as long as the lifetime',
      attachWith({ expiryMarginMs: 60_000, accessTokenLifetimeMs: 60_000 }),
      /`expiryMarginMs` \(60000\) must be shorter than `accessTokenLifetimeMs`/,
    ],
    ['an empty path', attachWith({ loginPath: '' }), /`loginPath` must be a non-empty string/],
    [
      'a store without clear',
      attachWith({ store: { get() {}, set() {} } }),
      /`store` must implement get, set and clear .*missing clear/,
    ],
    ['origins as a string', attachWith({ origins: API }), /`origins` must be an array/],
    ['an origin without scheme', attachWith({ origins: ['api.test'] }), /`origins` entries must be absolute origins/],
    ['a relative authBaseURL', attachWith({ authBaseURL: '/auth' }), /`authBaseURL` must be an absolute URL/],
    [
      'no baseURL and no authBaseURL',
      attachWith({}, axios.create()),
      /the instance has no absolute `baseURL`, so `authBaseURL` is required/,
    ],
    [
      'something that is not an instance',
      () => attachTokenAuth({} as never, { credentials }),
      /first argument must be an axios instance/,
    ],
  ])('%s', (_name, attach, message) => {
    expect(attach).toThrow(TypeError);
    expect(attach).toThrow(message);
  });

  it('never echoes the password of malformed credentials', () => {
    const attach = attachWith({ credentials: { username: 42, password: 'hunter2-secret' } });
    expect(attach).toThrow(TypeError);
    expect(() => attach()).not.toThrow(/hunter2-secret/);
  });

  it('keeps the defaults in one frozen object', () => {
    expect(Object.isFrozen(DEFAULTS)).toBe(true);
    expect(DEFAULTS).toMatchObject({
      loginPath: '/auth/api/v1/accounts/login',
      tokenPath: '/auth/api/v1/accounts/token',
      accessTokenLifetimeMs: 2_700_000,
      tokenTimeoutMs: 15_000,
      loginCooldownMs: 60_000,
    });
    expect(DEFAULTS.refreshRequest('r-1')).toEqual({ data: { refresh_token: 'r-1' } });
  });
});

describe('attach and eject', () => {
  it('refuses a second attach on the same instance until the first is ejected', async () => {
    const { service, api, auth } = rig();
    expect(() => attachTokenAuth(api, { credentials })).toThrow(/already has token auth attached. Call `eject\(\)`/);

    auth.eject();
    const error = (await api.get('/orders').catch((e: unknown) => e)) as AxiosError;
    expect(error.response?.status).toBe(401);
    expect(service.received.map((entry) => entry.authorization)).toEqual([undefined]);

    const again = attachTokenAuth(api, { credentials, tokenRetryDelayMs: 1 });
    await expect(api.get('/orders')).resolves.toMatchObject({ status: 200 });
    expect(again.stats().logins).toBe(1);
  });

  it('removes exactly its one interceptor', () => {
    const api = axios.create({ baseURL: API });
    // forEach is axios' own way to walk the registered interceptors; its typings leave it out.
    type Walkable = { forEach(visit: (handler: unknown) => void): void };
    const count = () => {
      let n = 0;
      for (const manager of [api.interceptors.request, api.interceptors.response])
        (manager as unknown as Walkable).forEach(() => (n += 1));
      return n;
    };
    api.interceptors.request.use((config) => config);
    const auth = attachTokenAuth(api, { credentials });
    expect(count()).toBe(2);
    auth.eject();
    expect(count()).toBe(1);
  });
});

describe('the handle', () => {
  it('login() and refresh() call the service now; after logout() nothing signs in by itself until login()', async () => {
    const { service, api, auth } = rig();

    await auth.login();
    expect(service.counters.loginCalls).toBe(1);
    await auth.refresh();
    expect(service.counters.refreshCalls).toBe(1);
    await api.get('/orders');
    expect(service.counters.loginCalls).toBe(1);

    await auth.logout();
    expect(await auth.getTokens()).toBeNull();
    const signedOut = await failureOf(api.get('/orders'));
    expect(isTokenAuthError(signedOut) && signedOut.code).toBe('LOGGED_OUT');
    expect(service.counters).toMatchObject({ loginCalls: 1, refreshCalls: 1, dataCalls: 1 });
    await auth.login();
    await api.get('/orders');
    expect(service.counters.loginCalls).toBe(2);
    // The default budget: 10 login calls and 30 token calls an hour, of which 2 and 1 were spent.
    expect(auth.stats()).toEqual({
      logins: 2,
      refreshes: 1,
      replays: 0,
      failures: 0,
      waiting: 0,
      budget: { login: 8, refresh: 29 },
    });
  });

  it('emits login, refresh, replay and logout events, and on() returns an unsubscribe function', async () => {
    const { service, api, auth } = rig();
    const seen: Array<[keyof TokenAuthEvents, unknown]> = [];
    const listen = <E extends keyof TokenAuthEvents>(event: E) =>
      auth.on(event, (payload) => seen.push([event, payload]));
    const stops = (['login', 'refresh', 'replay', 'logout', 'failure', 'load'] as const).map(listen);

    await api.get('/orders');
    service.expireAccessTokens();
    await api.get('/orders');
    await auth.logout();
    stops.forEach((stop) => stop());
    await auth.login();

    expect(seen).toEqual([
      // eslint-disable-next-line @typescript-eslint/no-unsafe-assignment -- jest types its asymmetric matchers as any
      ['login', { reason: 'no-token', durationMs: expect.any(Number), attempts: 1, status: 200, waiting: 1 }],
      [
        'refresh',
        // eslint-disable-next-line @typescript-eslint/no-unsafe-assignment -- jest types its asymmetric matchers as any
        { reason: 'rejected', rotated: true, durationMs: expect.any(Number), attempts: 1, status: 200, waiting: 1 },
      ],
      ['replay', { method: 'GET', url: '/orders' }],
      ['logout', {}],
    ]);
  });

  it('counts failures once per shared attempt', async () => {
    const { service, api, auth } = rig({ tokenRetries: 0 });
    service.loginFaults.push([500, { detail: 'down' }]);

    const results = await burst(5, () => api.get('/orders'));

    expect(fulfilled(results)).toBe(0);
    expect(auth.stats()).toMatchObject({ logins: 0, refreshes: 0, replays: 0, failures: 1 });
  });
});

describe('custom hooks', () => {
  it('isTokenRejected lets a service that answers 403 to an expired token be renewed', async () => {
    const { service, api } = rig({ isTokenRejected: (error) => error.response?.status === 403 });
    await api.get('/orders');
    service.expireAccessTokens();
    service.refusalStatus = 403;

    await expect(api.get('/orders')).resolves.toMatchObject({ status: 200 });
    expect(service.counters.refreshCalls).toBe(1);
  });

  it('applyToken decides how the token travels', async () => {
    const { service, api } = rig({
      applyToken: (config, access) => {
        config.headers.set('Authorization', `Bearer ${access}`);
        config.headers.set('X-Token-Kind', 'access');
      },
    });

    await api.get('/orders');

    expect(service.received.at(-1)?.headers['x-token-kind']).toBe('access');
  });

  it('a shared MemoryTokenStore lets two instances of one account log in once', async () => {
    const store = new MemoryTokenStore();
    const first = rig({ store });
    const second = axios.create({ baseURL: API });
    attachTokenAuth(second, { credentials, store });

    await first.api.get('/a');
    await second.get('/b');

    expect(first.service.counters.loginCalls).toBe(1);
  });
});
