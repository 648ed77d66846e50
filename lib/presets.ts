/**
 * Options for token services shaped other than HTTP Basic, to spread into `attachTokenAuth`'s options: one line
 * instead of a `loginRequest`, a `refreshRequest` and the paths. Each returns plain options; anything after the
 * spread overrides them.
 *
 * @example
 * import { simpleJwt } from 'axios-token-keeper/presets';
 * attachTokenAuth(api, { ...simpleJwt(), credentials: { username, password } });
 *
 * @module axios-token-keeper/presets
 */
import { base64FromUtf8 } from './support/base64.js';
import { DEFAULTS } from './options/defaults.js';
import type { TokenAuthOptions } from './contract/options.js';
import type { Credentials, LogoutRequest } from './contract/calls.js';
import type { ClientAuthMethod } from './contract/client-auth.js';

/** The options a preset sets. */
export type PresetOptions = Pick<
  TokenAuthOptions,
  | 'loginPath'
  | 'tokenPath'
  | 'loginRequest'
  | 'refreshRequest'
  | 'credentials'
  | 'tokenBudget'
  | 'clientAuthentication'
  | 'logoutRequest'
>;

/** Paths of {@link simpleJwt}. */
export interface SimpleJwtOptions {
  /**
   * The login: `POST` with JSON `{ username, password }`, answered `{ access, refresh }`.
   * @default '/api/token/'
   */
  loginPath?: string;
  /**
   * The token call: `POST` with JSON `{ refresh }`, answered `{ access }` (and `refresh` when it rotates).
   * @default '/api/token/refresh/'
   */
  refreshPath?: string;
}

/**
 * Django REST framework SimpleJWT, and the many Express and Nest backends shaped like it: a JSON login
 * `{ username, password }` and a JSON token call `{ refresh }`. Pass `credentials` beside it.
 */
export function simpleJwt(options: SimpleJwtOptions = {}): PresetOptions {
  return {
    loginPath: options.loginPath ?? '/api/token/',
    tokenPath: options.refreshPath ?? '/api/token/refresh/',
    loginRequest: ({ username, password }) => ({ data: { username, password } }),
    // No refresh token held (it lives in a cookie): no field, rather than a blank one a server would refuse.
    refreshRequest: (refresh) => ({ data: refresh === '' ? {} : { refresh } }),
  };
}

/** An OAuth2 client: where its token endpoint is and how it proves who it is. */
export interface OAuth2ClientOptions {
  /** The token endpoint, relative to `authBaseURL` (or the instance's `baseURL`), such as `'/oauth/token'`. */
  tokenPath: string;
  /** The client's id. */
  clientId: string;
  /**
   * The client's secret; none for a public client, or one that proves itself by its key or certificate. Masked in
   * errors and events.
   */
  clientSecret?: string;
  /** The scopes to ask for, space-separated. */
  scope?: string;
  /**
   * More fields of the login's form (the grant): Auth0's `audience` (the API's identifier), RFC 8707's `resource`.
   */
  grantParams?: Record<string, string>;
  /**
   * How the client authenticates: `'basic'`, an `Authorization: Basic` header, the method every server must support
   * (RFC 6749 §2.3.1); `'body'`, `client_id` and `client_secret` in the form; or a method of
   * `axios-token-keeper/client-auth`: `privateKeyJwt({ key })`, `clientSecretJwt()` (with `clientSecret`),
   * `tlsClientAuth()`. See docs/client-authentication.md.
   * @default 'basic'
   */
  clientAuthentication?: 'basic' | 'body' | ClientAuthMethod;
  /**
   * The revocation endpoint (RFC 7009), relative to `authBaseURL`, such as `'/oauth2/revoke'`: `auth.logout()` revokes
   * the refresh token, then the access token, each in one call with the client's authentication. A refusal is reported
   * (`auth.logout()` rejects, after the tokens are dropped here).
   */
  revocationPath?: string;
  /**
   * With `revocationPath`: revoke the access token too, not only the refresh token (a server that revokes only refresh
   * tokens answers `unsupported_token_type`: set false for it).
   * @default true
   */
  revokeAccessToken?: boolean;
}

/**
 * The OAuth2 `client_credentials` grant (RFC 6749 §4.4): a service account logs in with its client id and secret, and
 * logs in again when its token expires (such servers rarely issue refresh tokens; when one does, it is used). Since
 * each renewal is a login, it allows as many logins in the budget's window as token calls (30 an hour).
 */
export function oauth2ClientCredentials(client: OAuth2ClientOptions): PresetOptions {
  const method = typeof client?.clientAuthentication === 'object' ? client.clientAuthentication : undefined;
  const withSecret = method === undefined || method.method === 'client_secret_jwt';
  if (withSecret && (typeof client?.clientSecret !== 'string' || client.clientSecret === ''))
    throw new TypeError(
      "axios-token-keeper/presets: the client_credentials grant needs the client's `clientSecret`, or a `clientAuthentication` of its key or certificate (`privateKeyJwt()`, `tlsClientAuth()`).",
    );
  return {
    ...oauth2Client(client, () => ({ grant_type: 'client_credentials' })),
    // The grant sends no password: with a key or a certificate, these credentials only let the plugin log in, and the
    // login never sends them (nor masks more than this name of the method).
    credentials: {
      username: client.clientId,
      password: withSecret ? client.clientSecret! : `${method.method}:${client.clientId}`,
    },
    // Each renewal is a login here: allow logins at the rate other services are allowed token calls.
    tokenBudget: { logins: DEFAULTS.tokenBudget.refreshes },
  };
}

/**
 * The OAuth2 resource owner `password` grant (RFC 6749 §4.3): the user's username and password, which you pass as
 * `credentials`, sent with the client's own authentication; renewed through the refresh token.
 */
export function oauth2Password(client: OAuth2ClientOptions): PresetOptions {
  return oauth2Client(client, ({ username, password }) => ({ grant_type: 'password', username, password }));
}

function oauth2Client(
  client: OAuth2ClientOptions,
  grant: (credentials: Credentials) => Record<string, string>,
): PresetOptions {
  const { tokenPath, clientId, clientSecret, scope, revocationPath } = client;
  const { method, grantParams } = checked(client);
  const { clientFields, headers } = clientProof(client, method);
  const form = (fields: Record<string, string>): URLSearchParams => {
    const body = new URLSearchParams(fields);
    if (scope !== undefined && fields.grant_type !== 'refresh_token') body.set('scope', scope);
    return clientFields(body);
  };
  return {
    loginPath: tokenPath,
    tokenPath,
    loginRequest: (credentials) => ({ data: form({ ...grantParams, ...grant(credentials) }), headers }),
    refreshRequest: (refreshToken) => ({
      data: form({ grant_type: 'refresh_token', ...(refreshToken === '' ? {} : { refresh_token: refreshToken }) }),
      headers,
    }),
    ...(method && { clientAuthentication: { method, clientId, clientSecret } }),
    ...(revocationPath !== undefined && {
      logoutRequest: revocations(revocationPath, client.revokeAccessToken !== false, clientFields, headers),
    }),
  };
}

/** The client's options checked: its method of authentication (undefined for 'basic' and 'body'), its grant's fields. */
function checked(client: OAuth2ClientOptions): { method?: ClientAuthMethod; grantParams: Record<string, string> } {
  const { tokenPath, clientId, clientAuthentication = 'basic', revocationPath, grantParams = {} } = client;
  const fail = (message: string): never => {
    throw new TypeError(`axios-token-keeper/presets: ${message}`);
  };
  if (typeof tokenPath !== 'string' || tokenPath === '' || typeof clientId !== 'string' || clientId === '')
    fail('an OAuth2 client needs a `tokenPath` and a `clientId`.');
  const method = typeof clientAuthentication === 'object' ? clientAuthentication : undefined;
  if (method === undefined && clientAuthentication !== 'basic' && clientAuthentication !== 'body')
    fail(
      "`clientAuthentication` must be 'basic', 'body' or a method of axios-token-keeper/client-auth (`privateKeyJwt({ key })`, `clientSecretJwt()`, `tlsClientAuth()`).",
    );
  if (revocationPath !== undefined && (typeof revocationPath !== 'string' || revocationPath === ''))
    fail("`revocationPath` must be the revocation endpoint's path, such as `/oauth2/revoke`.");
  if (
    typeof grantParams !== 'object' ||
    grantParams === null ||
    Object.values(grantParams).some((value) => typeof value !== 'string')
  )
    fail('`grantParams` must be an object of strings, such as { audience }.');
  return { ...(method && { method }), grantParams };
}

/**
 * How each call proves the client, by the method chosen: the form's client fields, or the Basic header. A public
 * client, and one that proves itself by an assertion or a certificate, sends its id in the form (and its secret, if
 * any, never).
 */
function clientProof(
  { clientId, clientSecret, clientAuthentication }: OAuth2ClientOptions,
  method: ClientAuthMethod | undefined,
): { clientFields: (body: URLSearchParams) => URLSearchParams; headers: Record<string, string> } {
  const inForm = method !== undefined || clientAuthentication === 'body' || clientSecret === undefined;
  const clientFields = (body: URLSearchParams): URLSearchParams => {
    if (inForm) body.set('client_id', clientId);
    if (inForm && method === undefined && clientSecret !== undefined) body.set('client_secret', clientSecret);
    return body;
  };
  const headers: Record<string, string> = inForm
    ? {}
    : { Authorization: `Basic ${base64FromUtf8(`${formEncode(clientId)}:${formEncode(clientSecret ?? '')}`)}` };
  return { clientFields, headers };
}

/**
 * RFC 7009 §2.1 at `path` on logout: one call per token, the refresh token first (revoking it may end the grant, and
 * its access tokens, at once), then the access token unless `revokeAccess` is false, each proving the client.
 */
function revocations(
  path: string,
  revokeAccess: boolean,
  clientFields: (body: URLSearchParams) => URLSearchParams,
  headers: Record<string, string>,
): NonNullable<PresetOptions['logoutRequest']> {
  const revoke = (token: string, hint: string): LogoutRequest => ({
    path,
    data: clientFields(new URLSearchParams({ token, token_type_hint: hint })),
    headers,
  });
  return (pair) => [
    ...(pair?.refresh ? [revoke(pair.refresh, 'refresh_token')] : []),
    ...(pair && revokeAccess ? [revoke(pair.access, 'access_token')] : []),
  ];
}

/** RFC 6749 §2.3.1: the client id and secret are form-encoded before they are joined for Basic. */
function formEncode(value: string): string {
  return encodeURIComponent(value).replace(/%20/g, '+');
}
