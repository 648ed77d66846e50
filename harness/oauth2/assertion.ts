// Client assertions (RFC 7523 §3) signed here with node:crypto, for the calls a test makes to oidc-provider by itself:
// the checks of the provider alone, and a refresh_token grant with a revoked token. The plugin makes its own; these are
// written out by hand (jose is ESM only, and jest runs the tests as CommonJS) so that the harness depends on no part
// of the plugin.
import { createHmac, randomUUID, sign } from 'node:crypto';
import type { KeyObject } from 'node:crypto';

/** What signs an assertion: a private key (RS256, ES256) or the client's secret (HS256). */
export type AssertionSigner =
  { alg: 'RS256' | 'ES256'; key: KeyObject; kid?: string } | { alg: 'HS256'; secret: string; kid?: string };

/** The assertion's claims; each has the value an RFC 7523 client sends unless the test says otherwise. */
export interface AssertionClaims {
  /** `iss` and `sub`. */
  clientId: string;
  /** `aud`: the token endpoint's URL, the issuer, or the endpoint the call goes to. */
  audience: string;
  /** @default a new random UUID */
  jti?: string;
  /** `iat`, in ms. @default Date.now() */
  now?: number;
  /** `exp` - `iat`, in seconds. @default 60 */
  lifetimeSec?: number;
}

/** The `client_assertion_type` of a JWT assertion (RFC 7523 §2.2). */
export const JWT_BEARER = 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer';

/** A compact JWS of the assertion's claims, signed by `signer`. */
export function clientAssertion(signer: AssertionSigner, claims: AssertionClaims): string {
  const iat = Math.floor((claims.now ?? Date.now()) / 1000);
  const header = { alg: signer.alg, typ: 'JWT', ...(signer.kid !== undefined && { kid: signer.kid }) };
  const payload = {
    iss: claims.clientId,
    sub: claims.clientId,
    aud: claims.audience,
    jti: claims.jti ?? randomUUID(),
    iat,
    exp: iat + (claims.lifetimeSec ?? 60),
  };
  const input = `${encode(header)}.${encode(payload)}`;
  return `${input}.${signatureOf(signer, Buffer.from(input)).toString('base64url')}`;
}

/** The form fields that carry an assertion (RFC 7523 §2.2). */
export function assertionForm(assertion: string): Record<string, string> {
  return { client_assertion_type: JWT_BEARER, client_assertion: assertion };
}

function encode(value: object): string {
  return Buffer.from(JSON.stringify(value)).toString('base64url');
}

function signatureOf(signer: AssertionSigner, input: Buffer): Buffer {
  switch (signer.alg) {
    case 'HS256':
      return createHmac('sha256', signer.secret).update(input).digest();
    case 'RS256':
      return sign('sha256', input, signer.key);
    // JWS wants ECDSA's r and s side by side (RFC 7518 §3.4), not node's default DER.
    case 'ES256':
      return sign('sha256', input, { key: signer.key, dsaEncoding: 'ieee-p1363' });
  }
}
