import type { AxiosError, InternalAxiosRequestConfig } from 'axios';
import type { TokenAuthError, TokenAuthErrorCode } from './errors.js';

declare module 'axios' {
  interface AxiosRequestConfig {
    /** Send this request without the access token, and leave its 401 to the caller. */
    skipAuth?: boolean;
  }
}

/** The username and password of the login call: sent as HTTP Basic, or as `loginRequest` puts them. */
export interface Credentials {
  /** The part before the colon of the Basic value. A `:` in it (RFC 7617 forbids one) fails, when sent as Basic. */
  username: string;
  /** The part after the colon; it may contain `:`. Never logged, never put in an error. */
  password: string;
}

/**
 * Credentials, or a function (sync or async) asked for them only when a login is needed.
 *
 * @example
 * // Read at login time, so a rotated secret is picked up without a restart.
 * const credentials: CredentialsSource = async () => ({
 *   username: 'svc-orders',
 *   password: await readSecret('orders-api'),
 * });
 */
export type CredentialsSource =
  Credentials | (() => Credentials | null | undefined | Promise<Credentials | null | undefined>);

/** The pair a store keeps. Plain data, so a store may serialise it. */
export interface TokenPair {
  /** The access token, sent on requests to `origins`. */
  access: string;
  /** The refresh token, sent only to the token call; absent when the service gave none. */
  refresh?: string;
  /** When the access token expires, in epoch milliseconds, when known. */
  expiresAt?: number;
}

/** What a login or token answer yields once parsed. */
export interface ParsedTokens {
  /** The access token. */
  access: string;
  /** A new refresh token, when the service rotates them. */
  refresh?: string;
  /** Lifetime of the access token in seconds, when the answer says. */
  expiresIn?: number;
}

/** How many login and token calls may reach the service in a rolling window. */
export interface TokenBudgetLimits {
  /** @default 3_600_000 (an hour) */
  windowMs: number;
  /** Login calls, retries included. @default 10 */
  logins: number;
  /** Token calls, retries included. @default 30 */
  refreshes: number;
}

/** What the token call sends besides the method and URL. */
export interface RefreshRequest {
  /** The body; axios sends an object as JSON, and a `URLSearchParams` as a form. */
  data?: unknown;
  /** Headers of the token call, besides `Accept: application/json`. */
  headers?: Record<string, string>;
  /** Query parameters of the token call. */
  params?: Record<string, unknown>;
  /** Send the browser's cookies with the call (a refresh token kept in an HttpOnly cookie). */
  withCredentials?: boolean;
}

/** What the login call sends besides the method and URL, when it is not HTTP Basic: the whole request. */
export interface LoginRequest {
  /** The body; axios sends an object as JSON, and a `URLSearchParams` as a form (OAuth2). */
  data?: unknown;
  /** Headers of the login call, besides `Accept: application/json`. No `Authorization` is added. */
  headers?: Record<string, string>;
  /** Query parameters of the login call. */
  params?: Record<string, unknown>;
  /** Send the browser's cookies with the call, and let it set them (a refresh token kept in an HttpOnly cookie). */
  withCredentials?: boolean;
}

/** Held while renewing; released when the renewal ends, whatever its outcome. */
export interface TokenStoreLock {
  /**
   * A number that grows with every lock the store grants. The plugin passes it back to `set` and `clear`, so that a
   * holder whose lock lapsed (its process stalled past the lease) cannot overwrite the tokens of a later holder.
   * Stores whose lock cannot lapse (one process) leave it out.
   */
  readonly fence?: number;
  /** Lets the next holder take the lock. The plugin calls it once, when the renewal ends, off the request path. */
  release(): void | Promise<void>;
}

/** What the plugin asks of a store's lock, besides the lock. */
export interface TokenStoreLockRequest {
  /**
   * Aborts when the lock is no longer needed: another holder's newer pair arrived while this one waited. The store
   * may stop trying and reject; the plugin releases a lock granted after it.
   */
  readonly signal?: AbortSignal | undefined;
  /**
   * How long one try at the lock may take (the plugin's `storeTimeoutMs`). A try that does not answer in time means
   * the store stopped answering, not that the lock is busy: the store rejects at once, saying so, rather than
   * waiting out its `lockTimeoutMs`.
   */
  readonly tryTimeoutMs?: number | undefined;
}

/**
 * Where the tokens live. Every method may be sync or async. `lock` and `subscribe` are optional: a store that
 * several holders share (tabs, processes, hosts) implements them so that the holders renew once between them.
 */
export interface TokenStore {
  /** The stored pair, or null (or undefined) when there is none. */
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
   * shared store gives up after a timeout of its own and rejects; the plugin then renews without the lock. `request`
   * says when to stop waiting and how long one try may take; a store may ignore it.
   */
  lock?(request?: TokenStoreLockRequest): Promise<TokenStoreLock>;
  /** Calls `listener` when another holder writes or clears the pair. Returns an unsubscribe function. */
  subscribe?(listener: (pair: TokenPair | null) => void): () => void;
}

/** Options of {@link attachTokenAuth}. All are optional; most apps pass `credentials`. */
export interface TokenAuthOptions {
  /**
   * Username and password for the login call, or a function (sync or async) that returns them. The function is
   * called only when a login is needed, never at attach time. Without them (an app whose sign-in happens elsewhere
   * and hands the pair over with `auth.setTokens()` or `auth.login(credentials)`), a login the plugin would need
   * fails with `NO_CREDENTIALS`, meaning "sign in again".
   * @default none
   *
   * @example
   * attachTokenAuth(api, {
   *   credentials: () => ({ username: process.env.API_USERNAME ?? '', password: process.env.API_PASSWORD ?? '' }),
   * });
   */
  credentials?: CredentialsSource;
  /**
   * Where the token service lives, when not at the instance's `baseURL` (the real service runs auth and data on
   * different hosts).
   * @default the instance's `baseURL`
   */
  authBaseURL?: string;
  /**
   * Path of the login call (`POST`, HTTP Basic unless `loginRequest` says otherwise), relative to `authBaseURL`.
   * @default '/auth/api/v1/accounts/login'
   */
  loginPath?: string;
  /**
   * Path of the token call (`POST`, with the refresh token), relative to `authBaseURL`.
   * @default '/auth/api/v1/accounts/token'
   */
  tokenPath?: string;
  /**
   * What the token call sends for a refresh token.
   * @default (refreshToken) => ({ data: { refresh_token: refreshToken } })
   *
   * @example
   * // A service that wants the refresh token in a header.
   * refreshRequest: (refreshToken) => ({ headers: { 'X-Refresh-Token': refreshToken } })
   */
  refreshRequest?: (refreshToken: string) => RefreshRequest;
  /**
   * The whole login request, for a service whose login is not HTTP Basic: a JSON or form body, headers, query
   * parameters. When set, no Basic header is added. Whatever it sends is masked in errors and events.
   * @default none: HTTP Basic, `Authorization: Basic base64(username:password)` and no body
   *
   * @example
   * // Django SimpleJWT, and most Express and Nest backends: JSON { username, password }.
   * loginRequest: ({ username, password }) => ({ data: { username, password } })
   */
  loginRequest?: (credentials: Credentials) => LoginRequest;
  /**
   * The token call takes the refresh token from an HttpOnly cookie the browser keeps, not from the plugin: a renewal
   * goes through the token call with `withCredentials` even when no refresh token is held (`refreshRequest` is then
   * called with `''`), and a refusal then leads to a login (or, without credentials, to `NO_CREDENTIALS`: "sign in
   * again").
   * @default false
   */
  refreshTokenInCookie?: boolean;
  /**
   * Reads the tokens out of a 200 answer of the login or token call; returns undefined when there is no
   * access token (the plugin then fails with `TOKEN_RESPONSE_INVALID`).
   * @default reads `access`/`access_token`/`accessToken`, `refresh`/`refresh_token`/`refreshToken` and
   * `expires_in`/`expiresIn` (seconds), at the top level or under `data`
   *
   * @example
   * // An answer shaped { token: { value, ttl }, renew }; `expiresIn` is in seconds.
   * parseTokens: (body) => {
   *   const answer = body as { token?: { value?: string; ttl?: number }; renew?: string };
   *   const access = answer.token?.value;
   *   return access ? { access, refresh: answer.renew, expiresIn: answer.token?.ttl } : undefined;
   * }
   */
  parseTokens?: (body: unknown) => ParsedTokens | null | undefined;
  /**
   * Puts the access token on a request.
   * @default sets the header `Authorization: Bearer <access>`
   *
   * @example
   * applyToken: (config, access) => {
   *   config.headers.set('X-Session', access);
   * }
   */
  applyToken?: (config: InternalAxiosRequestConfig, access: string) => void;
  /**
   * Whether an error of a request that carried the token means the token was refused, so that a renewal and a
   * replay may cure it. Use it for a service that answers 403 to an expired token.
   * @default (error) => error.response?.status === 401
   *
   * @example
   * isTokenRejected: (error) => error.response?.status === 401 || error.response?.status === 403
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
   * latency. When given, it must be shorter than `accessTokenLifetimeMs`.
   * @default the smaller of 30_000 and a tenth of the token's lifetime
   */
  expiryMarginMs?: number;
  /**
   * Timeout of each login and token call. A `Retry-After` longer than this is not waited for.
   * @default 15_000
   */
  tokenTimeoutMs?: number;
  /**
   * Timeout of each store operation and of each try at the store's lock (a lock that is merely busy is waited for,
   * up to the store's `lockTimeoutMs`). Past it the operation counts as a `STORE_FAILED`, the renewal calls the store
   * no more, and the plugin goes on with the tokens it holds: a store that stops answering delays a request by this
   * much at most. Shorter than `tokenTimeoutMs`.
   * @default the smaller of 5_000 and a third of `tokenTimeoutMs`
   */
  storeTimeoutMs?: number;
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
   * After the service rejects the login (`LOGIN_REJECTED`, or `TOKEN_ENDPOINT_NOT_FOUND` for a wrong address),
   * automatic logins stop for this long, and requests fail at once with an error of the same code that says until
   * when, the rejection as its `cause`. Each further rejection in a row doubles it, up to 16 times. `auth.login()`
   * tries again at any time.
   * @default 60_000
   */
  loginCooldownMs?: number;
  /**
   * At most this many login and token calls (retries included) reach the service in a rolling window; past it,
   * calls fail with `TOKEN_BUDGET_EXCEEDED` without leaving. `windowMs` is the window; `logins` and `refreshes` the
   * login and token calls allowed in it. Fields left out keep their default. `false` turns the cap off.
   * @default { windowMs: 3_600_000, logins: 10, refreshes: 30 }
   *
   * @example
   * tokenBudget: { refreshes: 60 } // an hour, 10 logins, 60 token calls
   */
  tokenBudget?: Partial<TokenBudgetLimits> | false;
  /**
   * Lets the Basic credentials and the refresh token travel over plain `http://` to a host other than loopback.
   * @default false
   */
  allowInsecureHttp?: boolean;
  /**
   * Where the tokens are kept. Pass one shared store to let several instances, processes or hosts renew once between
   * them.
   * @default a new {@link MemoryTokenStore}
   *
   * @example
   * import { FileTokenStore } from 'axios-token-keeper/file-store';
   * attachTokenAuth(api, { credentials, store: new FileTokenStore('/var/lib/my-service/tokens.json') });
   */
  store?: TokenStore;
  /**
   * The origins (`https://host:port`) that receive the access token, or patterns an origin must match.
   * Requests elsewhere go out untouched.
   * @default the origins of the instance's `baseURL` and of `authBaseURL`
   *
   * @example
   * origins: ['https://api.example.com', /^https:\/\/[a-z0-9-]+\.api\.example\.com$/]
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
  login: {
    /** Why it ran. */
    reason: RenewalReason;
    /** How long the call took, retries included. */
    durationMs: number;
  };
  /** A token call succeeded; `rotated` when it brought a new refresh token. */
  refresh: {
    /** Why it ran. */
    reason: RenewalReason;
    /** The answer carried a new refresh token, which replaced the stored one. */
    rotated: boolean;
    /** How long the call took, retries included. */
    durationMs: number;
  };
  /** Tokens another holder of the store wrote (or that were there at start) were picked up, with no call. */
  load: {
    /** When the loaded access token expires, in epoch milliseconds, when known. */
    expiresAt: number | undefined;
  };
  /** A request whose token was refused is sent again with the current token. */
  replay: {
    /** The request's method, upper case. */
    method: string;
    /** The request's URL as configured, with any token in it masked. */
    url: string;
  };
  /** A login, token call or store operation failed. */
  failure: {
    /** What failed. */
    operation: 'login' | 'refresh' | 'store';
    /** The error's code, for a `switch`. */
    code: TokenAuthErrorCode;
    /** The error the waiting requests got (or, for the store, the one reported only here). */
    error: TokenAuthError;
  };
  /** `auth.logout()` dropped the tokens. */
  logout: Record<string, never>;
}

/** Counters since attach. */
export interface TokenAuthStats {
  /** Successful logins. */
  logins: number;
  /** Successful token calls. */
  refreshes: number;
  /** Requests sent again after their token was refused. */
  replays: number;
  /** Failed logins, token calls and store operations (one per shared attempt, retries included). */
  failures: number;
}

/** What {@link attachTokenAuth} returns. */
export interface TokenAuth {
  /** Removes the plugin's interceptor; the instance is as before, and may be attached again. */
  eject(): void;
  /**
   * A valid access token, for what does not go through axios (a WebSocket, an `EventSource`, a `fetch`, a signed
   * URL): waits for a renewal under way, renews a token known to be expired, logs in when none is held, with the
   * same single flight, budget and cooldown as requests. Treat it as a secret.
   *
   * @example
   * const socket = new WebSocket(`wss://api.example.com/events?token=${encodeURIComponent(await auth.accessToken())}`);
   */
  accessToken(): Promise<string>;
  /** The pair held, as it is (expired or not), or null. Treat it as a secret. */
  getTokens(): Promise<TokenPair | null>;
  /**
   * Logs in now, even during the cooldown after a rejected login: with `credentials` when given (a sign-in form's,
   * used for this login only and not kept), else with the `credentials` option.
   */
  login(credentials?: Credentials): Promise<void>;
  /**
   * Holds a pair obtained elsewhere (a sign-in page, an OAuth redirect) and writes it to the store, so that tabs and
   * processes sharing it use it too. Its expiry is `expiresAt` when given (a pair from `getTokens()`), else read as an
   * answer's: `expiresIn` in seconds, else a JWT's `exp`, else `accessTokenLifetimeMs`.
   */
  setTokens(tokens: ParsedTokens | TokenPair): Promise<void>;
  /** Renews the access token now through the refresh token (or a login when there is none or it is refused). */
  refresh(): Promise<void>;
  /** Drops the tokens from memory and the store; the next request logs in again. */
  logout(): Promise<void>;
  /**
   * Resolves once the pair of the last renewal is written to the store and its lock released. A renewal hands the
   * new pair to the waiting requests as soon as the service answers and writes it after: await this before
   * `process.exit()`, so that the next run finds the pair instead of logging in again. `login()`, `refresh()` and
   * `setTokens()` resolve after the write already.
   *
   * @example
   * await main();
   * await auth.flush();
   * process.exit(0);
   */
  flush(): Promise<void>;
  /** Listens to an event; returns the function that stops listening. */
  on<E extends keyof TokenAuthEvents>(event: E, listener: (payload: TokenAuthEvents[E]) => void): () => void;
  /** Counters since attach: a copy, for metrics and health checks. */
  stats(): TokenAuthStats;
}
