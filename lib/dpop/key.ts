// An account's DPoP key (RFC 9449): a key pair made by the platform's WebCrypto, whose private half signs the proofs
// and is not extractable unless a store must carry it sealed, whose public half is the JWK every proof carries, and
// that JWK's thumbprint (RFC 7638), which a bound token's `cnf.jkt` names.
import { base64UrlFromBytes } from '../support/base64.js';
import { webCrypto } from '../support/web-crypto.js';
import type { DpopAlgorithm, DpopKey, DpopPublicJwk } from '../contract/dpop.js';

export type { DpopAlgorithm, DpopKey, DpopPublicJwk };

/** WebCrypto's name of each algorithm's key, and of its signature. */
export const WEB_CRYPTO: Record<DpopAlgorithm, { key: EcKeyGenParams | Algorithm; sign: EcdsaParams | Algorithm }> = {
  ES256: { key: { name: 'ECDSA', namedCurve: 'P-256' }, sign: { name: 'ECDSA', hash: 'SHA-256' } },
  EdDSA: { key: { name: 'Ed25519' }, sign: { name: 'Ed25519' } },
};

/**
 * Makes a DPoP key. The private key is not extractable unless `extractable` (a store that keeps it sealed exports it
 * into the sealed record). Rejects, naming `dpop.algorithm` and the fix, where the runtime lacks the algorithm.
 */
export async function createDpopKey(algorithm: DpopAlgorithm = 'ES256', extractable = false): Promise<DpopKey> {
  const crypto = await webCrypto();
  let pair: CryptoKeyPair;
  try {
    pair = (await crypto.subtle.generateKey(WEB_CRYPTO[algorithm].key, extractable, [
      'sign',
      'verify',
    ])) as CryptoKeyPair;
  } catch (error) {
    throw new TypeError(
      `This runtime cannot make a DPoP key of \`dpop.algorithm\` ${algorithm} with WebCrypto` +
        (algorithm === 'EdDSA' ? ": use `dpop: { algorithm: 'ES256' }`, which every runtime has." : '.'),
      { cause: error },
    );
  }
  return dpopKeyOf(algorithm, pair.privateKey, await crypto.subtle.exportKey('jwk', pair.publicKey));
}

/** The DPoP key of a private `CryptoKey` and its public JWK, which keeps the required members alone. */
export async function dpopKeyOf(algorithm: DpopAlgorithm, privateKey: CryptoKey, jwk: JsonWebKey): Promise<DpopKey> {
  const publicJwk = publicJwkOf(algorithm, jwk);
  return { algorithm, privateKey, publicJwk, thumbprint: await thumbprintOf(publicJwk) };
}

function publicJwkOf(algorithm: DpopAlgorithm, jwk: JsonWebKey): DpopPublicJwk {
  const { x, y } = jwk;
  if (algorithm === 'ES256' && jwk.kty === 'EC' && jwk.crv === 'P-256' && x && y)
    return { kty: 'EC', crv: 'P-256', x, y };
  if (algorithm === 'EdDSA' && jwk.kty === 'OKP' && jwk.crv === 'Ed25519' && x)
    return { kty: 'OKP', crv: 'Ed25519', x };
  throw new TypeError(`A DPoP key of ${algorithm} needs the public JWK of that algorithm's curve.`);
}

/**
 * The JWK thumbprint of RFC 7638: the SHA-256 of the required members, in lexicographic order, with no whitespace
 * (a public JWK's members are base64url strings and names, which JSON.stringify writes as they are).
 */
export async function thumbprintOf(jwk: DpopPublicJwk): Promise<string> {
  const canonical =
    jwk.kty === 'EC'
      ? JSON.stringify({ crv: jwk.crv, kty: jwk.kty, x: jwk.x, y: jwk.y })
      : JSON.stringify({ crv: jwk.crv, kty: jwk.kty, x: jwk.x });
  return sha256Base64Url(canonical);
}

/** The base64url of the SHA-256 of `text`'s UTF-8: a thumbprint, or a proof's `ath` of an access token. */
export async function sha256Base64Url(text: string): Promise<string> {
  const crypto = await webCrypto();
  return base64UrlFromBytes(new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(text))));
}
