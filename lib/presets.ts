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
import type { Credentials } from './contract/calls.js';

/** The options a preset sets. */
export type PresetOptions = Pick<
  TokenAuthOptions,
  'loginPath' | 'tokenPath' | 'loginRequest' | 'refreshRequest' | 'credentials' | 'tokenBudget'
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
  /** The client's secret; none for a public client. Masked in errors and events. */
  clientSecret?: string;
  /** The scopes to ask for, space-separated. */
  scope?: string;
  /**
   * How the client authenticates (RFC 6749 §2.3.1): `'basic'`, an `Authorization: Basic` header, the method every
   * server must support; `'body'`, `client_id` and `client_secret` in the form.
   * @default 'basic'
   */
  clientAuthentication?: 'basic' | 'body';
}

/**
 * The OAuth2 `client_credentials` grant (RFC 6749 §4.4): a service account logs in with its client id and secret, and
 * logs in again when its token expires (such servers rarely issue refresh tokens; when one does, it is used). Since
 * each renewal is a login, it allows as many logins in the budget's window as token calls (30 an hour).
 */
export function oauth2ClientCredentials(client: OAuth2ClientOptions): PresetOptions {
  if (typeof client?.clientSecret !== 'string' || client.clientSecret === '')
    throw new TypeError("axios-token-keeper/presets: the client_credentials grant needs the client's `clientSecret`.");
  return {
    ...oauth2Client(client, () => ({ grant_type: 'client_credentials' })),
    credentials: { username: client.clientId, password: client.clientSecret },
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
  const { tokenPath, clientId, clientSecret, scope, clientAuthentication = 'basic' } = client;
  if (typeof tokenPath !== 'string' || tokenPath === '' || typeof clientId !== 'string' || clientId === '')
    throw new TypeError('axios-token-keeper/presets: an OAuth2 client needs a `tokenPath` and a `clientId`.');
  // The form's client fields, or the header, by the method chosen; a public client sends its id in the form.
  const inForm = clientAuthentication === 'body' || clientSecret === undefined;
  const form = (fields: Record<string, string>): URLSearchParams => {
    const body = new URLSearchParams(fields);
    if (scope !== undefined && fields.grant_type !== 'refresh_token') body.set('scope', scope);
    if (inForm) body.set('client_id', clientId);
    if (inForm && clientSecret !== undefined) body.set('client_secret', clientSecret);
    return body;
  };
  const headers: Record<string, string> = inForm
    ? {}
    : { Authorization: `Basic ${base64FromUtf8(`${formEncode(clientId)}:${formEncode(clientSecret ?? '')}`)}` };
  return {
    loginPath: tokenPath,
    tokenPath,
    loginRequest: (credentials) => ({ data: form(grant(credentials)), headers }),
    refreshRequest: (refreshToken) => ({
      data: form({ grant_type: 'refresh_token', ...(refreshToken === '' ? {} : { refresh_token: refreshToken }) }),
      headers,
    }),
  };
}

/** RFC 6749 §2.3.1: the client id and secret are form-encoded before they are joined for Basic. */
function formEncode(value: string): string {
  return encodeURIComponent(value).replace(/%20/g, '+');
}
