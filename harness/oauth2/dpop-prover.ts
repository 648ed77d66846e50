// The sign-in's DPoP made with the plugin's own parts (lib/dpop), so that the harness's proofs are the plugin's.
import { DpopProofs } from '../../lib/dpop/proof.js';
import type { DpopKey } from '../../lib/dpop/key.js';
import type { SignInDpop } from './sign-in.js';

/**
 * Proofs by `key` for `signIn`'s code exchange, made by `proofs` (a new `DpopProofs` on the real clock by default):
 * the nonce the provider gives is learnt before the proof that carries it. The code is bound to `jkt` (`dpop_jkt`),
 * the key's own thumbprint by default; null sends none.
 */
export function signInDpop(key: DpopKey, options: { proofs?: DpopProofs; jkt?: string | null } = {}): SignInDpop {
  const proofs = options.proofs ?? new DpopProofs(Date.now);
  return {
    jkt: options.jkt === null ? undefined : (options.jkt ?? key.thumbprint),
    proof: async ({ method, url, nonce }) => {
      if (nonce !== undefined) proofs.learn('token', url, nonce);
      return proofs.proof(key, { server: 'token', method, url });
    },
  };
}
