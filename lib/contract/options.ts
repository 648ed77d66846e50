import type { AxiosError, InternalAxiosRequestConfig } from 'axios';
import type { TokenPair, TokenStore } from './store.js';
import type { DpopOptions } from './dpop.js';
import type { ClientAuthentication } from './client-auth.js';
import type {
  Credentials,
  CredentialsSource,
  LogoutRequest,
  ParsedTokens,
  TokenBudgetLimits,
  TokenCallRequest,
} from './calls.js';

declare module 'axios' {
  interface AxiosRequestConfig {
    /** Send this request without the access token, and leave its 401 to the caller. */
    skipAuth?: boolean;
    /**
     * The account this request is for: it carries that account's token, and a refusal renews that account alone.
     * Any non-empty string of at most 256 characters (a tenant id, an e-mail address). Without it, the `account`
     * option decides, else the default account.
     */
    account?: string;
  }
}

/** Options of {@link attachTokenAuth}. All are optional; most apps pass `credentials`. */
export interface TokenAuthOptions {
  /**
   * Username and password for the login call, or a function (sync or async) that returns them, given the account
   * (undefined for the default one). The function is called only when a login is needed, never at attach time. Without them (an app whose sign-in happens elsewhere
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
   * What the token call sends for a refresh token. With `refreshTokenInCookie` and no refresh token held, it is called
   * with `''`.
   * @default (refreshToken) => ({ data: { refresh_token: refreshToken } }); with `refreshTokenInCookie` and no refresh
   * token held, no body
   *
   * @example
   * // A service that wants the refresh token in a header.
   * refreshRequest: (refreshToken) => ({ headers: { 'X-Refresh-Token': refreshToken } })
   */
  refreshRequest?: (refreshToken: string, account: string | undefined) => TokenCallRequest;
  /**
   * The whole login request, for a service whose login is not HTTP Basic: a JSON or form body, headers, query
   * parameters. When set, no Basic header is added. Whatever it sends is masked in errors and events.
   * @default none: HTTP Basic, `Authorization: Basic base64(username:password)` and no body
   *
   * @example
   * // Django SimpleJWT, and most Express and Nest backends: JSON { username, password }.
   * loginRequest: ({ username, password }) => ({ data: { username, password } })
   */
  loginRequest?: (credentials: Credentials, account: string | undefined) => TokenCallRequest;
  /**
   * The token call takes the refresh token from an HttpOnly cookie the browser keeps, not from the plugin: a renewal
   * goes through the token call with `withCredentials` even when no refresh token is held (`refreshRequest` is then
   * called with `''`), and a refusal then leads to a login (or, without credentials, to `NO_CREDENTIALS`: "sign in
   * again").
   * @default false
   */
  refreshTokenInCookie?: boolean;
  /**
   * Tells the server of `auth.logout()`: a `POST` to `path` under `authBaseURL`, made once (no retry, `tokenTimeoutMs`),
   * with what it returns, after the tokens are dropped here; return nothing to skip it, or several calls to make each
   * once, in order (a revocation per token: the OAuth2 presets' `revocationPath` does so). `pair` is the pair that was
   * held, or null (with the refresh token in a cookie, the cookie is what the server ends). Whatever it sends is
   * masked in errors and events; it spends no `tokenBudget`.
   * @default none: the server is not told
   *
   * @example
   * // Clear the HttpOnly refresh cookie (dj-rest-auth); with a refresh token held, revoke it (RFC 7009).
   * logoutRequest: () => ({ path: '/api/auth/logout/', withCredentials: true })
   * logoutRequest: (pair) => pair?.refresh ? { path: '/oauth/revoke', data: new URLSearchParams({ token: pair.refresh }) } : undefined
   */
  logoutRequest?: (
    pair: TokenPair | null,
    account: string | undefined,
  ) => LogoutRequest | readonly LogoutRequest[] | null | undefined;
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
   * Sender-constrained tokens (DPoP, RFC 9449): each login makes a key (`algorithm`, ES256 by default), every login and
   * token call carries a proof signed by it, and the service binds the tokens it answers to the key; requests carry
   * `Authorization: DPoP <access>` and a proof with the token's hash. A `use_dpop_nonce` answer is tried once more with
   * the server's nonce. The key lives beside the pair; a shared `store` must keep it (`dpopKeys`): file and Redis stores
   * with `encryption`, the memory and browser stores. Its code loads at the first call, so an app without it ships none.
   * Not with `applyToken`. See docs/dpop.md.
   * @default false
   */
  dpop?: boolean | DpopOptions;
  /**
   * How the OAuth2 client proves who it is on its login, token and logout calls, beyond a secret: a signed assertion
   * (`private_key_jwt`, `client_secret_jwt`) made fresh for each attempt, or its TLS certificate (`tls_client_auth`).
   * The OAuth2 presets set it from their own `clientAuthentication`; see docs/client-authentication.md.
   *
   * @example
   * import { privateKeyJwt } from 'axios-token-keeper/client-auth';
   * attachTokenAuth(api, { ...oauth2ClientCredentials({ tokenPath: '/oauth2/token', clientId, clientAuthentication: privateKeyJwt({ key }) }) });
   */
  clientAuthentication?: ClientAuthentication;
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
   * up to the store's `lockTimeoutMs`). Past it the operation counts as a `STORE_FAILED`, and the renewal treats the
   * store as down (see `whenStoreDown`); a read that gets no answer is read as no pair. Shorter than `tokenTimeoutMs`.
   * @default the smaller of 5_000 and a third of `tokenTimeoutMs`
   */
  storeTimeoutMs?: number;
  /**
   * What a renewal does when a store with a lock is down (its lock try gets no answer or fails, or another holder
   * keeps the lock past the store's `lockTimeoutMs`). Requests that hold a valid access token go on either way; only
   * the generation of a token waits.
   * - `'wait'`: no token is generated without the store's word. The renewal tries the store again, with back-off,
   *   for `storeOutageWaitMs`, and its waiting requests wait with it (each within its own `timeout` and `signal`);
   *   once the store answers, one holder renews under the lock and the others take its pair. Past the wait the
   *   renewal fails with `STORE_UNAVAILABLE`, and so does a request whose `timeout` passes while it waits; the next
   *   request starts another wait. A fleet costs the account what one process costs, at the price of failed
   *   requests in an outage longer than the wait.
   * - `'go-alone'`: requests are served through any outage. After a third of `storeOutageWaitMs` plus a random part
   *   of the rest, spent trying the store, a holder still without the store's word gets a pair of its own (one login,
   *   then its own refresh token), kept out of the store: at most one login per holder per outage, spread over the
   *   wait rather than all at once; back on the store's pair once it answers.
   * Either way, a `warning` event says so once per outage, and `getState()` shows the wait.
   * @default 'wait'
   */
  whenStoreDown?: 'wait' | 'go-alone';
  /**
   * How long a renewal tries a store that is down before it gives up (`whenStoreDown: 'wait'`) or goes on alone
   * (`'go-alone'`, after a third of it plus a random part of the rest). The default covers Redis Cluster's default
   * `cluster-node-timeout` and a Sentinel failover.
   * @default 15_000
   */
  storeOutageWaitMs?: number;
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
   * Requests elsewhere go out untouched; one of them refused with 401 is said once per origin, in a `warning` event.
   * @default the origin of `authBaseURL`, and that of the instance's `baseURL` as it is when each request is sent
   * (a `baseURL` set after attach counts)
   *
   * @example
   * origins: ['https://api.example.com', /^https:\/\/[a-z0-9-]+\.api\.example\.com$/]
   */
  origins?: ReadonlyArray<string | RegExp>;
  /**
   * The account of a request that names none with the request config's `account`: for example the signed-in user of
   * a server render, from an `AsyncLocalStorage`. Undefined for the default account. A function that throws, or gives
   * something other than a non-empty string, fails the request with `ACCOUNT_INVALID`, nothing sent.
   * @default none: such a request is for the default account
   *
   * @example
   * const user = new AsyncLocalStorage<string>();
   * attachTokenAuth(api, { accountOf: () => user.getStore(), credentials: (account) => vault.credentialsOf(account) });
   */
  accountOf?: (config: InternalAxiosRequestConfig) => string | undefined;
  /**
   * How many named accounts are held in memory at most: past it, the one least recently used and idle (nothing
   * waiting, no renewal under way) is dropped first; one in use never is. With a shared store its pair stays there,
   * and comes back with no login; with the default memory store, it needs a new login.
   * @default 1_000
   */
  maxAccounts?: number;
  /**
   * The time in epoch milliseconds; inject one in tests.
   * @default Date.now
   */
  clock?: () => number;
}
