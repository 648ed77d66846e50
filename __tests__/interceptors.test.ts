import axios, { isAxiosError } from 'axios';
import type { AxiosError, AxiosInstance, AxiosResponse, InternalAxiosRequestConfig } from 'axios';
import axiosRetry from 'axios-retry';
import { setupCache } from 'axios-cache-interceptor';
import { attachTokenAuth } from '../lib/index.js';
import type { TokenAuth } from '../lib/index.js';
import type { TokenServiceEmulator } from '../lib/emulator/index.js';
import { closeEmulatorsAfterEach, emulator, E2E_PASSWORD, E2E_USER } from './helpers/emulator.js';
import { burst, manualClock } from './helpers/flow.js';

// The app's own interceptors, registered before or after attach, over real HTTP: each runs once per request and
// sees only the final answer, whatever their order.
closeEmulatorsAfterEach();

/** An error class of the app's own, as an error normaliser makes. */
class ApiError extends Error {
  constructor(readonly original: AxiosError) {
    super(`API call failed with HTTP ${original.response?.status ?? '?'}`);
  }
}

/** How many times each app handler ran. */
interface Runs {
  request: number;
  success: number;
  failure: number;
  retries: number;
}

interface AppSetup {
  /** Registers the app's interceptors on `api`, counting their runs in `runs`. */
  install(api: AxiosInstance, runs: Runs): void;
  /** What a caller gets for a 200 of `path`, after the app's interceptors. */
  expectAnswer(value: unknown, path: string): void;
  /** What a caller gets for a 401 the renewal did not cure, after the app's interceptors. */
  expectRefusal(reason: unknown): void;
  /** The app's error handler runs for a refusal (not all setups have one). */
  handlesErrors: boolean;
}

interface Handlers {
  /** What the app's request interceptor adds to a request. */
  stamp?: (config: InternalAxiosRequestConfig, run: number) => void;
  /** What the app's response interceptor makes of an answer; without it, the answer as it is. */
  success?: (response: AxiosResponse) => unknown;
  /** What the app's error handler makes of an error; `false` registers none. */
  failure?: ((error: AxiosError) => unknown) | false;
}

/**
 * The app's interceptors, counting their runs: a request interceptor, and a response interceptor with a success and,
 * unless `failure: false`, an error handler. Beside a package's own, they see how often a request passes.
 */
function appInterceptors(api: AxiosInstance, runs: Runs, handlers: Handlers = {}): void {
  api.interceptors.request.use((config) => {
    runs.request += 1;
    handlers.stamp?.(config, runs.request);
    return config;
  });
  const { success = (response: AxiosResponse) => response, failure = (error: AxiosError) => Promise.reject(error) } =
    handlers;
  api.interceptors.response.use(
    (response) => {
      runs.success += 1;
      return success(response) as AxiosResponse;
    },
    failure === false
      ? undefined
      : (error: AxiosError) => {
          runs.failure += 1;
          return failure(error);
        },
  );
}

const anAxiosResponse = (value: unknown, path: string): void => {
  expect((value as AxiosResponse).status).toBe(200);
  expect((value as AxiosResponse).data).toMatchObject({ path, user: E2E_USER });
};
const anAxios401 = (reason: unknown): void => {
  expect(isAxiosError(reason) && reason.response?.status).toBe(401);
};

const SETUPS: Record<string, AppSetup> = {
  'r => r.data': {
    install: (api, runs) =>
      appInterceptors(api, runs, { success: (response) => response.data as unknown, failure: false }),
    // The unwrapped body: a replay that passed `r => r.data` twice would give undefined.
    expectAnswer: (value, path) => expect(value).toMatchObject({ path, user: E2E_USER }),
    expectRefusal: anAxios401,
    handlesErrors: false,
  },
  'an error normaliser': {
    install: (api, runs) => appInterceptors(api, runs, { failure: (error) => Promise.reject(new ApiError(error)) }),
    expectAnswer: anAxiosResponse,
    expectRefusal: (reason) => {
      expect(reason).toBeInstanceOf(ApiError);
      expect((reason as ApiError).original.response?.status).toBe(401);
    },
    handlesErrors: true,
  },
  'a request-id stamp': {
    install: (api, runs) =>
      appInterceptors(api, runs, { stamp: (config, run) => void config.headers.set('X-Request-Id', `req-${run}`) }),
    expectAnswer: anAxiosResponse,
    expectRefusal: anAxios401,
    handlesErrors: true,
  },
  'axios-retry on 5xx': {
    install(api, runs) {
      axiosRetry(api, { retries: 2, retryDelay: () => 0, onRetry: () => void (runs.retries += 1) });
      appInterceptors(api, runs);
    },
    expectAnswer: anAxiosResponse,
    expectRefusal: anAxios401,
    handlesErrors: true,
  },
  'axios-cache-interceptor': {
    install(api, runs) {
      setupCache(api);
      appInterceptors(api, runs);
    },
    expectAnswer: (value, path) => {
      anAxiosResponse(value, path);
      expect((value as { cached?: boolean }).cached).toBe(false);
    },
    expectRefusal: anAxios401,
    handlesErrors: true,
  },
};

interface Rig {
  service: TokenServiceEmulator;
  api: AxiosInstance;
  auth: TokenAuth;
  runs: Runs;
}

async function rig(setup: AppSetup, order: 'before' | 'after', clock?: () => number): Promise<Rig> {
  const service = await emulator();
  const api = axios.create({ baseURL: service.url });
  const runs: Runs = { request: 0, success: 0, failure: 0, retries: 0 };
  if (order === 'before') setup.install(api, runs);
  const auth = attachTokenAuth(api, { credentials: { username: E2E_USER, password: E2E_PASSWORD }, clock });
  if (order === 'after') setup.install(api, runs);
  return { service, api, auth, runs };
}

const paths = Array.from({ length: 10 }, (_, i) => `/orders/${i}`);

describe.each(Object.entries(SETUPS))('the app’s %s', (_, setup) => {
  describe.each(['before', 'after'] as const)('registered %s attach', (order) => {
    it('an expiry burst of 10: one token call, every caller gets the final answer, each handler runs once per request', async () => {
      const { service, api, auth, runs } = await rig(setup, order);
      await api.get('/prime');
      service.expireAccessTokens();

      const results = await burst(10, (i) => api.get(paths[i]!));

      results.forEach((result, i) => {
        expect(result.status).toBe('fulfilled');
        setup.expectAnswer((result as PromiseFulfilledResult<unknown>).value, paths[i]!);
      });
      expect(service.counters).toMatchObject({ logins: 1, refreshes: 1, unauthorized: 10 });
      expect(auth.stats()).toMatchObject({ logins: 1, refreshes: 1, replays: 10 });
      // Eleven requests (the first, then ten): each app handler ran eleven times, none for the cured 401s.
      expect(runs).toEqual({ request: 11, success: 11, failure: 0, retries: 0 });
      // The replays went out as the request interceptors left them: same request id on both sends of a path.
      for (const path of paths) {
        const sends = service.calls.filter((call) => call.path === path);
        expect(sends).toHaveLength(2);
        expect(sends[1]!.requestId).toBe(sends[0]!.requestId);
      }
    });

    it('a 401 the renewal does not cure reaches the caller through the app’s handlers once', async () => {
      const { service, api, runs } = await rig(setup, order);
      await api.get('/prime');
      service.setAlwaysUnauthorized('/admin');

      const reason = await api.get('/admin').then(
        () => undefined,
        (error: unknown) => error,
      );

      setup.expectRefusal(reason);
      expect(service.counters).toMatchObject({ logins: 1, refreshes: 1 });
      expect(service.calls.filter((call) => call.path === '/admin')).toHaveLength(2);
      expect(runs).toEqual({ request: 2, success: 1, failure: setup.handlesErrors ? 1 : 0, retries: 0 });
    });
  });
});

describe.each(['before', 'after'] as const)('axios-retry registered %s attach', (order) => {
  it('retries a 503 in the same burst as a renewal: one token call, every request answered', async () => {
    const { service, api, runs } = await rig(SETUPS['axios-retry on 5xx']!, order);
    await api.get('/prime');
    service.expireAccessTokens();
    service.inject('data', { status: 503 }, 1);

    const results = await burst(10, (i) => api.get(paths[i]!));

    expect(results.filter((result) => result.status === 'fulfilled')).toHaveLength(10);
    expect(service.counters).toMatchObject({ logins: 1, refreshes: 1, faults: 1 });
    // The retried request passes the interceptors again, as axios-retry sends it anew: its own chain answers, then
    // the first request's chain resumes with that answer (axios-retry's handler ran before the counting one). The
    // other nine pass once.
    expect(runs).toEqual({ request: 12, success: 12, failure: 0, retries: 1 });
  });
});

describe('axios-cache-interceptor and a token known to be expired', () => {
  // Registered before attach, its cache hit replaces the plugin's adapter and needs no token; registered after, the
  // hit goes through the plugin's adapter, which renews first (a renewal the next network request needed anyway).
  it.each([
    ['before', 0],
    ['after', 1],
  ] as const)('registered %s attach: a cache hit makes no data call and %i token call', async (order, renewals) => {
    const clock = manualClock();
    const { service, api } = await rig(SETUPS['axios-cache-interceptor']!, order, clock.now);
    const first = await api.get('/catalogue');
    const dataCalls = service.counters.dataCalls;
    // Past the 45 minutes the plugin assumes: its token is known to be expired (the cache keeps real time).
    clock.advance(46 * 60_000);

    const again = await api.get('/catalogue');

    expect(again.data).toEqual(first.data);
    expect((again as { cached?: boolean }).cached).toBe(true);
    expect(service.counters.dataCalls).toBe(dataCalls);
    expect(service.counters.refreshes).toBe(renewals);
  });
});
