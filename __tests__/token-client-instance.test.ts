// The token calls and the instance they serve: the login and the token call go through a private axios instance,
// never through the user's own interceptors, registered before or after attaching, or its defaults, such as an
// Authorization header; with axios' default export as the instance too.
import axios, { isAxiosError } from 'axios';
import type { AxiosInstance } from 'axios';
import { attachTokenAuth } from '../lib/index.js';
import { API, FakeTokenService, PASSWORD, USERNAME } from './helpers/service.js';
import { burst, fulfilled } from './helpers/setup.js';

const credentials = { username: USERNAME, password: PASSWORD };

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
