/** One call of an OAuth2 token endpoint, as the server saw it: what the tests count. */
export interface TokenCall {
  /** The `grant_type` sent (`client_credentials`, `password`, `refresh_token`, `authorization_code`). */
  grantType: string | null;
  /** The `refresh_token` sent, for the refresh_token grant. */
  refreshToken: string | null;
  /** The client the call named (in its Basic header or its form), whether or not it authenticated. */
  clientId: string | null;
  status: number;
  /** The OAuth2 error code answered (`invalid_client`, `invalid_grant`, `use_dpop_nonce`), or null. */
  error: string | null;
  /** Whether the call carried a `DPoP` proof; recorded only by a server with DPoP on (`startOidcProvider`'s `dpop`). */
  dpopProof?: boolean;
  /** The RFC 7638 thumbprint of the key in the proof's header, or null (no proof, or none readable); as `dpopProof`. */
  dpopJkt?: string | null;
  /**
   * How the call presented its client (see {@link ClientAuthMethod}), whether or not the server accepted it: its
   * status says that. Recorded only by a server asked to (`startOidcProvider`'s `recordClientAuth`), as the two below.
   */
  clientAuthMethod?: ClientAuthMethod;
  /** The `jti` of the call's client assertion (private_key_jwt, client_secret_jwt), or null: none, or unreadable. */
  assertionJti?: string | null;
  /** RFC 8705 §3.1: the base64url SHA-256 of the TLS client certificate the call came with, or null: none, or no TLS. */
  certificate?: string | null;
}

/**
 * How a call presented its client, in the order oidc-provider looks: `client_secret` in the form
 * (`client_secret_post`), an `Authorization: Basic` header (`client_secret_basic`), a `client_assertion` signed with
 * HS* (`client_secret_jwt`) or another algorithm (`private_key_jwt`), a TLS client certificate alone, issued by the
 * test's CA (`tls_client_auth`) or not (`self_signed_tls_client_auth`), or nothing (`none`).
 */
export type ClientAuthMethod =
  | 'client_secret_post'
  | 'client_secret_basic'
  | 'client_secret_jwt'
  | 'private_key_jwt'
  | 'tls_client_auth'
  | 'self_signed_tls_client_auth'
  | 'none';
