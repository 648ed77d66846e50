// What every call to oidc-provider's endpoints shares: the client's authentication, and the token endpoint's answer.

/** A client's id and secret, sent as `Authorization: Basic` (client_secret_basic). */
export interface ClientAuth {
  clientId: string;
  clientSecret: string;
}

/** The `Authorization: Basic` value of a client, each half form-encoded first (RFC 6749 §2.3.1). */
export function basic({ clientId, clientSecret }: ClientAuth): string {
  const encode = (value: string) => encodeURIComponent(value).replace(/%20/g, '+');
  return `Basic ${Buffer.from(`${encode(clientId)}:${encode(clientSecret)}`).toString('base64')}`;
}

/** The provider's token answer. */
export interface TokenAnswer {
  access_token: string;
  /** `Bearer`, or `DPoP` for a token bound to the key of the call's proof. */
  token_type: string;
  refresh_token?: string;
  expires_in: number;
  scope?: string;
}
