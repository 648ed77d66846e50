/**
 * {@link sealing}: a store's `encryption` checked once, before any store exists, for every store to take. The browser
 * store takes nothing else, so that an app without `encryption` loads none of these checks; the Node stores take it
 * too, or `encryption` as it is.
 *
 * @module axios-token-keeper/sealing
 */
import { CHECKED } from './brand.js';
import { checkEncryption } from './options.js';
import type { CheckedEncryption, SealingCryptoKey, SealingSecret, StoreEncryption } from './options.js';

/** What `sealing()` takes: keys, or functions of your own, and the switch from clear. */
export type { SealingCryptoKey, SealingFunctions, SealingSecret, SealingSwitch, StoreEncryption } from './options.js';

/**
 * A store's `encryption` as {@link sealing} checked it: made by `sealing()` alone, and taken by `BrowserTokenStore`,
 * `FileTokenStore` and `RedisTokenStore` as their `encryption`. It keeps the keys in a private field: no
 * `util.inspect()`, `console.log()` or `JSON.stringify()` of it shows them. A store of another copy of the package
 * (two versions in one app) takes it too.
 */
class Sealing {
  readonly #checked: CheckedEncryption;

  /** @internal `sealing()` makes it: see there. */
  constructor(encryption: unknown) {
    this.#checked = checkEncryption('sealing()', encryption, true);
    // Not enumerable, and a function: neither `inspect()` nor a spread of the object reaches the keys through it.
    Object.defineProperty(this, CHECKED, { value: () => this.#checked });
  }
}
export type { Sealing };

/**
 * Checks `encryption` now and gives it back checked, for a store's `encryption` option: `keys` (the first seals, every
 * one opens; each `{ id, secret }` with 32 random bytes, or for the browser store `{ id, key }` with a non-extractable
 * AES-GCM CryptoKey of 256 bits), or `seal` and `unseal` of your own (a KMS), and `acceptClear`/`writeClear` for a
 * switch from clear. See docs/stores.md, "Tokens sealed at rest". What is a store's own (the browser store's
 * `storage` and WebCrypto, a Node store given a CryptoKey) is checked when the store is made.
 *
 * @throws TypeError naming `sealing()`, the field at fault (`encryption.keys[0].secret`, `encryption.writeClear`, …) and
 * what to pass: an empty list, a secret that is not 32 bytes, an id that is empty, malformed or listed twice, a
 * CryptoKey that cannot seal, both `keys` and `seal`/`unseal`, or neither. No message holds a secret.
 *
 * @example
 * import { BrowserTokenStore } from 'axios-token-keeper/browser-store';
 * import { sealing } from 'axios-token-keeper/sealing';
 * // `key`: a non-extractable AES-GCM CryptoKey kept in IndexedDB (see SealingCryptoKey)
 * const encryption = sealing({ keys: [{ id: 'tab-key-1', key }] });
 * const store = new BrowserTokenStore({ key: 'orders-api', encryption });
 */
export function sealing(encryption: StoreEncryption<SealingSecret | SealingCryptoKey>): Sealing {
  return new Sealing(encryption);
}
