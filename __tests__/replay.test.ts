import axios, { AxiosHeaders } from 'axios';
import type { AxiosError } from 'axios';
import { isTokenAuthError } from '../lib/index.js';
import { burst, fulfilled, manualClock, rig, until } from './helpers/setup.js';

/** Logs in, then makes the service forget the access token, so the next request is refused once. */
async function primedAndExpired(options = {}) {
  const setup = rig(options);
  await setup.api.get('/prime');
  setup.service.expireAccessTokens();
  return setup;
}

describe('each request is replayed at most once per renewal', () => {
  it('sends a replay refused because the tokens expired again meanwhile once more, with the newer pair and no token call of its own', async () => {
    const { service, api, auth } = await primedAndExpired();
    service.dataDelayMs = (path) => (path === '/slow' ? 150 : 0);
    const slow = () => service.received.filter((entry) => entry.path === '/slow');

    const pending = api.get('/slow');
    // Its replay is on the way with the pair of the first renewal: the tokens expire again, and another request
    // renews them.
    await until(() => slow().length === 2, 5_000);
    service.expireAccessTokens();
    await api.get('/fast');
    const response = await pending;

    expect(response.status).toBe(200);
    expect(service.counters.refreshCalls).toBe(2);
    expect(slow()).toHaveLength(3);
    expect(new Set(slow().map((entry) => entry.authorization)).size).toBe(3);
    expect(auth.stats().replays).toBe(3);
  });

  it('hands the 401 of a replay to the caller as the axios error', async () => {
    const { service, api, auth } = await primedAndExpired();
    service.alwaysUnauthorized.add('/forbidden');

    const error = (await api.get('/forbidden').catch((e: unknown) => e)) as AxiosError;

    expect(axios.isAxiosError(error)).toBe(true);
    expect(isTokenAuthError(error)).toBe(false);
    expect(error.response?.status).toBe(401);
    expect(service.received.filter((entry) => entry.path === '/forbidden')).toHaveLength(2);
    expect(service.counters.refreshCalls).toBe(1);
    expect(auth.stats().replays).toBe(1);
  });

  it('bounds a 401 that renewal does not cure to one token call per token lifetime', async () => {
    const clock = manualClock();
    const { service, api } = await primedAndExpired({ clock: clock.now });
    service.alwaysUnauthorized.add('/forbidden');

    await api.get('/forbidden').catch(() => undefined);
    expect(service.counters.refreshCalls).toBe(1);

    const sequential: number[] = [];
    for (let i = 0; i < 5; i += 1)
      sequential.push(((await api.get('/forbidden').catch((e: AxiosError) => e)) as AxiosError).response?.status ?? 0);
    const concurrent = await burst(20, () => api.get('/forbidden'));

    expect(sequential).toEqual([401, 401, 401, 401, 401]);
    expect(fulfilled(concurrent)).toBe(0);
    expect(service.counters.refreshCalls).toBe(1);
    expect(service.received.filter((entry) => entry.path === '/forbidden')).toHaveLength(2 + 5 + 20);
    // The same token still serves everything else.
    await expect(api.get('/orders')).resolves.toMatchObject({ status: 200 });

    // A lifetime later the pair is renewed before sending (call 2); the permanent 401 then costs one more
    // attempt at a cure for the new token (call 3), and nothing after that.
    clock.advance(45 * 60_000);
    await burst(10, () => api.get('/forbidden'));
    await burst(10, () => api.get('/forbidden'));
    expect(service.counters.refreshCalls).toBe(3);
  });

  it('does not loop when the service refuses every token it issues', async () => {
    const { service, api } = await primedAndExpired();
    // Tokens issued from now on are never valid.
    service.validAccess.add = () => service.validAccess;

    const results = await burst(30, () => api.get('/orders'));

    expect(fulfilled(results)).toBe(0);
    expect(service.counters.refreshCalls).toBe(1);
    expect(service.counters.loginCalls).toBe(1);
  });
});

describe('a replay keeps the request as sent', () => {
  it('keeps method, URL, params, JSON body, content type and the caller’s headers, and serialises the body once', async () => {
    const transforms = jest.fn((data: unknown) => data);
    const { service, api } = await primedAndExpired();

    const response = await api.post(
      '/orders',
      { item: 'pallet', qty: 3, note: 'a "quoted" word' },
      {
        params: { site: 'north', tag: ['a', 'b'] },
        headers: { 'X-Request-Id': 'r-42' },
        transformRequest: [(data: unknown) => (transforms(data), JSON.stringify(data))],
      },
    );

    const [first, replay] = service.received.filter((entry) => entry.path.startsWith('/orders'));
    expect(response.status).toBe(200);
    expect(transforms).toHaveBeenCalledTimes(1);
    expect(replay?.method).toBe('POST');
    expect(replay?.path).toBe(first?.path);
    // axios spells the brackets `%5B%5D` since 1.12, `[]` before: the same query, and the replay's is the first's.
    expect(decodeURIComponent(replay!.path)).toBe('/orders?site=north&tag[]=a&tag[]=b');
    expect(replay?.body).toBe('{"item":"pallet","qty":3,"note":"a \\"quoted\\" word"}');
    expect(replay?.body).toBe(first?.body);
    expect(replay?.headers['x-request-id']).toBe('r-42');
    expect(replay?.headers['content-type']).toBe(first?.headers['content-type']);
    expect(replay?.authorization).not.toBe(first?.authorization);
  });

  it.each([
    ['a form', () => new URLSearchParams({ a: '1', b: 'x y' }), 'a=1&b=x+y', /application\/x-www-form-urlencoded/],
    ['a text', () => 'plain words', 'plain words', /text\/plain/],
    ['a JSON object', () => ({ nested: { list: [1, 2] } }), '{"nested":{"list":[1,2]}}', /application\/json/],
  ])('sends %s body byte for byte again', async (_name, body, expected, contentType) => {
    const { service, api } = await primedAndExpired();
    const headers = typeof body() === 'string' ? { 'Content-Type': 'text/plain' } : {};

    await api.put('/things/1', body(), { headers });

    const sends = service.received.filter((entry) => entry.path === '/things/1');
    expect(sends.map((entry) => entry.body)).toEqual([expected, expected]);
    expect(sends.map((entry) => String(entry.headers['content-type']))).toEqual([
      expect.stringMatching(contentType),
      expect.stringMatching(contentType),
    ]);
  });

  it.each(['get', 'delete', 'patch'] as const)('replays %s with its method', async (method) => {
    const { service, api } = await primedAndExpired();

    await api.request({ method, url: '/things/7', headers: new AxiosHeaders({ 'X-Trace': 't' }) });

    const sends = service.received.filter((entry) => entry.path === '/things/7');
    expect(sends.map((entry) => entry.method)).toEqual([method.toUpperCase(), method.toUpperCase()]);
    expect(sends.map((entry) => entry.headers['x-trace'])).toEqual(['t', 't']);
  });

  it('runs the caller’s own interceptors once, the replay included, and resolves with the replay’s response', async () => {
    const { service, api } = await primedAndExpired();
    const seen: string[] = [];
    const answered: unknown[] = [];
    api.interceptors.request.use((config) => {
      config.headers.set('X-Request-Id', `r${seen.length}`);
      seen.push(config.url ?? '');
      return config;
    });
    api.interceptors.response.use((response) => {
      answered.push(response.status);
      return response;
    });

    const response = await api.get('/orders/9');

    expect(response.data).toMatchObject({ path: '/orders/9', method: 'GET' });
    expect(seen).toEqual(['/orders/9']);
    expect(answered).toEqual([200]);
    // The replay went out as the interceptor left the request: its header on both sends.
    const sends = service.received.filter((entry) => entry.path === '/orders/9');
    expect(sends.map((entry) => entry.headers['x-request-id'])).toEqual(['r0', 'r0']);
    expect(new Set(sends.map((entry) => entry.authorization)).size).toBe(2);
    expect(service.counters.refreshCalls).toBe(1);
  });
});
