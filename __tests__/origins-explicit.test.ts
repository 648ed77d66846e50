// The origins the user chooses: `origins` listing strings and RegExps in place of the defaults, a request with
// skipAuth that goes without the token, and allowAbsoluteUrls: false, which keeps an absolute URL under baseURL.
import axios from 'axios';
import { THIRD, watchedHost } from './helpers/origins.js';
import { rig } from './helpers/setup.js';
import { failureOf } from './helpers/settled.js';

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
