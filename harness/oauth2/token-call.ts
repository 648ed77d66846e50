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
}
