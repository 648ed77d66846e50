/** Why a token operation failed. A closed set: switch on it. */
export type TokenAuthErrorCode =
  /** The login call answered 4xx: the credentials are wrong, locked or suspended. */
  | 'LOGIN_REJECTED'
  /** The token call answered 4xx for the refresh token (expired, revoked or already used). */
  | 'REFRESH_REJECTED'
  /** `credentials` gave nothing usable, or threw. */
  | 'NO_CREDENTIALS'
  /** A 200 answer carried no access token the parser could read. */
  | 'TOKEN_RESPONSE_INVALID'
  /** The login or token call answered 404 or 405: `authBaseURL`, `loginPath` or `tokenPath` is wrong. */
  | 'TOKEN_ENDPOINT_NOT_FOUND'
  /** The token service could not be reached, timed out, redirected, or answered 5xx/429 after the retries. */
  | 'TOKEN_SERVICE_UNAVAILABLE'
  /** The token store failed to read or write. The plugin goes on with the tokens it holds in memory. */
  | 'STORE_FAILED'
  /**
   * A token was due while the store was down (with `whenStoreDown: 'wait'`, the default): no token is generated
   * without the store's word, and the store did not answer within `storeOutageWaitMs`, or within the request's own
   * `timeout`. Nothing was sent to the token service. The store's own error is the `cause`.
   */
  | 'STORE_UNAVAILABLE'
  /**
   * The store holds a record sealed with a key this holder does not have (a deploy that missed a key of
   * `encryption.keys`): requests fail at once, naming the key, and nothing logs in, since a pair sealed with this
   * holder's key could not be opened by the holders that lack it.
   */
  | 'STORE_KEY_MISSING'
  /** `tokenBudget` refused a login or token call before it left, to keep the account clear of suspension. */
  | 'TOKEN_BUDGET_EXCEEDED'
  /**
   * Signed out: `auth.logout()` was called (while the request waited for tokens, or before it, by this holder or
   * another of the store), and nothing signs in by itself until `auth.login()`, `auth.setTokens()` or `auth.refresh()`.
   */
  | 'LOGGED_OUT'
  /** The logout call of `logoutRequest` answered 4xx: the tokens were dropped here, the server may keep the session. */
  | 'LOGOUT_REJECTED'
  /**
   * The request's account could not be told or kept: its `account` is not a non-empty string of at most 256
   * characters, the `accountOf` option threw, or the `store` keeps one account only. Nothing was sent.
   */
  | 'ACCOUNT_INVALID';

const NAME = 'TokenAuthError';

/**
 * The one error the plugin raises of its own. Its message says what happened and what to do, and never
 * contains a password, a Basic header or a token; `cause` is the original (redacted) error.
 */
export class TokenAuthError extends Error {
  /** Always `'TokenAuthError'`, so that {@link isTokenAuthError} can recognise a copy from another bundle or realm. */
  override readonly name = NAME;
  /** What went wrong, from a closed set: switch on it. */
  readonly code: TokenAuthErrorCode;
  /** HTTP status of the token-service answer behind this error, when there was one. */
  readonly status: number | undefined;

  /**
   * The plugin creates these; a test double of your own may too.
   * @param code One of {@link TokenAuthErrorCode}.
   * @param message What happened and what to do, without any secret.
   * @param options `cause`, the original error; `status`, the token service's HTTP status.
   */
  constructor(code: TokenAuthErrorCode, message: string, options: { cause?: unknown; status?: number } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.status = options.status;
  }
}

/**
 * True for a {@link TokenAuthError}, also one thrown by another copy of this package (another bundle or realm).
 *
 * @example
 * try { await api.get('/orders') } catch (e) { if (isTokenAuthError(e) && e.code === 'LOGIN_REJECTED') showLogin() }
 */
export function isTokenAuthError(value: unknown): value is TokenAuthError {
  if (value instanceof TokenAuthError) return true;
  if (typeof value !== 'object' || value === null) return false;
  const candidate = value as { name?: unknown; code?: unknown };
  return candidate.name === NAME && typeof candidate.code === 'string';
}

export function hasCode(value: unknown, code: TokenAuthErrorCode): value is TokenAuthError {
  return isTokenAuthError(value) && value.code === code;
}

/** Why nothing renews by itself after `auth.logout()`. */
export function signedOut(): TokenAuthError {
  return new TokenAuthError(
    'LOGGED_OUT',
    'Signed out: `auth.logout()` was called (by this holder or another sharing the store), so no token is fetched by ' +
      'itself until `auth.login()`, `auth.setTokens()` or `auth.refresh()`.',
  );
}
