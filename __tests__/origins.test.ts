import axios from 'axios';
import nock from 'nock';
import { attachTokenAuth } from '../lib/index.js';
import type { TokenAuthEvents } from '../lib/index.js';
import { PASSWORD, USERNAME } from './helpers/credentials.js';
import { API, FakeTokenService, LOGIN, TOKEN } from './helpers/service.js';
import { rig, useNock } from './helpers/setup.js';
import { failureOf } from './helpers/settled.js';

/** The warning these tests are about. */
type OriginWarning = Extract<TokenAuthEvents['warning'], { code: 'ORIGIN_NOT_IN_ORIGINS' }>;

useNock();

const THIRD = 'https://third.test';

/**
 * A host the test watches: records the Authorization header of every request it gets, and answers 200 to an access
 * token `service` accepts, 401 to anything else.
 */
function watchedHost(origin: string, service?: FakeTokenService): Array<string | undefined> {
  const seen: Array<string | undefined> = [];
  nock(origin)
    .persist()
    .get(() => true)
    .reply(function (this: nock.ReplyFnContext) {
      const authorization = this.req.headers.authorization;
      seen.push(authorization);
      const token = authorization?.startsWith('Bearer ') ? authorization.slice(7) : undefined;
      return token !== undefined && service?.validAccess.has(token)
        ? [200, { ok: true }]
        : [401, { detail: 'Authentication credentials were not provided.' }];
    });
  return seen;
}

describe('default origins: those of baseURL and authBaseURL', () => {
  it('sends the token to an absolute URL on the baseURL origin, however it is spelled', async () => {
    const { service, api } = rig();

    await api.get(`${API}/a`);
    await api.get('https://API.test:443/b');

    const access = service.issued[0];
    expect(
      service.received.filter((entry) => entry.route === 'data').map((entry) => [entry.path, entry.authorization]),
    ).toEqual([
      ['/a', `Bearer ${access}`],
      ['/b', `Bearer ${access}`],
    ]);
  });

  it('sends nothing to a third-party host on the same instance, and leaves its 401 alone', async () => {
    const { service, api, auth } = rig();
    const third = watchedHost(THIRD);
    await api.get('/prime');

    const error = await failureOf(api.get(`${THIRD}/webhook`), axios.isAxiosError);

    expect(error.response?.status).toBe(401);
    expect(third).toEqual([undefined]);
    expect([service.counters.loginCalls, service.counters.refreshCalls, service.counters.dataCalls]).toEqual([1, 0, 1]);
    expect(auth.stats()).toMatchObject({ logins: 1, refreshes: 0, replays: 0, failures: 0 });
  });

  it('does not even log in for a request that will not carry the token', async () => {
    const { service, api, auth } = rig();
    const third = watchedHost(THIRD);

    const error = await failureOf(api.get(`${THIRD}/webhook`), axios.isAxiosError);

    expect(error.response?.status).toBe(401);
    expect(third).toEqual([undefined]);
    expect(service.received).toHaveLength(0);
    expect(await auth.getTokens()).toBeNull();
  });

  it('leaves an Authorization header the caller set for a third-party host as it is', async () => {
    const { service, api } = rig();
    const third = watchedHost(THIRD);
    await api.get('/prime');

    await failureOf(
      api.get(`${THIRD}/webhook`, { headers: { Authorization: 'Token partner-key' } }),
      axios.isAxiosError,
    );

    expect(third).toEqual(['Token partner-key']);
    expect(service.counters.refreshCalls).toBe(0);
  });

  it.each([
    ['another scheme', 'http://api.test', 'http://api.test/orders'],
    ['another port', 'https://api.test:8443', 'https://api.test:8443/orders'],
    ['a host that only starts like it', 'https://api.test.evil.test', 'https://api.test.evil.test/orders'],
    ['a subdomain', 'https://eu.api.test', 'https://eu.api.test/orders'],
    ['userinfo that names it', 'https://evil.test', 'https://api.test@evil.test/orders'],
  ])('sends nothing to %s of the baseURL host, and leaves its 401 alone', async (_what, origin, url) => {
    const { service, api, auth } = rig();
    const other = watchedHost(origin);
    await api.get('/prime');

    const error = await failureOf(api.get(url), axios.isAxiosError);

    expect(error.response?.status).toBe(401);
    expect(other).toHaveLength(1);
    expect(other[0] ?? '').not.toMatch(/^Bearer/);
    for (const token of service.issued) expect(other[0] ?? '').not.toContain(token);
    expect(service.counters.refreshCalls).toBe(0);
    expect(auth.stats()).toMatchObject({ logins: 1, refreshes: 0, replays: 0, failures: 0 });
  });

  it('includes the authBaseURL origin when the token service lives elsewhere', async () => {
    const AUTH = 'https://auth.test';
    const DATA = 'https://data.test';
    const service = new FakeTokenService(AUTH, DATA);
    const { api } = rig({ authBaseURL: AUTH }, service);
    const authHost = watchedHost(AUTH, service);
    const third = watchedHost(THIRD, service);

    await api.get(`${AUTH}/profile`);
    await failureOf(api.get(`${THIRD}/profile`), axios.isAxiosError);

    expect(authHost).toEqual([`Bearer ${service.issued[0]}`]);
    expect(third).toEqual([undefined]);
  });

  describe('a redirect from an allowed origin to a third-party host', () => {
    const PARTNER = 'https://partner.test';

    /** The partner answers every GET /moved with a redirect to the third party, recording what it got. */
    function redirecting(): Array<string | undefined> {
      const seen: Array<string | undefined> = [];
      nock(PARTNER)
        .persist()
        .get('/moved')
        .reply(function (this: nock.ReplyFnContext) {
          seen.push(this.req.headers.authorization);
          return [302, '', { Location: `${THIRD}/landing` }];
        });
      return seen;
    }

    it('does not carry the token to the third party', async () => {
      const partner = redirecting();
      const { api } = rig({ origins: [API, PARTNER] });
      const third = watchedHost(THIRD);

      const error = await failureOf(api.get(`${PARTNER}/moved`), axios.isAxiosError);

      expect(error.response?.status).toBe(401);
      // Every request the partner got (one, or two if its 401 was taken for ours) was redirected once.
      expect(partner.length).toBeGreaterThan(0);
      expect(third).toHaveLength(partner.length);
      for (const sent of partner) expect(sent).toMatch(/^Bearer /);
      for (const sent of third) expect(sent).toBeUndefined();
    });

    it("leaves the third party's 401 alone: no renewal, no replay", async () => {
      const partner = redirecting();
      const { service, api, auth } = rig({ origins: [API, PARTNER] });
      const third = watchedHost(THIRD);

      const error = await failureOf(api.get(`${PARTNER}/moved`), axios.isAxiosError);

      expect(error.response?.status).toBe(401);
      expect(partner).toEqual([`Bearer ${service.issued[0]}`]);
      expect(third).toEqual([undefined]);
      expect(service.counters.refreshCalls).toBe(0);
      expect(auth.stats()).toMatchObject({ logins: 1, refreshes: 0, replays: 0, failures: 0 });
    });
  });
});

describe('explicit origins', () => {
  const PARTNER = 'https://partner.test';

  it('sends the token to listed strings and matching RegExps only, in place of the defaults', async () => {
    const { service, api } = rig({ origins: [`${PARTNER}/ignored/path`, /^https:\/\/[a-z]+\.cdn\.test$/] });
    const partner = watchedHost(PARTNER, service);
    const cdn = watchedHost('https://img.cdn.test', service);
    const lookalike = watchedHost('https://img.cdn.test.evil.test', service);

    await api.get(`${PARTNER}/a`);
    await api.get('https://img.cdn.test/b.png');
    await failureOf(api.get('https://img.cdn.test.evil.test/c.png'), axios.isAxiosError);
    const own = await failureOf(api.get('/orders'), axios.isAxiosError);

    const bearer = `Bearer ${service.issued[0]}`;
    expect(partner).toEqual([bearer]);
    expect(cdn).toEqual([bearer]);
    expect(lookalike).toEqual([undefined]);
    // The baseURL origin is not listed, so it gets nothing and its 401 is the caller's.
    expect(own.response?.status).toBe(401);
    expect(service.received.filter((entry) => entry.route === 'data').map((entry) => entry.authorization)).toEqual([
      undefined,
    ]);
    expect([service.counters.loginCalls, service.counters.refreshCalls]).toEqual([1, 0]);
  });

  it('renews and replays a 401 from a listed origin', async () => {
    const { service, api, auth } = rig({ origins: [PARTNER] });
    const partner = watchedHost(PARTNER, service);
    await api.get(`${PARTNER}/a`);
    service.expireAccessTokens();

    const response = await api.get(`${PARTNER}/b`);

    expect(response.status).toBe(200);
    const [access1, , access2] = service.issued;
    expect(partner).toEqual([`Bearer ${access1}`, `Bearer ${access1}`, `Bearer ${access2}`]);
    expect(auth.stats()).toMatchObject({ logins: 1, refreshes: 1, replays: 1, failures: 0 });
  });

  it('matches a RegExp with the g flag on every request, not every other one', async () => {
    const { service, api } = rig({ origins: [/^https:\/\/api\.test$/g] });

    const results = await Promise.allSettled([api.get('/a'), api.get('/b'), api.get('/c'), api.get('/d')]);

    expect(results.map((result) => result.status)).toEqual(['fulfilled', 'fulfilled', 'fulfilled', 'fulfilled']);
    expect(service.received.filter((entry) => entry.route === 'data').map((entry) => entry.authorization)).toEqual(
      Array.from({ length: 4 }, () => `Bearer ${service.issued[0]}`),
    );
  });
});

describe('skipAuth', () => {
  it('sends no token, and hands the 401 to the caller without renewing or replaying', async () => {
    const { service, api, auth } = rig();
    await api.get('/prime');

    const error = await failureOf(api.get('/public', { skipAuth: true }), axios.isAxiosError);

    expect(error.response?.status).toBe(401);
    const publicCalls = service.received.filter((entry) => entry.path === '/public');
    expect(publicCalls.map((entry) => entry.authorization)).toEqual([undefined]);
    expect([service.counters.loginCalls, service.counters.refreshCalls]).toEqual([1, 0]);
    expect(auth.stats()).toMatchObject({ logins: 1, refreshes: 0, replays: 0, failures: 0 });
  });

  it('needs no login, and keeps a header the caller set', async () => {
    const { service, api, auth } = rig();

    await failureOf(
      api.get('/public', { skipAuth: true, headers: { Authorization: 'Bearer caller-owned' } }),
      axios.isAxiosError,
    );

    expect(service.received.map((entry) => [entry.route, entry.authorization])).toEqual([
      ['data', 'Bearer caller-owned'],
    ]);
    expect(await auth.getTokens()).toBeNull();
    expect(auth.stats()).toMatchObject({ logins: 0, refreshes: 0, replays: 0, failures: 0 });
  });
});

// The option came in axios 1.8.0, and its Node adapter honours it from 1.8.2: before, the request goes to the absolute
// URL whatever the option says, and the origin check judges it by that URL, so the token stays home.
const honoured = /^1\.(8\.[2-9]|8\.\d\d|(9|\d\d)\.)/.test(axios.VERSION);

describe(`allowAbsoluteUrls: false (axios ${axios.VERSION}${honoured ? '' : ', which ignores it'})`, () => {
  it('keeps an absolute URL under baseURL, where it carries the token, and nothing reaches the other host', async () => {
    const { service, api } = rig();
    api.defaults.allowAbsoluteUrls = false;
    const third = watchedHost(THIRD);

    if (!honoured) {
      await expect(api.get(`${THIRD}/steal`)).rejects.toMatchObject({ response: { status: 401 } });
      expect(third).toEqual([undefined]);
      return;
    }
    const response = await api.get<{ path: string }>(`${THIRD}/steal`);

    expect(response.status).toBe(200);
    expect(response.data.path).toBe('/https://third.test/steal');
    expect(third).toEqual([]);
    expect(service.received.filter((entry) => entry.route === 'data').map((entry) => entry.authorization)).toEqual([
      `Bearer ${service.issued[0]}`,
    ]);
  });

  it('does the same when set on the request alone', async () => {
    const { service, api } = rig();
    const third = watchedHost(THIRD);

    if (!honoured) {
      await expect(api.get(`${THIRD}/steal`, { allowAbsoluteUrls: false })).rejects.toMatchObject({
        response: { status: 401 },
      });
      expect(third).toEqual([undefined]);
      return;
    }
    const response = await api.get<{ path: string }>(`${THIRD}/steal`, { allowAbsoluteUrls: false });

    expect(response.data.path).toBe('/https://third.test/steal');
    expect(third).toEqual([]);
    expect(service.received.at(-1)?.authorization).toBe(`Bearer ${service.issued[0]}`);
  });
});

describe('auth and data on different hosts', () => {
  const AUTH = 'https://auth.test';
  const DATA = 'https://data.test';

  it('logs in and renews at authBaseURL, and sends the token to the data host, end to end', async () => {
    const service = new FakeTokenService(AUTH, DATA);
    const { api, auth } = rig({ authBaseURL: AUTH }, service);

    await api.get('/orders');
    service.expireAccessTokens();
    const response = await api.post('/orders', { qty: 2 });

    expect(response.status).toBe(200);
    const [access1, refresh1, access2] = service.issued;
    expect(service.received.map((entry) => [entry.origin, entry.route, entry.path, entry.authorization])).toEqual([
      [AUTH, 'login', LOGIN, expect.stringMatching(/^Basic /)],
      [DATA, 'data', '/orders', `Bearer ${access1}`],
      [DATA, 'data', '/orders', `Bearer ${access1}`],
      [AUTH, 'token', TOKEN, undefined],
      [DATA, 'data', '/orders', `Bearer ${access2}`],
    ]);
    expect(JSON.parse(service.received[3]!.body)).toEqual({ refresh_token: refresh1 });
    expect(auth.stats()).toMatchObject({ logins: 1, refreshes: 1, replays: 1, failures: 0 });
  });
});

describe('a refusal outside origins is said, once per origin', () => {
  const AUTH = 'https://auth.test';
  const DATA = 'https://data.test';

  it('names the origin and the `origins` option in one warning per origin, and leaves the refusals alone', async () => {
    const { service, api, auth } = rig();
    const warnings: OriginWarning[] = [];
    auth.on('warning', (warning) => warning.code === 'ORIGIN_NOT_IN_ORIGINS' && warnings.push(warning));
    watchedHost(THIRD);
    watchedHost('https://other.test');

    const refused = await Promise.all(
      [`${THIRD}/a`, `${THIRD}/b`, 'https://other.test/c', `${THIRD}/d`].map((url) =>
        failureOf(api.get(url), axios.isAxiosError),
      ),
    );

    expect(refused.map((error) => error.response?.status)).toEqual([401, 401, 401, 401]);
    expect(warnings.map(({ code, origin }) => [code, origin])).toEqual([
      ['ORIGIN_NOT_IN_ORIGINS', THIRD],
      ['ORIGIN_NOT_IN_ORIGINS', 'https://other.test'],
    ]);
    expect(warnings[0]!.message).toBe(
      `${THIRD} refused a request that went without the access token: that origin is not in \`origins\` (${API}). ` +
        `If it should get the token, list it: \`origins: [..., '${THIRD}']\` (without \`origins\`, only the origins of ` +
        "`authBaseURL` and of the instance's `baseURL` get it). Said once per origin.",
    );
    expect(service.received).toHaveLength(0);
    expect(auth.stats()).toEqual({
      logins: 0,
      refreshes: 0,
      replays: 0,
      failures: 0,
      waiting: 0,
      budget: { login: 10, refresh: 30 },
    });
  });

  it('says nothing of an answer that is no token refusal, nor of a request sent with skipAuth', async () => {
    const { api, auth } = rig();
    const warnings: unknown[] = [];
    auth.on('warning', (warning) => warnings.push(warning));
    nock(THIRD).get('/missing').reply(404).get('/open').reply(200).get('/skipped').reply(401);

    await failureOf(api.get(`${THIRD}/missing`), axios.isAxiosError);
    await api.get(`${THIRD}/open`);
    await failureOf(api.get(`${THIRD}/skipped`, { skipAuth: true }), axios.isAxiosError);

    expect(warnings).toEqual([]);
  });

  it('asks isTokenRejected whether a refusal outside origins looks like a token’s', async () => {
    const { auth, api } = rig({
      isTokenRejected: (error) => (error.response?.data as { code?: string })?.code === 'expired',
    });
    const warnings: string[] = [];
    auth.on('warning', (warning) => warning.code === 'ORIGIN_NOT_IN_ORIGINS' && warnings.push(warning.origin));
    nock(THIRD).get('/a').reply(403, { code: 'forbidden' }).get('/b').reply(403, { code: 'expired' });

    await failureOf(api.get(`${THIRD}/a`), axios.isAxiosError);
    expect(warnings).toEqual([]);
    await failureOf(api.get(`${THIRD}/b`), axios.isAxiosError);
    expect(warnings).toEqual([THIRD]);
  });

  it('goes to console.warn when nobody listens to `warning`, once', async () => {
    const { api } = rig();
    watchedHost(THIRD);
    const warned = jest.spyOn(console, 'warn').mockImplementation(() => undefined);
    try {
      await failureOf(api.get(`${THIRD}/a`), axios.isAxiosError);
      await failureOf(api.get(`${THIRD}/b`), axios.isAxiosError);

      expect(warned.mock.calls).toEqual([
        [expect.stringMatching(/^axios-token-keeper: https:\/\/third\.test refused/)],
      ]);
    } finally {
      warned.mockRestore();
    }
  });

  it('on the global axios, with the API on another host and no `origins`: the first 401 names the missing origin', async () => {
    const service = new FakeTokenService(AUTH, DATA);
    const auth = attachTokenAuth(axios, { credentials: { username: USERNAME, password: PASSWORD }, authBaseURL: AUTH });
    try {
      const warnings: OriginWarning[] = [];
      auth.on('warning', (warning) => warning.code === 'ORIGIN_NOT_IN_ORIGINS' && warnings.push(warning));

      const error = await failureOf(axios.get(`${DATA}/orders`), axios.isAxiosError);

      expect(error.response?.status).toBe(401);
      expect(warnings.map(({ origin }) => origin)).toEqual([DATA]);
      expect(warnings[0]!.message).toContain(`not in \`origins\` (${AUTH})`);
      expect(service.counters.loginCalls).toBe(0);
    } finally {
      auth.eject();
    }
  });

  it('on the global axios with `origins` listing the API: one login, the token on every request, nothing warned', async () => {
    const service = new FakeTokenService(AUTH, DATA);
    const auth = attachTokenAuth(axios, {
      credentials: { username: USERNAME, password: PASSWORD },
      authBaseURL: AUTH,
      origins: [DATA],
    });
    try {
      const warnings: unknown[] = [];
      auth.on('warning', (warning) => warnings.push(warning));

      await Promise.all([axios.get(`${DATA}/a`), axios.post(`${DATA}/b`, { qty: 1 })]);

      expect(service.counters).toMatchObject({ loginCalls: 1, refreshCalls: 0, dataCalls: 2 });
      expect(service.received.filter((entry) => entry.route === 'data').map((entry) => entry.authorization)).toEqual([
        `Bearer ${service.issued[0]}`,
        `Bearer ${service.issued[0]}`,
      ]);
      expect(warnings).toEqual([]);
    } finally {
      auth.eject();
    }
    await failureOf(axios.get(`${DATA}/after-eject`), axios.isAxiosError);
    expect(service.received.at(-1)?.authorization).toBeUndefined();
  });
});

describe('without `origins`, the instance’s baseURL as each request is sent', () => {
  const AUTH = 'https://auth.test';
  const DATA = 'https://data.test';
  const MOVED = 'https://moved.test';

  it('honours a baseURL set after attach, and renews there on expiry', async () => {
    const service = new FakeTokenService(AUTH, DATA);
    const api = axios.create();
    const auth = attachTokenAuth(api, { credentials: { username: USERNAME, password: PASSWORD }, authBaseURL: AUTH });

    api.defaults.baseURL = DATA;
    await api.get('/orders');
    service.expireAccessTokens();
    await api.get('/orders');

    const [access1, , access2] = service.issued;
    expect(service.received.filter((entry) => entry.route === 'data').map((entry) => entry.authorization)).toEqual([
      `Bearer ${access1}`,
      `Bearer ${access1}`,
      `Bearer ${access2}`,
    ]);
    expect(auth.stats()).toMatchObject({ logins: 1, refreshes: 1, replays: 1, failures: 0 });
  });

  it('follows a baseURL assigned: the new origin gets the token, the one it replaced no longer does', async () => {
    const service = new FakeTokenService(AUTH, DATA);
    const api = axios.create({ baseURL: DATA });
    attachTokenAuth(api, { credentials: { username: USERNAME, password: PASSWORD }, authBaseURL: AUTH });
    await api.get('/orders');
    const moved = watchedHost(MOVED, service);

    api.defaults.baseURL = MOVED;
    await api.get('/orders');
    await failureOf(api.get(`${DATA}/orders`), axios.isAxiosError);

    expect(moved).toEqual([`Bearer ${service.issued[0]}`]);
    expect(service.received.filter((entry) => entry.route === 'data').map((entry) => entry.authorization)).toEqual([
      `Bearer ${service.issued[0]}`,
      undefined,
    ]);
    expect(service.counters.loginCalls).toBe(1);
  });

  it('follows `instance.defaults` replaced whole, as hey-api’s setConfig does before it sends baseURL with each request', async () => {
    const service = new FakeTokenService(AUTH, DATA);
    const api = axios.create();
    attachTokenAuth(api, { credentials: { username: USERNAME, password: PASSWORD }, authBaseURL: AUTH });
    // What @hey-api/client-axios' setConfig({ baseURL }) and its request do: axios' own defaults stay as they were.
    api.defaults = { ...api.defaults, baseURL: DATA };
    await api.get('/orders', { baseURL: api.defaults.baseURL });

    expect(service.received.map((entry) => [entry.origin, entry.route, entry.authorization])).toEqual([
      [AUTH, 'login', expect.stringMatching(/^Basic /)],
      [DATA, 'data', `Bearer ${service.issued[0]}`],
    ]);
  });
});
