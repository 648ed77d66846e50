// The checks of the options at attach: each bad option fails with a TypeError that names it and says what was
// expected, before anything is sent.
import type { AxiosInstance } from 'axios';
import { credentialsProblem } from '../token-calls/credentials.js';
import { kindOf } from '../support/kind.js';
import { originOf, pageAddress } from '../support/url.js';
import type { TokenAuthOptions } from '../contract/options.js';
import type { TokenBudgetLimits } from '../contract/calls.js';
import { DEFAULTS } from './defaults.js';

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
  dpop: true,
  clientAuthentication: true,
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
  accountOf: true,
  maxAccounts: true,
  clock: true,
} satisfies Record<keyof TokenAuthOptions, true>;

const KNOWN = Object.keys(OPTION_NAMES) as ReadonlyArray<keyof TokenAuthOptions>;

/** The longest delay setTimeout takes (2^31 - 1 ms); a longer one fires at once. */
const LONGEST_TIMER_MS = 2_147_483_647;

export function fail(message: string): never {
  throw new TypeError(`attachTokenAuth: ${message}`);
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

export function resolveBudget(budget: TokenAuthOptions['tokenBudget']): TokenBudgetLimits | false {
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

/** The options' kinds: no unknown name, functions and booleans where they belong, usable credentials. */
export function checkKinds(options: TokenAuthOptions): void {
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
    'accountOf',
    'clock',
  ] as const)
    checkFunction(name, options[name]);
  checkCredentials(options.credentials, options.loginRequest === undefined);
  for (const name of ['allowInsecureHttp', 'refreshTokenInCookie'] as const)
    if (options[name] !== undefined && typeof options[name] !== 'boolean')
      fail(`\`${name}\` must be true or false, got ${kindOf(options[name])}.`);
}

/** The user's options over DEFAULTS: every option that has a default has a value. */
export type Merged = TokenAuthOptions & {
  [Name in keyof typeof DEFAULTS]-?: Exclude<TokenAuthOptions[Name], undefined>;
};

/** The paths, durations and counts, each in its range, and in the right order to the others. */
export function checkValues(merged: Merged, defined: TokenAuthOptions): void {
  checkPath('loginPath', merged.loginPath);
  checkPath('tokenPath', merged.tokenPath);
  checkNumber('accessTokenLifetimeMs', merged.accessTokenLifetimeMs, { infinite: true });
  checkNumber('expiryMarginMs', merged.expiryMarginMs);
  // axios reads a timeout of 0 as none at all: a hung token call would hold every request forever.
  checkNumber('tokenTimeoutMs', merged.tokenTimeoutMs, { positive: true });
  checkNumber('storeTimeoutMs', merged.storeTimeoutMs, { positive: true });
  // A store call as long as a token call would let a silent store hold requests longer than the service may.
  if (defined.storeTimeoutMs !== undefined && merged.storeTimeoutMs >= merged.tokenTimeoutMs)
    fail(
      `\`storeTimeoutMs\` (${merged.storeTimeoutMs}) must be shorter than \`tokenTimeoutMs\` (${merged.tokenTimeoutMs}), so that a store that stops answering delays requests less than a token call may.`,
    );
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
  if (defined.expiryMarginMs !== undefined && merged.expiryMarginMs >= merged.accessTokenLifetimeMs)
    fail(
      `\`expiryMarginMs\` (${merged.expiryMarginMs}) must be shorter than \`accessTokenLifetimeMs\` (${merged.accessTokenLifetimeMs}), or every request would renew the token.`,
    );
}

/**
 * Where the token calls go (`authBaseURL`, or the instance's `baseURL`), checked: absolute, and not plain http://
 * beyond loopback unless `allowInsecureHttp`. Gives it.
 */
export function checkedAuthBaseURL(instance: AxiosInstance, merged: Merged): string {
  const authBaseURL = merged.authBaseURL ?? instance.defaults.baseURL;
  const given = merged.authBaseURL !== undefined;
  if (typeof authBaseURL !== 'string' || originOf(authBaseURL) === undefined)
    fail(
      given
        ? `\`authBaseURL\` must be an absolute URL such as "https://auth.example.com", got ${kindOf(merged.authBaseURL)}.`
        : 'the instance has no absolute `baseURL`, so `authBaseURL` is required: pass where the token service lives, e.g. "https://auth.example.com".',
    );
  if (isPlainRemoteHttp(authBaseURL) && merged.allowInsecureHttp !== true)
    fail(
      given
        ? `\`authBaseURL\` ${originOf(authBaseURL)} is plain http://, so the password and refresh tokens would cross the network unencrypted. ` +
            'Use https://, or pass `allowInsecureHttp: true` if this network is trusted.'
        : `the instance's \`baseURL\` ${originOf(authBaseURL)} is plain http://, and with no \`authBaseURL\` the login and token calls go there too, so the password and refresh tokens would cross the network unencrypted. ` +
            'Use https://, pass `authBaseURL` where the token service answers on https://, or pass `allowInsecureHttp: true` if this network is trusted.',
    );
  if (merged.origins !== undefined) checkOrigins(merged.origins);
  return authBaseURL;
}
