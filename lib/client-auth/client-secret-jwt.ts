// client_secret_jwt (RFC 7523 §2.2, OpenID Connect Core §9): an assertion signed HS256 with the client's secret, which
// itself never leaves the process; for the providers that offer it rather than private_key_jwt.
import type { ClientAuthMethod } from '../contract/client-auth.js';
import { webCrypto } from '../support/web-crypto.js';
import { assertionLayer, checkedAudience } from './assertion.js';
import type { AssertionKey } from './assertion.js';

/** Options of {@link clientSecretJwt}. */
export interface ClientSecretJwtOptions {
  /** The assertion's `aud`. @default the token endpoint's URL; some providers want their issuer */
  audience?: string;
}

/**
 * `client_secret_jwt`: each login, token and revocation call, and each retry of one, carries a fresh assertion signed
 * HS256 with the preset's `clientSecret` (claims as {@link privateKeyJwt}'s). Give it to an OAuth2 preset's
 * `clientAuthentication`, beside `clientSecret`.
 */
export function clientSecretJwt(options: ClientSecretJwtOptions = {}): ClientAuthMethod {
  const audience = checkedAudience('clientSecretJwt', (options as ClientSecretJwtOptions | null)?.audience);
  return {
    method: 'client_secret_jwt',
    setUp({ clientId, clientSecret, tokenURL }) {
      if (typeof clientSecret !== 'string' || clientSecret === '')
        throw new TypeError(
          "clientSecretJwt: the assertion is signed with the client's secret: give the preset `clientSecret`.",
        );
      let imported: Promise<AssertionKey> | undefined;
      const key = (): Promise<AssertionKey> =>
        (imported ??= webCrypto().then(async ({ subtle }) => {
          const hmac = { name: 'HMAC', hash: 'SHA-256' };
          const secret = await subtle.importKey('raw', new TextEncoder().encode(clientSecret), hmac, false, ['sign']);
          return { alg: 'HS256', sign: (input: Uint8Array<ArrayBuffer>) => subtle.sign('HMAC', secret, input) };
        }));
      return { layer: assertionLayer(key, { clientId, audience: audience ?? tokenURL }), secrets: [clientSecret] };
    },
  };
}
