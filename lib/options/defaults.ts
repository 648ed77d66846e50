// Every default of the options, in one place, and the options as attach resolved them for the rooms that read them.
import type { AxiosError, InternalAxiosRequestConfig } from 'axios';
import { parseTokenBody } from '../token-calls/parse.js';
import type { TokenStore } from '../contract/store.js';
import type { TokenAuthOptions } from '../contract/options.js';
import type { TokenScheme } from '../token-calls/scheme.js';
import type { ClientAuthLayer } from '../contract/client-auth.js';
import type { CredentialsSource, TokenBudgetLimits, TokenCallRequest } from '../contract/calls.js';

/**
 * Every default of {@link TokenAuthOptions}, in one place, frozen. Those not here are computed at attach time:
 * `authBaseURL` and `origins` from the instance's `baseURL`; `store` is a new `MemoryTokenStore`, made by the renewal that uses it.
 *
 * @example
 * // Keep the default test and add a status.
 * isTokenRejected: (error) => DEFAULTS.isTokenRejected(error) || error.response?.status === 403
 */
export const DEFAULTS = Object.freeze({
  /** {@link TokenAuthOptions.loginPath}. */
  loginPath: '/auth/api/v1/accounts/login',
  /** {@link TokenAuthOptions.tokenPath}. */
  tokenPath: '/auth/api/v1/accounts/token',
  /** {@link TokenAuthOptions.refreshRequest}: `{"refresh_token": …}` as JSON. */
  refreshRequest: (refreshToken: string): TokenCallRequest => ({ data: { refresh_token: refreshToken } }),
  /** {@link TokenAuthOptions.parseTokens}: {@link parseTokenBody}. */
  parseTokens: parseTokenBody,
  /** {@link TokenAuthOptions.applyToken}: `Authorization: Bearer <access>`. */
  applyToken: (config: InternalAxiosRequestConfig, access: string): void => {
    // A plain assignment, on the hot path: every adapter normalises the headers before sending, and a differently
    // cased `authorization` set earlier gives way to this one there, as `set()` would have made it.
    config.headers.Authorization = `Bearer ${access}`;
  },
  /** {@link TokenAuthOptions.isTokenRejected}: a 401. */
  isTokenRejected: (error: AxiosError): boolean => error.response?.status === 401,
  /** {@link TokenAuthOptions.accessTokenLifetimeMs}: 45 minutes. */
  accessTokenLifetimeMs: 45 * 60_000,
  /** {@link TokenAuthOptions.expiryMarginMs}: 30 seconds at the most; a tenth of the token's lifetime when shorter. */
  expiryMarginMs: 30_000,
  /** {@link TokenAuthOptions.tokenTimeoutMs}: 15 seconds. */
  tokenTimeoutMs: 15_000,
  /** {@link TokenAuthOptions.storeTimeoutMs}: 5 seconds at the most; a third of `tokenTimeoutMs` when shorter. */
  storeTimeoutMs: 5_000,
  /** {@link TokenAuthOptions.whenStoreDown}: no token without the store's word. */
  whenStoreDown: 'wait' as 'wait' | 'go-alone',
  /** {@link TokenAuthOptions.storeOutageWaitMs}: 15 seconds. */
  storeOutageWaitMs: 15_000,
  /** {@link TokenAuthOptions.tokenRetries}. */
  tokenRetries: 3,
  /** {@link TokenAuthOptions.tokenRetryDelayMs}. */
  tokenRetryDelayMs: 300,
  /** {@link TokenAuthOptions.loginCooldownMs}: a minute. */
  loginCooldownMs: 60_000,
  /** {@link TokenAuthOptions.tokenBudget}: 10 logins and 30 token calls an hour. */
  tokenBudget: Object.freeze({
    /** The rolling window: an hour. */
    windowMs: 3_600_000,
    /** Login calls allowed in the window, retries included. */
    logins: 10,
    /** Token calls allowed in the window, retries included. */
    refreshes: 30,
  }),
  /** {@link TokenAuthOptions.allowInsecureHttp}. */
  allowInsecureHttp: false,
  /** {@link TokenAuthOptions.refreshTokenInCookie}. */
  refreshTokenInCookie: false,
  /** {@link TokenAuthOptions.maxAccounts}: 1,000 named accounts, a server's many users or tenants. */
  maxAccounts: 1_000,
  /** {@link TokenAuthOptions.clock}. */
  clock: Date.now,
} satisfies Partial<TokenAuthOptions>);

export type ResolvedOptions = Required<
  Omit<
    TokenAuthOptions,
    | 'authBaseURL'
    | 'origins'
    | 'tokenBudget'
    | 'store'
    | 'expiryMarginMs'
    | 'credentials'
    | 'loginRequest'
    | 'logoutRequest'
    | 'accountOf'
    | 'dpop'
    | 'clientAuthentication'
  >
> & {
  /** How a pair goes on the wire: Bearer through `applyToken`, or DPoP with `dpop`. Chosen once, at attach. */
  scheme: TokenScheme;
  /** The client authentication set up for the token calls' URL, if `clientAuthentication` was given. */
  clientAuth?: ClientAuthLayer | undefined;
  accountOf?: TokenAuthOptions['accountOf'];
  credentials?: CredentialsSource;
  loginRequest?: TokenAuthOptions['loginRequest'];
  logoutRequest?: TokenAuthOptions['logoutRequest'];
  authBaseURL: string;
  /** No `authBaseURL` was given: messages about the token calls' address say it is the instance's `baseURL`. */
  authBaseURLFromBaseURL: boolean;
  /** How long before its expiry a token of this lifetime is renewed: `expiryMarginMs`, or the default rule. */
  marginFor: (lifetimeMs: number) => number;
  /** `origins` as given, or, without it, authBaseURL's origin. */
  origins: ReadonlyArray<string | RegExp>;
  /** No `origins` was given: the origin of the instance's `baseURL` as each request is sent is allowed too. */
  originsFollowBaseURL: boolean;
  tokenBudget: TokenBudgetLimits | false;
  store?: TokenStore;
};
