// The sealing of the stores that run where Node runs (file, Redis): their `encryption` checked (what `sealing()`
// checked, or the option as it is, checked here), and WebCrypto from support/web-crypto.ts. The browser store makes its
// own, with `globalThis.crypto` alone.
import { PairSealer } from './cipher.js';
import { checkedBySealing } from './brand.js';
import { checkEncryption, refuseCryptoKeys } from './options.js';
import { webCrypto } from '../../support/web-crypto.js';

/**
 * The sealing of `store`'s `encryption`, checked (a TypeError naming `store` and what to fix, for the option as it is,
 * or for a CryptoKey in what `sealing()` checked, which only the browser store takes); none without it.
 */
export function sealerOf(store: string, encryption: unknown): PairSealer | undefined {
  if (encryption === undefined) return undefined;
  const checked = checkedBySealing(encryption) ?? checkEncryption(store, encryption, false);
  refuseCryptoKeys(store, checked);
  return new PairSealer(checked, webCrypto);
}
