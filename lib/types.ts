import type { AxiosError, InternalAxiosRequestConfig } from 'axios';
import type { TokenAuthError, TokenAuthErrorCode } from './errors.js';
import type { ParsedTokens } from './parse.js';
import type { TokenBudgetLimits } from './budget.js';

declare module 'axios' {
  interface AxiosRequestConfig {
    /** Send this request without the access token, and leave its 401 to the caller. */
    skipAuth?: boolean;
  }
}

/** The username and password sent, as HTTP Basic, to the login call. */
export interface Credentials {
  username: string;
  password: string;
}

/** Credentials, or a function (sync or async) asked for them only when a login is needed. */
export type CredentialsSource =
  Credentials | (() => Credentials | null | undefined | Promise<Credentials | null | undefined>);

/** The pair a store keeps. Plain data, so a store may serialise it. */
export interface TokenPair {
  access: string;
  refresh?: string;
  /** When the access token expires, in epoch milliseconds, when known. */
  expiresAt?: number;
}

/** What the token call sends besides the method and URL. */
export interface RefreshRequest {
  data?: unknown;
  headers?: Record<string, string>;
  params?: Record<string, unknown>;
}

/** Held while renewing; released when the renewal ends, whatever its outcome. */
export interface TokenStoreLock {
  /**
   * A number that grows with every lock the store grants. The plugin passes it back to `set` and `clear`, so that a
   * holder whose lock lapsed (its process stalled past the lease) cannot overwrite the tokens of a later holder.
   * Stores whose lock cannot lapse (one process) leave it out.
   */
  readonly fence?: number;
  release(): void | Promise<void>;
}

/**
 * Where the tokens live. Every method may be sync or async. `lock` and `subscribe` are optional: a store that
 * several holders share (tabs, processes, hosts) implements them so that the holders renew once between them.
 */
export interface TokenStore {
  get(): TokenPair | null | undefined | Promise<TokenPair | null | undefined>;
  /**
   * Writes the pair. `fence` is that of the lock the writer holds, if any; a store returns `false` instead of
   * writing when a later lock has been granted since, so the writer can take the newer pair instead.
   */
  set(pair: TokenPair, fence?: number): void | boolean | Promise<void | boolean>;
  /** Drops the pair; `fence` as for `set`. */
  clear(fence?: number): void | boolean | Promise<void | boolean>;
  /**
   * Resolves once this holder may renew; the plugin re-reads the store under it before calling the service. A
   * shared store gives up after a timeout of its own and rejects; the plugin then renews without the lock.
   */
  lock?(): Promise<TokenStoreLock>;
  /** Calls `listener` when another holder writes or clears the pair. Returns an unsubscribe function. */
  subscribe?(listener: (pair: TokenPair | null) => void): () => void;
}

/** Options of {@link attachTokenAuth}. Only `credentials` is required. */
export interface TokenAuthOptions {
  /**
   * Username and password for the login call, or a function (sync or async) that returns them. The function is
   * called only when a login is needed, never at attach time.
   */
  credentials: CredentialsSource;
  /**
   * Where the token service lives, when not at the instance's `baseURL` (the real service runs auth and data on
   * different hosts).
   * @default the instance's `baseURL`
   */
  authBaseURL?: string;
  /** @default '/auth/api/v1/accounts/login' */
  loginPath?: string;
  /** @default '/auth/api/v1/accounts/token' */
  tokenPath?: string;
  /**
   * What the token call sends for a refresh token.
   * @default (refreshToken) => ({ data: { refresh_token: refreshToken } })
   */
  refreshRequest?: (refreshToken: string) => RefreshRequest;
  /**
   * Reads the tokens out of a 200 answer of the login or token call; returns undefined when there is no
   * access token (the plugin then fails with `TOKEN_RESPONSE_INVALID`).
   * @default reads `access`/`access_token`/`accessToken`, `refresh`/`refresh_token`/`refreshToken` and
   * `expires_in`, at the top level or under `data`
   */
  parseTokens?: (body: unknown) => ParsedTokens | null | undefined;
  /**
   * Puts the access token on a request.
   * @default sets the header `Authorization: Bearer <access>`
   */
  applyToken?: (config: InternalAxiosRequestConfig, access: string) => void;
  /**
   * Whether an error of a request that carried the token means the token was refused, so that a renewal and a
   * replay may cure it. Use it for a service that answers 403 to an expired token.
   * @default (error) => error.response?.status === 401
   */
  isTokenRejected?: (error: AxiosError) => boolean;
  /**
   * Lifetime of an access token whose answer says nothing of it (no `expires_in`, not a JWT with `exp`).
   * `Infinity` renews only on 401.
   * @default 2_700_000 (45 minutes)
   */
  accessTokenLifetimeMs?: number;
  /**
   * A token known to expire within this margin is renewed before the request is sent, to absorb clock skew and
   * latency. Must be shorter than `accessTokenLifetimeMs`.
   * @default 30_000
   */
  expiryMarginMs?: number;
  /**
   * Timeout of each login and token call, and of each store operation but the wait for its lock (past it, the
   * operation counts as a `STORE_FAILED` and the plugin goes on with the tokens it holds). A `Retry-After` longer
   * than this is not waited for.
   * @default 15_000
   */
  tokenTimeoutMs?: number;
  /**
   * How many times a login or token call is retried after a network error, a 5xx or a 429 (never after a
   * timeout or a 4xx). All waiting requests share the attempts.
   * @default 3
   */
  tokenRetries?: number;
  /**
   * First delay between those retries; it doubles each time, with jitter, and `Retry-After` wins when longer.
   * @default 300
   */
  tokenRetryDelayMs?: number;
  /**
   * After the service rejects the credentials, automatic logins stop for this long and requests fail at once
   * with the same `LOGIN_REJECTED` error. Each further rejection in a row doubles it, up to 16 times.
   * `auth.login()` tries again at any time.
   * @default 60_000
   */
  loginCooldownMs?: number;
  /**
   * At most this many login and token calls (retries included) reach the service in a rolling window; past it,
   * calls fail with `TOKEN_BUDGET_EXCEEDED` without leaving. `false` turns the cap off.
   * @default { windowMs: 3_600_000, logins: 10, refreshes: 30 }
   */
  tokenBudget?: Partial<TokenBudgetLimits> | false;
  /**
   * Lets the Basic credentials and the refresh token travel over plain `http://` to a host other than loopback.
   * @default false
   */
  allowInsecureHttp?: boolean;
  /**
   * Where the tokens are kept.
   * @default a new {@link MemoryTokenStore}
   */
  store?: TokenStore;
  /**
   * The origins (`https://host:port`) that receive the access token, or patterns an origin must match.
   * Requests elsewhere go out untouched.
   * @default the origins of the instance's `baseURL` and of `authBaseURL`
   */
  origins?: ReadonlyArray<string | RegExp>;
  /**
   * The time in epoch milliseconds; inject one in tests.
   * @default Date.now
   */
  clock?: () => number;
}

/** Why a login or refresh ran. */
export type RenewalReason =
  /** Nothing was stored yet. */
  | 'no-token'
  /** The stored access token is known to be expired (proactive renewal). */
  | 'expired'
  /** A request came back with the token refused (401). */
  | 'rejected'
  /** The token call refused the refresh token, so the plugin logged in. */
  | 'refresh-rejected'
  /** Called through `auth.login()` or `auth.refresh()`. */
  | 'manual';

/** Events of {@link TokenAuth.on}. No payload carries a secret. */
export interface TokenAuthEvents {
  /** A login succeeded. */
  login: { reason: RenewalReason; durationMs: number };
  /** A token call succeeded; `rotated` when it brought a new refresh token. */
  refresh: { reason: RenewalReason; rotated: boolean; durationMs: number };
  /** Tokens another holder of the store wrote (or that were there at start) were picked up, with no call. */
  adopt: { expiresAt: number | undefined };
  /** A request whose token was refused is sent again with the current token. */
  replay: { method: string; url: string };
  /** A login, token call or store operation failed. */
  failure: { operation: 'login' | 'refresh' | 'store'; code: TokenAuthErrorCode; error: TokenAuthError };
  /** `auth.logout()` dropped the tokens. */
  logout: Record<string, never>;
}

/** Counters since attach. */
export interface TokenAuthStats {
  logins: number;
  refreshes: number;
  replays: number;
  /** Failed logins, token calls and store operations (one per shared attempt, retries included). */
  failures: number;
}

/** What {@link attachTokenAuth} returns. */
export interface TokenAuth {
  /** Removes both interceptors; the instance is as before, and may be attached again. */
  eject(): void;
  /** The stored pair, or null. Treat it as a secret. */
  getTokens(): Promise<TokenPair | null>;
  /** Logs in now with the credentials, even during the cooldown after a rejected login. */
  login(): Promise<void>;
  /** Renews the access token now through the refresh token (or a login when there is none or it is refused). */
  refresh(): Promise<void>;
  /** Drops the tokens from memory and the store; the next request logs in again. */
  logout(): Promise<void>;
  /** Listens to an event; returns the function that stops listening. */
  on<E extends keyof TokenAuthEvents>(event: E, listener: (payload: TokenAuthEvents[E]) => void): () => void;
  stats(): TokenAuthStats;
}
