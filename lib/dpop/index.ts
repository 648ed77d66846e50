/**
 * DPoP (RFC 9449) outside the plugin, for tokens an app obtains itself and hands over with
 * `auth.setTokens({ ..., dpopKey })` (an authorization-code exchange of its own): a key ({@link createDpopKey}), and
 * a proof for one request ({@link dpopProof}). The plugin's own DPoP is the `dpop` option.
 *
 * @module axios-token-keeper/dpop
 */
import type { DpopKey } from '../contract/dpop.js';
import { DpopProofs } from './proof.js';

export type { DpopAlgorithm, DpopEcJwk, DpopKey, DpopOkpJwk, DpopOptions, DpopPublicJwk } from '../contract/dpop.js';
export { createDpopKey } from './key.js';

/** What a proof is for: the request, the access token it carries (if any), and the server's nonce (if it gave one). */
export interface DpopProofTarget {
  /** The request's method. */
  method: string;
  /** The request's URL; the proof names it without its query and fragment. */
  url: string;
  /** The access token the request carries, whose hash (`ath`) the proof then holds. */
  accessToken?: string;
  /** The latest `DPoP-Nonce` the server gave. */
  nonce?: string;
}

/**
 * A DPoP proof (RFC 9449) by `key` for one request: the value of its `DPoP` header, with a fresh `jti` and the time.
 *
 * @example
 * const key = await createDpopKey();
 * const answer = await axios.post(tokenUrl, form, {
 *   headers: { DPoP: await dpopProof(key, { method: 'POST', url: tokenUrl }) },
 * });
 * auth.setTokens({ access: answer.data.access_token, refresh: answer.data.refresh_token, dpopKey: key });
 */
export function dpopProof(key: DpopKey, { method, url, accessToken, nonce }: DpopProofTarget): Promise<string> {
  const proofs = new DpopProofs(Date.now);
  // One proof, for one server: the nonce given is that server's.
  if (nonce !== undefined) proofs.learn('api', url, nonce);
  return proofs.proof(key, { server: 'api', method, url, ...(accessToken !== undefined && { accessToken }) });
}
