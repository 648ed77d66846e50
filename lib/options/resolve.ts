import type { AxiosError, AxiosInstance, InternalAxiosRequestConfig } from 'axios';
import { credentialsProblem } from '../token-calls/credentials.js';
import { parseTokenBody } from '../token-calls/parse.js';
import { originOf, pageAddress } from '../support/origins.js';
import type { TokenStore } from '../contract/store.js';
import type { CredentialsSource, TokenAuthOptions, TokenBudgetLimits, TokenCallRequest } from '../contract/options.js';

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
    | 'account'
  >
> & {
  account?: TokenAuthOptions['account'];
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

/** Every option's name, once: the compiler fails here when an option is added to {@link TokenAuthOptions} but not here. */
const OPTION_NAMES = {
  credentials: true,
  loginRequest: true,
  logoutRequest: true,
  refreshTokenInCookie: true,
  authBaseURL: true,
  loginPath: true,
  tokenPath: true,
  refreshRequest: true,
  parseTokens: true,
  applyToken: true,
  isTokenRejected: true,
  accessTokenLifetimeMs: true,
  expiryMarginMs: true,
  tokenTimeoutMs: true,
  storeTimeoutMs: true,
  whenStoreDown: true,
  storeOutageWaitMs: true,
  tokenRetries: true,
  tokenRetryDelayMs: true,
  loginCooldownMs: true,
  tokenBudget: true,
  allowInsecureHttp: true,
  store: true,
  origins: true,
  account: true,
  maxAccounts: true,
  clock: true,
} satisfies Record<keyof TokenAuthOptions, true>;

const KNOWN = Object.keys(OPTION_NAMES) as ReadonlyArray<keyof TokenAuthOptions>;

/** The longest delay setTimeout takes (2^31 - 1 ms); a longer one fires at once. */
const LONGEST_TIMER_MS = 2_147_483_647;

function fail(message: string): never {
  throw new TypeError(`attachTokenAuth: ${message}`);
}

/** A value's kind, as a message about a bad option names it: "the string …", "a number", "an array". */
function kindOf(value: unknown): string {
  if (value === null || value === undefined) return String(value);
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'string'
    ? `the string "${value.slice(0, 40)}"`
    : `${typeof value === 'object' ? 'an' : 'a'} ${typeof value}`;
}

function checkKeys(options: object): void {
  for (const key of Object.keys(options)) {
    if ((KNOWN as readonly string[]).includes(key)) continue;
    const near = KNOWN.find((known) => known.toLowerCase() === key.toLowerCase());
    fail(`unknown option \`${key}\`${near ? `; did you mean \`${near}\`?` : `. Known options: ${KNOWN.join(', ')}.`}`);
  }
}

function checkFunction(name: string, value: unknown): void {
  if (value !== undefined && typeof value !== 'function') fail(`\`${name}\` must be a function, got ${kindOf(value)}.`);
}

function checkNumber(name: string, value: number, { integer = false, infinite = false, positive = false } = {}): void {
  const ok =
    typeof value === 'number' &&
    (positive ? value > 0 : value >= 0) &&
    (Number.isFinite(value) || (infinite && value === Infinity)) &&
    (!integer || Number.isInteger(value));
  const range = positive ? 'more than 0' : '0 or more';
  if (!ok)
    fail(
      `\`${name}\` must be a ${integer ? 'whole ' : ''}number of ${integer ? 'times' : 'milliseconds'} (${range}${infinite ? ', or Infinity' : ''}), got ${kindOf(value)}.`,
    );
}

function checkPath(name: string, value: string): void {
  if (typeof value !== 'string' || value === '')
    fail(`\`${name}\` must be a non-empty string such as "/auth/api/v1/accounts/login", got ${kindOf(value)}.`);
}

function checkCredentials(value: unknown, basic: boolean): void {
  if (typeof value === 'function' || value === undefined) return;
  if (typeof value !== 'object' || value === null)
    // Never echo the value: a string here may well be the password.
    fail(
      `\`credentials\` must be { username, password } or a function that returns them, got ${value === null ? 'null' : `a ${typeof value}`}.`,
    );
  const problem = credentialsProblem(value, basic);
  if (problem !== undefined) fail(`\`credentials\` ${problem}.`);
}

function checkStore(store: TokenStore): void {
  const methods = ['get', 'set', 'clear'] as const;
  const missing = methods.filter(
    (method) => typeof (store as unknown as Record<string, unknown>)?.[method] !== 'function',
  );
  if (missing.length > 0)
    fail(`\`store\` must implement get, set and clear (a TokenStore); missing ${missing.join(', ')}.`);
}

function checkOrigins(origins: unknown): void {
  if (!Array.isArray(origins))
    fail(`\`origins\` must be an array of origins ("https://api.example.com") or RegExps, got ${kindOf(origins)}.`);
  for (const rule of origins) {
    if (rule instanceof RegExp) continue;
    if (typeof rule !== 'string' || !/^[a-z][a-z\d+\-.]*:\/\//i.test(rule) || originOf(rule) === undefined) {
      fail(
        `\`origins\` entries must be absolute origins such as "https://api.example.com" or RegExps, got ${kindOf(rule)}.`,
      );
    }
  }
}

/** Merges the user's options over {@link DEFAULTS} and checks them, so that bad input fails at attach time. */
export function resolveOptions(instance: AxiosInstance, options: TokenAuthOptions): ResolvedOptions {
  if (typeof options !== 'object' || options === null)
    fail(`the second argument must be an options object, such as { credentials }, got ${kindOf(options)}.`);
  checkKeys(options);
  for (const name of [
    'loginRequest',
    'logoutRequest',
    'refreshRequest',
    'parseTokens',
    'applyToken',
    'isTokenRejected',
    'account',
    'clock',
  ] as const)
    checkFunction(name, options[name]);
  checkCredentials(options.credentials, options.loginRequest === undefined);
  for (const name of ['allowInsecureHttp', 'refreshTokenInCookie'] as const)
    if (options[name] !== undefined && typeof options[name] !== 'boolean')
      fail(`\`${name}\` must be true or false, got ${kindOf(options[name])}.`);

  const defined = Object.fromEntries(
    Object.entries(options).filter(([, value]) => value !== undefined),
  ) as TokenAuthOptions;
  const merged = { ...DEFAULTS, ...defined };

  checkPath('loginPath', merged.loginPath);
  checkPath('tokenPath', merged.tokenPath);
  checkNumber('accessTokenLifetimeMs', merged.accessTokenLifetimeMs, { infinite: true });
  checkNumber('expiryMarginMs', merged.expiryMarginMs);
  // axios reads a timeout of 0 as none at all: a hung token call would hold every request forever.
  checkNumber('tokenTimeoutMs', merged.tokenTimeoutMs, { positive: true });
  checkNumber('storeTimeoutMs', merged.storeTimeoutMs, { positive: true });
  // A store call as long as a token call would let a silent store hold requests longer than the service may.
  if (defined.storeTimeoutMs !== undefined && merged.storeTimeoutMs >= merged.tokenTimeoutMs) {
    fail(
      `\`storeTimeoutMs\` (${merged.storeTimeoutMs}) must be shorter than \`tokenTimeoutMs\` (${merged.tokenTimeoutMs}), so that a store that stops answering delays requests less than a token call may.`,
    );
  }
  if (merged.whenStoreDown !== 'wait' && merged.whenStoreDown !== 'go-alone')
    fail(`\`whenStoreDown\` must be 'wait' or 'go-alone', got ${kindOf(merged.whenStoreDown)}.`);
  checkNumber('storeOutageWaitMs', merged.storeOutageWaitMs, { positive: true });
  // A timer's longest wait: past it, setTimeout fires at once, and the wait would end before it began.
  if (merged.storeOutageWaitMs > LONGEST_TIMER_MS)
    fail(`\`storeOutageWaitMs\` must be at most ${LONGEST_TIMER_MS} (about 24 days), got ${merged.storeOutageWaitMs}.`);
  checkNumber('tokenRetries', merged.tokenRetries, { integer: true });
  checkNumber('tokenRetryDelayMs', merged.tokenRetryDelayMs);
  checkNumber('loginCooldownMs', merged.loginCooldownMs);
  if (!Number.isInteger(merged.maxAccounts) || merged.maxAccounts < 1)
    fail(`\`maxAccounts\` must be a whole number of accounts, 1 or more, got ${kindOf(merged.maxAccounts)}.`);
  // A margin given as long as the lifetime would renew before every request; the default one cannot be.
  if (defined.expiryMarginMs !== undefined && merged.expiryMarginMs >= merged.accessTokenLifetimeMs) {
    fail(
      `\`expiryMarginMs\` (${merged.expiryMarginMs}) must be shorter than \`accessTokenLifetimeMs\` (${merged.accessTokenLifetimeMs}), or every request would renew the token.`,
    );
  }
  if (merged.store !== undefined) checkStore(merged.store);
  // Requests would name accounts the store cannot keep: refused now rather than at each request.
  if (merged.account !== undefined && merged.store !== undefined && typeof merged.store.forAccount !== 'function')
    fail(
      '`account` names accounts per request, but the `store` keeps one account (it has no `forAccount(name)`): use a ' +
        'store of this package (memory, file, Redis, browser), or give yours `forAccount`.',
    );

  const baseURL = instance.defaults.baseURL;
  const authBaseURL = merged.authBaseURL ?? baseURL;
  if (typeof authBaseURL !== 'string' || originOf(authBaseURL) === undefined) {
    fail(
      merged.authBaseURL === undefined
        ? 'the instance has no absolute `baseURL`, so `authBaseURL` is required: pass where the token service lives, e.g. "https://auth.example.com".'
        : `\`authBaseURL\` must be an absolute URL such as "https://auth.example.com", got ${kindOf(merged.authBaseURL)}.`,
    );
  }
  if (isPlainRemoteHttp(authBaseURL) && merged.allowInsecureHttp !== true) {
    fail(
      merged.authBaseURL === undefined
        ? `the instance's \`baseURL\` ${originOf(authBaseURL)} is plain http://, and with no \`authBaseURL\` the login and token calls go there too, so the password and refresh tokens would cross the network unencrypted. ` +
            'Use https://, pass `authBaseURL` where the token service answers on https://, or pass `allowInsecureHttp: true` if this network is trusted.'
        : `\`authBaseURL\` ${originOf(authBaseURL)} is plain http://, so the password and refresh tokens would cross the network unencrypted. ` +
            'Use https://, or pass `allowInsecureHttp: true` if this network is trusted.',
    );
  }
  if (merged.origins !== undefined) checkOrigins(merged.origins);
  // Without `origins`, the instance's baseURL is read as each request goes (attach.ts): only authBaseURL's is fixed.
  const origins = merged.origins ?? [originOf(authBaseURL)!];
  const explicitMarginMs = defined.expiryMarginMs;
  return {
    ...merged,
    // With the refresh token in a cookie, the default token call sends no body unless a refresh token is held.
    refreshRequest:
      defined.refreshRequest ??
      (merged.refreshTokenInCookie
        ? (refreshToken) => (refreshToken === '' ? {} : DEFAULTS.refreshRequest(refreshToken))
        : DEFAULTS.refreshRequest),
    authBaseURL,
    authBaseURLFromBaseURL: merged.authBaseURL === undefined,
    origins,
    originsFollowBaseURL: merged.origins === undefined,
    tokenBudget: resolveBudget(merged.tokenBudget),
    storeTimeoutMs: defined.storeTimeoutMs ?? Math.min(DEFAULTS.storeTimeoutMs, merged.tokenTimeoutMs / 3),
    marginFor:
      explicitMarginMs === undefined
        ? (lifetimeMs) => Math.max(0, Math.min(DEFAULTS.expiryMarginMs, lifetimeMs / 10))
        : () => explicitMarginMs,
  };
}

function resolveBudget(budget: TokenAuthOptions['tokenBudget']): TokenBudgetLimits | false {
  if (budget === false) return false;
  if (typeof budget !== 'object' || budget === null)
    fail(`\`tokenBudget\` must be { windowMs?, logins?, refreshes? } or false, got ${kindOf(budget)}.`);
  const limits = { ...DEFAULTS.tokenBudget, ...budget };
  checkNumber('tokenBudget.windowMs', limits.windowMs, { positive: true });
  checkNumber('tokenBudget.logins', limits.logins, { integer: true });
  checkNumber('tokenBudget.refreshes', limits.refreshes, { integer: true });
  return limits;
}

/** http:// to a host other than loopback (localhost, 127.0.0.0/8, ::1). */
function isPlainRemoteHttp(url: string): boolean {
  const parsed = new URL(url, pageAddress());
  return parsed.protocol === 'http:' && !/^(localhost|127(\.\d{1,3}){3}|\[::1\])$/i.test(parsed.hostname);
}
