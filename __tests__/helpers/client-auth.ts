// What the interop tests of client authentication beyond a secret share (interop-oauth2-client-auth, -mtls and
// -revocation): the clients as oidc-provider registers them, a key in the forms a user hands it over in, and the
// checks of what the provider recorded of each call's client authentication.
import type { KeyObject } from 'node:crypto';
import type {
  ClientAuthMethod,
  OidcClientMetadata,
  OidcProvider,
  PublicJwk,
  ReceivedAssertion,
} from '../../harness/oauth2/oidc.js';

/** The public half of a key as a client registers it in its `jwks`: its public members alone, with `kid` and `alg`. */
export function publicJwk(key: KeyObject, kid: string, alg: string): PublicJwk {
  const { kty, n, e, crv, x, y } = key.export({ format: 'jwk' });
  return { kty, n, e, crv, x, y, kid, alg, use: 'sig' };
}

/** A private key as PKCS#8 PEM, the form a key file or a secret store hands it over in. */
export function pemOf(key: KeyObject): string {
  return key.export({ type: 'pkcs8', format: 'pem' }) as string;
}

/** A client registered for client_credentials only, authenticating as `auth` says. */
export function serviceClient(client_id: string, auth: Partial<OidcClientMetadata>): OidcClientMetadata {
  return { client_id, grant_types: ['client_credentials'], response_types: [], redirect_uris: [], ...auth };
}

/**
 * A client_credentials call of `clientId` as the provider records it (with `recordClientAuth`), its client presented
 * by `clientAuthMethod`: an assertion with some `jti` for the JWT methods, no certificate (a test of mTLS sets it).
 */
export function clientCredentialsCall(
  clientId: string,
  clientAuthMethod: ClientAuthMethod,
  status = 200,
  error: string | null = null,
) {
  return {
    grantType: 'client_credentials',
    refreshToken: null,
    clientId,
    status,
    error,
    clientAuthMethod,
    assertionJti: clientAuthMethod.endsWith('_jwt') ? (expect.any(String) as string) : null,
    certificate: null as string | null,
  };
}

/** Fails unless every call carried an assertion, and no two the same `jti`. */
export function expectEachJtiOnce(calls: Array<{ assertionJti?: string | null }>): void {
  const jtis = calls.map((call) => call.assertionJti);
  expect(jtis).toEqual(Array(calls.length).fill(expect.any(String)));
  expect(new Set(jtis).size).toBe(calls.length);
}

/** The assertions `provider` received with these calls, in their order. */
export async function assertionsOf(
  provider: OidcProvider,
  calls: Array<{ assertionJti?: string | null }>,
): Promise<ReceivedAssertion[]> {
  const received = await provider.assertions();
  return calls.map((call) => received.find((assertion) => assertion.claims?.jti === call.assertionJti)!);
}

/**
 * RFC 7523 §3 and issue 44's list: `iss` = `sub` = the client, `aud` the token endpoint's URL, a `jti`, an `exp` under
 * a minute after `iat`; signed with `alg`, naming `kid` when given.
 */
export function expectAssertionOf(
  assertion: ReceivedAssertion,
  { clientId, tokenURL }: { clientId: string; tokenURL: string },
  header: { alg: string; kid?: string },
): void {
  expect(assertion.header).toMatchObject(header);
  expect(assertion.claims).toMatchObject({
    iss: clientId,
    sub: clientId,
    aud: tokenURL,
    jti: expect.any(String) as string,
  });
  const { iat, exp } = assertion.claims!;
  expect(exp! - iat!).toBeGreaterThan(0);
  expect(exp! - iat!).toBeLessThanOrEqual(60);
}
