// The public contract of the calls to the token service: who logs in, what a call sends, what an answer yields, and
// how many calls the budget lets through.

/** The username and password of the login call: sent as HTTP Basic, or as `loginRequest` puts them. */
export interface Credentials {
  /** The part before the colon of the Basic value. A `:` in it (RFC 7617 forbids one) fails, when sent as Basic. */
  username: string;
  /** The part after the colon; it may contain `:`. Never logged, never put in an error. */
  password: string;
}

/**
 * Credentials, or a function (sync or async) asked for them only when a login is needed, with the account it is for
 * (undefined for the default account).
 *
 * @example
 * // Read at login time, so a rotated secret is picked up without a restart.
 * const credentials: CredentialsSource = async () => ({
 *   username: 'svc-orders',
 *   password: await readSecret('orders-api'),
 * });
 */
export type CredentialsSource =
  | Credentials
  | ((account: string | undefined) => Credentials | null | undefined | Promise<Credentials | null | undefined>);

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

/**
 * What a login or token call sends besides the method and URL: what `loginRequest` (when the login is not HTTP
 * Basic) and `refreshRequest` return. No `Authorization` is added to a login made this way.
 */
export interface TokenCallRequest {
  /** The body; axios sends an object as JSON, and a `URLSearchParams` as a form (OAuth2). */
  data?: unknown;
  /** Headers of the call, besides `Accept: application/json`. */
  headers?: Record<string, string>;
  /** Query parameters of the call. */
  params?: Record<string, unknown>;
  /** Send the browser's cookies with the call, and let it set them (a refresh token kept in an HttpOnly cookie). */
  withCredentials?: boolean;
}

/** What `logoutRequest` returns: where the logout call goes, under `authBaseURL`, and what it sends. */
export interface LogoutRequest extends TokenCallRequest {
  /** The path of the call (`POST`), relative to `authBaseURL`, such as `'/auth/api/v1/accounts/logout'`. */
  path: string;
}
