// The sealing of the stores that run where Node runs (file, Redis): their `encryption` checked, and WebCrypto from
// support/web-crypto.ts. The browser store makes its own, with `globalThis.crypto` alone.
import { PairSealer } from './cipher.js';
import { checkEncryption } from './options.js';
import { webCrypto } from '../../support/web-crypto.js';

/** The sealing of `store`'s `encryption`, checked (a TypeError naming what to fix); none without it. */
export function sealerOf(store: string, encryption: unknown): PairSealer | undefined {
  return encryption === undefined ? undefined : new PairSealer(checkEncryption(store, encryption, false), webCrypto);
}
