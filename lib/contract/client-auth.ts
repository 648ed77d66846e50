// How an OAuth2 client proves who it is on its login, token and revocation calls, beyond a secret in a header or the
// form: the methods of axios-token-keeper/client-auth (one file each, under lib/client-auth/), which the OAuth2 presets
// take as `clientAuthentication`. The core meets them through this interface alone: a layer over the token calls.
import type { AxiosAdapter } from 'axios';

/** The methods, by their names in RFC 8414's `token_endpoint_auth_methods_supported`. */
export type ClientAuthMethodName =
  'private_key_jwt' | 'client_secret_jwt' | 'tls_client_auth' | 'self_signed_tls_client_auth';

/** What a method is set up for, once, at attach. */
export interface ClientOfMethod {
  /** The client's id: an assertion's `iss` and `sub`. */
  readonly clientId: string;
  /** The client's secret, for `client_secret_jwt`. */
  readonly clientSecret?: string | undefined;
  /** The token endpoint's URL, the default audience of an assertion. */
  readonly tokenURL: string;
  /** The app instance's own `httpsAgent`, whose client certificate mTLS takes when it is given none. */
  readonly httpsAgent: unknown;
}

/** A method set up for one client: what it lays over each of its calls, and what of it is secret. */
export interface ClientAuthLayer {
  /**
   * Laid over the adapter of the login, token and logout calls: each attempt, retries included, goes through it, so
   * that what it adds (an assertion with a fresh `jti`) is made for that attempt alone.
   */
  readonly layer: (next: AxiosAdapter) => AxiosAdapter;
  /** What no error, event or span may show: a key's private members, a secret. */
  readonly secrets: readonly string[];
}

/**
 * A client authentication method, as `privateKeyJwt()`, `clientSecretJwt()` and `tlsClientAuth()` of
 * `axios-token-keeper/client-auth` make it; give it to the OAuth2 presets' `clientAuthentication`.
 */
export interface ClientAuthMethod {
  /** Its name, as the provider's registration of the client gives it (`token_endpoint_auth_method`). */
  readonly method: ClientAuthMethodName;
  /** Sets the method up for `client`; throws a TypeError naming the fix for what cannot work here. */
  setUp(client: ClientOfMethod): ClientAuthLayer;
}

/** The `clientAuthentication` option: a method, and the client it proves. The OAuth2 presets set it. */
export interface ClientAuthentication {
  /** The method, made by `axios-token-keeper/client-auth`. */
  readonly method: ClientAuthMethod;
  /** The client's id. */
  readonly clientId: string;
  /** The client's secret, for `clientSecretJwt()`; masked in errors and events. */
  readonly clientSecret?: string | undefined;
}
