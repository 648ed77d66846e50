// A DPoP key as a sealed record carries it (the file and Redis stores with `encryption`): the private JWK beside the
// tokens, inside what is sealed, and never anywhere else. Loaded by the store only when a pair has a key.
import type { DpopAlgorithm, DpopKey } from '../contract/dpop.js';
import { webCrypto } from '../support/web-crypto.js';
import { dpopKeyOf, WEB_CRYPTO } from './key.js';

/** The key as a sealed record keeps it. */
export interface StoredDpopKey {
  readonly algorithm: DpopAlgorithm;
  readonly jwk: JsonWebKey;
}

/** True for what {@link exportDpopKey} gives. */
export function isStoredDpopKey(value: unknown): value is StoredDpopKey {
  const stored = value as Partial<StoredDpopKey> | null;
  return (
    typeof stored === 'object' &&
    stored !== null &&
    (stored.algorithm === 'ES256' || stored.algorithm === 'EdDSA') &&
    typeof stored.jwk === 'object' &&
    stored.jwk !== null &&
    typeof stored.jwk.d === 'string'
  );
}

/** The key's private JWK, for a record that is sealed: the key must have been made extractable. */
export async function exportDpopKey(key: DpopKey): Promise<StoredDpopKey> {
  const crypto = await webCrypto();
  return { algorithm: key.algorithm, jwk: await crypto.subtle.exportKey('jwk', key.privateKey) };
}

/** The key a sealed record carried, extractable so that the holder can write it again with the next pair. */
export async function importDpopKey({ algorithm, jwk }: StoredDpopKey): Promise<DpopKey> {
  const crypto = await webCrypto();
  const privateKey = await crypto.subtle.importKey('jwk', jwk, WEB_CRYPTO[algorithm].key, true, ['sign']);
  // dpopKeyOf keeps the public members alone (kty, crv, x, y).
  return dpopKeyOf(algorithm, privateKey, jwk);
}
