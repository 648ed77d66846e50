// The contenders, each set up as its README shows, on the same service: this package, axios-auth-refresh (with its
// defaults, and with `deduplicateRefresh: false`), axios-jwt, and bare axios with a fixed valid token as the floor.
import { Agent } from 'node:http';
import axios from 'axios';
import type { AxiosAdapter, AxiosInstance } from 'axios';
import { createAuthRefresh } from 'axios-auth-refresh';
import { applyAuthTokenInterceptor, setAuthTokens } from 'axios-jwt';
import type { StorageType } from 'axios-jwt';
import { attachTokenAuth } from '../lib/index.js';
import type { TokenAuth, TokenAuthOptions } from '../lib/index.js';
import { BENCH_PASSWORD, BENCH_USER, benchAccountPassword } from './remote-emulator.js';

const LOGIN = '/auth/api/v1/accounts/login';
const TOKEN = '/auth/api/v1/accounts/token';

export interface ContenderSetup {
  /** The service: login, token and data calls. */
  baseURL: string;
  /**
   * How long before a known expiry to renew, for the contenders that renew ahead (this package, axios-jwt). Only the
   * long run, whose tokens live seconds rather than 45 minutes, sets it; otherwise each keeps its default.
   */
  marginMs?: number;
  /** Data calls through this adapter instead of HTTP (the CPU micro-benchmark); token calls still go to the service. */
  adapter?: AxiosAdapter;
}

export interface Contender {
  readonly name: string;
  /** It renews the token: false for the floor, which only shows what a request costs without any of this. */
  readonly renews: boolean;
  /** It sends a request refused with 401 again after renewing: false for axios-jwt, which renews only by `exp`. */
  readonly replays: boolean;
  /** An instance on `setup.baseURL` with the contender in place, logged in, its first request made. */
  create(setup: ContenderSetup): Promise<AxiosInstance>;
}

/**
 * Every contender's instance gets the same agent: keep-alive, and a bound on sockets, as any service that sends
 * thousands of concurrent requests sets.
 */
function instance(setup: ContenderSetup): AxiosInstance {
  return axios.create({
    baseURL: setup.baseURL,
    httpAgent: new Agent({ keepAlive: true, maxSockets: 256 }),
    ...(setup.adapter && { adapter: setup.adapter }),
  });
}

/** The login the peers leave to the application: Basic credentials for the pair. */
async function login(baseURL: string): Promise<{ access: string; refresh: string }> {
  const response = await axios.post<{ access: string; refresh: string }>(`${baseURL}${LOGIN}`, null, {
    auth: { username: BENCH_USER, password: BENCH_PASSWORD },
  });
  return response.data;
}

/** The token call as the real service answers it: rotated refresh tokens. */
async function refreshWith(baseURL: string, refreshToken: string): Promise<{ access: string; refresh: string }> {
  const response = await axios.post<{ data: { access_token: string; refresh_token: string } }>(`${baseURL}${TOKEN}`, {
    refresh_token: refreshToken,
  });
  return { access: response.data.data.access_token, refresh: response.data.data.refresh_token };
}

async function warm(api: AxiosInstance): Promise<AxiosInstance> {
  await api.get('/api/items/warm-up');
  return api;
}

const keeper: Contender = {
  name: 'axios-token-keeper',
  renews: true,
  replays: true,
  async create(setup) {
    const api = instance(setup);
    attachTokenAuth(api, {
      credentials: { username: BENCH_USER, password: BENCH_PASSWORD },
      ...(setup.marginMs !== undefined && { expiryMarginMs: setup.marginMs }),
      // The benchmark runs a day of expiries in minutes: the hourly cap on token calls would stop it.
      tokenBudget: false,
    });
    return warm(api);
  },
};

/**
 * This package alone, for the scenarios of many accounts on one instance, which the peers have no counterpart of: each
 * named account logs in as its own user at the emulator (see `benchAccount`), the default account as the bench's user.
 * `options` are the app's (`maxAccounts`, say); otherwise the defaults, budget included.
 */
export async function keeperWithAccounts(
  setup: ContenderSetup,
  options: Partial<TokenAuthOptions> = {},
): Promise<{ api: AxiosInstance; auth: TokenAuth }> {
  const api = instance(setup);
  const auth = attachTokenAuth(api, {
    credentials: (account) =>
      account === undefined
        ? { username: BENCH_USER, password: BENCH_PASSWORD }
        : { username: account, password: benchAccountPassword(account) },
    ...options,
  });
  return { api: await warm(api), auth };
}

/** axios-auth-refresh's README: a refresh function that stores the token and sets it on the failed request, and a request interceptor that reads the stored token. */
function authRefresh(name: string, options: { deduplicateRefresh?: boolean }): Contender {
  return {
    name,
    renews: true,
    replays: true,
    async create(setup) {
      const api = instance(setup);
      let tokens = await login(setup.baseURL);
      const refreshAuthLogic = async (failedRequest: { response: { config: { headers: Record<string, string> } } }) => {
        tokens = await refreshWith(setup.baseURL, tokens.refresh);
        failedRequest.response.config.headers['Authorization'] = `Bearer ${tokens.access}`;
      };
      createAuthRefresh(api, refreshAuthLogic, options);
      api.interceptors.request.use((request) => {
        request.headers['Authorization'] = `Bearer ${tokens.access}`;
        return request;
      });
      return warm(api);
    },
  };
}

/**
 * axios-jwt's README: `applyAuthTokenInterceptor` with a `requestRefresh` that returns both tokens (the service
 * rotates them), and `setAuthTokens` after the login. Its storage is the browser's; in Node, an in-memory one.
 * It keeps its state in its module: one instance per process.
 */
const axiosJwt: Contender = {
  name: 'axios-jwt',
  renews: true,
  replays: false,
  async create(setup) {
    const api = instance(setup);
    const memory = new Map<string, string>();
    const storage: StorageType = {
      get: (key) => Promise.resolve(memory.get(key) ?? null),
      set: (key, value) => Promise.resolve(void memory.set(key, value)),
      remove: (key) => Promise.resolve(void memory.delete(key)),
    };
    applyAuthTokenInterceptor(api, {
      requestRefresh: async (refreshToken) => {
        const fresh = await refreshWith(setup.baseURL, refreshToken);
        return { accessToken: fresh.access, refreshToken: fresh.refresh };
      },
      getStorage: () => storage,
      ...(setup.marginMs !== undefined && { tokenExpireFudge: setup.marginMs / 1000 }),
    });
    const tokens = await login(setup.baseURL);
    await setAuthTokens({ accessToken: tokens.access, refreshToken: tokens.refresh });
    return warm(api);
  },
};

/** The floor: a token obtained once and set as a default header; nothing renews it. */
const bare: Contender = {
  name: 'bare axios',
  renews: false,
  replays: false,
  async create(setup) {
    const api = instance(setup);
    api.defaults.headers.common['Authorization'] = `Bearer ${(await login(setup.baseURL)).access}`;
    return warm(api);
  },
};

export const FLOOR = bare;
/** This package, as the peers are set up: the default account only. */
export const KEEPER = keeper;

/**
 * Bare axios and the pair it holds, with nothing attached: what the floor of a renewal is measured with. The
 * scenarios script by hand the least any client must do after a refusal (send, take one token call, send again).
 */
export interface BareSession {
  readonly api: AxiosInstance;
  /** The access token held now. */
  access(): string;
  /** A new pair by logging in. */
  login(): Promise<void>;
  /** A new pair by one token call with the refresh token held. */
  refresh(): Promise<void>;
}

export async function bareSession(setup: ContenderSetup): Promise<BareSession> {
  const api = instance(setup);
  let tokens = await login(setup.baseURL);
  await api.get('/api/items/warm-up', { headers: { Authorization: `Bearer ${tokens.access}` } });
  return {
    api,
    access: () => tokens.access,
    login: async () => void (tokens = await login(setup.baseURL)),
    refresh: async () => void (tokens = await refreshWith(setup.baseURL, tokens.refresh)),
  };
}

export const CONTENDERS: readonly Contender[] = [
  keeper,
  authRefresh('axios-auth-refresh', {}),
  authRefresh('axios-auth-refresh (deduplicateRefresh: false)', { deduplicateRefresh: false }),
  axiosJwt,
  bare,
];
