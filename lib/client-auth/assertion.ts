// A client assertion (RFC 7523 §3, RFC 7521 §4.2): a JWT the client signs for one attempt of one call, put in the call's
// form as `client_assertion`. What private_key_jwt and client_secret_jwt share: the claims, the form, the signing by
// WebCrypto; each method brings its key.
import type { AxiosAdapter, InternalAxiosRequestConfig } from 'axios';
import { base64UrlFromBytes } from '../support/base64.js';
import { webCrypto } from '../support/web-crypto.js';
import { callOf } from '../token-calls/client.js';

export const ASSERTION_TYPE = 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer';

/** How long an assertion is good for: under a minute, as RFC 7523 §3 asks of a short-lived one. */
export const ASSERTION_LIFETIME_SEC = 55;

/** A key ready to sign: its JWS `alg` and `kid`, and the signing itself. */
export interface AssertionKey {
  readonly alg: string;
  readonly kid?: string | undefined;
  /** More members of the header (a certificate's thumbprint). */
  readonly header?: Readonly<Record<string, string>>;
  sign(input: Uint8Array<ArrayBuffer>): Promise<ArrayBuffer>;
}

/** What an assertion says: who the client is, and whom it is for. */
export interface AssertionClaims {
  readonly clientId: string;
  readonly audience: string;
}

/**
 * The layer that puts a fresh assertion, signed by `key()`, in the form of each attempt of a call. The time is the
 * wall clock's, not the plugin's `clock`: the server judges `iat` and `exp` by its own. The assertion leaves the config
 * once the attempt is over, and the call masks it in whatever error it fails with.
 */
export function assertionLayer(
  key: () => Promise<AssertionKey>,
  { clientId, audience }: AssertionClaims,
): (next: AxiosAdapter) => AxiosAdapter {
  return (next) => async (config) => {
    const signer = await key();
    const iat = Math.floor(Date.now() / 1000);
    const claims = {
      iss: clientId,
      sub: clientId,
      aud: audience,
      jti: (await webCrypto()).randomUUID(),
      iat,
      exp: iat + ASSERTION_LIFETIME_SEC,
    };
    const header = {
      ...signer.header,
      alg: signer.alg,
      typ: 'JWT',
      ...(signer.kid !== undefined && { kid: signer.kid }),
    };
    const input = `${segment(header)}.${segment(claims)}`;
    const assertion = `${input}.${base64UrlFromBytes(new Uint8Array(await signer.sign(new TextEncoder().encode(input))))}`;
    callOf(config)?.secret(assertion);
    const data: unknown = config.data;
    config.data = withAssertion(config, data, assertion);
    try {
      return await next(config);
    } finally {
      config.data = data;
    }
  };
}

/** The attempt's form, as axios serialised it, with the assertion in it (in place of the last attempt's). */
function withAssertion(config: InternalAxiosRequestConfig, data: unknown, assertion: string): string {
  if (data !== undefined && data !== null && typeof data !== 'string')
    throw new TypeError(
      'A client assertion goes in a form body (application/x-www-form-urlencoded), and this call sends another kind: ' +
        'send the call a URLSearchParams, as the OAuth2 presets do.',
    );
  const form = new URLSearchParams(data ?? '');
  form.set('client_assertion_type', ASSERTION_TYPE);
  form.set('client_assertion', assertion);
  config.headers.set('Content-Type', 'application/x-www-form-urlencoded');
  return form.toString();
}

function segment(value: object): string {
  return base64UrlFromBytes(new TextEncoder().encode(JSON.stringify(value)));
}

/** `audience` as given to a method: a non-empty string, or undefined for the token endpoint's URL. */
export function checkedAudience(method: string, audience: unknown): string | undefined {
  if (audience === undefined) return undefined;
  if (typeof audience !== 'string' || audience === '')
    throw new TypeError(
      `${method}: \`audience\` must be the URL the server expects in \`aud\` (its issuer, say), or left out for the token endpoint's URL.`,
    );
  return audience;
}
