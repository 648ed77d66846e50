// Tokens sealed at rest: the pair's tokens go into the store sealed with AES-256-GCM (WebCrypto), under a key of
// `encryption.keys` named in the sealed text, and bound to where the store keeps them, so that a sealed pair copied to
// another key, file or entry fails to open. Or by `encryption.seal`/`unseal` of the user's. What the store's scripts
// read (the version, the fence, the expiry) stays in clear beside it: the record's format is records.ts'.
// Nothing from Node: each store says where WebCrypto comes from. The browser store loads this module only with
// `encryption` (browser/lazy-sealer.ts), so that an app without it ships no cipher.
import { hasCode, TokenAuthError } from '../../contract/errors.js';
import type { TokenPair } from '../../contract/store.js';
import { isSealed } from '../common/record.js';
import type { StoredPair } from '../common/record.js';
import { FORMAT, KEY_ID, keyMissing } from './records.js';
import type { Sealer } from './records.js';
import { base64UrlFromBytes, bytesFromBase64 } from '../../support/base64.js';
import { isBytes } from './options.js';
import type { CheckedEncryption, KeyMaterial, SealingFunctions } from './options.js';

/** The records of a place (records.ts), importable from here still, where they were first. */
export { SealedRecords } from './records.js';

/** Where a store gets WebCrypto: `globalThis.crypto` in the browser, support/web-crypto.ts on Node. */
type CryptoSource = () => Crypto | Promise<Crypto>;

/** 96 bits, fresh for every seal: what AES-GCM is made for. */
const IV_BYTES = 12;
/** What the additional data starts with, before the place: no other use of a key can produce a text that opens here. */
const PURPOSE = 'axios-token-keeper sealed pair v1\n';

/** The sealed text names a key this holder does not have. */
class KeyMissing extends Error {
  constructor(readonly keyId: string | undefined) {
    super('key missing');
  }
}

/** The sealed text does not open with the key it names: tampered, corrupt, or sealed for another place. */
class Inauthentic extends Error {}

/** How a pair's plaintext is sealed and opened: with the keys, or with the user's functions. */
interface Cipher {
  seal(plaintext: Uint8Array, context: string): Promise<string>;
  /** Throws KeyMissing or Inauthentic, or (the user's functions) the error that says why. */
  unseal(sealed: string, context: string): Promise<Uint8Array>;
  /** The ids of the keys, for a message; none for the user's functions. */
  readonly ids: readonly string[];
}

/** AES-256-GCM with the keys of `encryption.keys`: the first seals, every one opens. */
class KeyRing implements Cipher {
  readonly #material = new Map<string, Uint8Array | CryptoKey>();
  readonly #imported = new Map<string, Promise<CryptoKey>>();
  readonly #crypto: CryptoSource;
  readonly ids: readonly string[];

  constructor(keys: readonly KeyMaterial[], crypto: CryptoSource) {
    for (const { id, material } of keys) this.#material.set(id, material);
    this.ids = keys.map((key) => key.id);
    this.#crypto = crypto;
  }

  async seal(plaintext: Uint8Array, context: string): Promise<string> {
    const crypto = await this.#crypto();
    const id = this.ids[0]!;
    const iv = crypto.getRandomValues(new Uint8Array(IV_BYTES));
    const key = await this.#key(id, crypto);
    const sealed = await crypto.subtle.encrypt(
      { name: 'AES-GCM', iv, additionalData: additionalData(context) },
      key,
      // A copy on an ArrayBuffer of its own, as WebCrypto's types ask.
      new Uint8Array(plaintext),
    );
    return [FORMAT, id, base64UrlFromBytes(iv), base64UrlFromBytes(new Uint8Array(sealed))].join('.');
  }

  async unseal(sealed: string, context: string): Promise<Uint8Array> {
    const [format, id, ivText, body, ...rest] = sealed.split('.');
    if (format !== FORMAT || id === undefined || !KEY_ID.test(id) || body === undefined || rest.length > 0)
      throw new Inauthentic();
    if (!this.#material.has(id)) throw new KeyMissing(id);
    const iv = bytesFromBase64(ivText!);
    const data = bytesFromBase64(body);
    if (iv?.length !== IV_BYTES || !data) throw new Inauthentic();
    const crypto = await this.#crypto();
    const key = await this.#key(id, crypto);
    try {
      const opened = await crypto.subtle.decrypt(
        { name: 'AES-GCM', iv: new Uint8Array(iv), additionalData: additionalData(context) },
        key,
        new Uint8Array(data),
      );
      return new Uint8Array(opened);
    } catch {
      throw new Inauthentic();
    }
  }

  /** The key as WebCrypto takes it: imported once (not extractable), or the CryptoKey given. */
  #key(id: string, crypto: Crypto): Promise<CryptoKey> {
    const material = this.#material.get(id)!;
    if (!isBytes(material)) return Promise.resolve(material);
    let imported = this.#imported.get(id);
    if (!imported) {
      imported = crypto.subtle.importKey('raw', new Uint8Array(material), { name: 'AES-GCM' }, false, [
        'encrypt',
        'decrypt',
      ]);
      this.#imported.set(id, imported);
      // A failed import (a runtime without AES-GCM) is tried again by the next call.
      imported.catch(() => this.#imported.delete(id));
    }
    return imported;
  }
}

/** The user's `seal` and `unseal`, their answers checked. */
class UserSealing implements Cipher {
  readonly #functions: SealingFunctions;
  readonly ids: readonly string[] = [];

  constructor(functions: SealingFunctions) {
    this.#functions = functions;
  }

  async seal(plaintext: Uint8Array, context: string): Promise<string> {
    const sealed: unknown = await this.#functions.seal(plaintext, context);
    if (typeof sealed !== 'string' || sealed === '')
      throw new TypeError('`encryption.seal` must resolve to a non-empty string: the text the store keeps.');
    return sealed;
  }

  async unseal(sealed: string, context: string): Promise<Uint8Array> {
    let opened: unknown;
    try {
      opened = await this.#functions.unseal(sealed, context);
    } catch (error) {
      if (hasCode(error, 'STORE_KEY_MISSING') || hasCode(error, 'STORE_FAILED')) throw error;
      throw new Error(`\`encryption.unseal\` failed: ${error instanceof Error ? error.message : String(error)}`, {
        cause: error,
      });
    }
    if (!isBytes(opened)) throw new Inauthentic();
    return opened;
  }
}

/**
 * The sealing of one `encryption` option, shared by a store and its accounts' stores: it keeps the keys (in private
 * fields: no `util.inspect()`, `console.log()` or `JSON.stringify()` of a store shows them) and seals and opens pairs.
 */
export class PairSealer implements Sealer {
  readonly #cipher: Cipher;
  readonly #acceptClear: boolean;
  readonly #writeClear: boolean;

  /** `encryption` as `checkEncryption` gave it; `crypto`, where WebCrypto comes from. */
  constructor(encryption: CheckedEncryption, crypto: CryptoSource) {
    this.#cipher = encryption.keys ? new KeyRing(encryption.keys, crypto) : new UserSealing(encryption.functions);
    this.#acceptClear = encryption.acceptClear;
    this.#writeClear = encryption.writeClear;
  }

  /** It seals what it keeps: not with `writeClear`. */
  get sealsPairs(): boolean {
    return !this.#writeClear;
  }

  /** What a store keeps of `pair` at `context`: its tokens sealed, its expiry beside them; in clear with `writeClear`. */
  async seal(pair: Partial<TokenPair>, context: string): Promise<StoredPair<Partial<TokenPair>>> {
    if (this.#writeClear) return { ...pair };
    const sealed = await this.#cipher.seal(new TextEncoder().encode(JSON.stringify(pair)), context);
    return pair.expiresAt === undefined ? { sealed } : { sealed, expiresAt: pair.expiresAt };
  }

  /**
   * The pair a store keeps at `context` (`where`, as a message names it), opened and checked by `check`. Throws a
   * `TokenAuthError`: `STORE_KEY_MISSING` for a pair sealed with a key this holder lacks; `STORE_FAILED` for one that
   * fails authentication, does not hold a pair, or is in clear without `acceptClear`.
   */
  async open<Pair extends Partial<TokenPair>>(
    stored: StoredPair<Partial<TokenPair>>,
    context: string,
    where: string,
    check: (value: unknown) => value is Pair,
  ): Promise<Pair> {
    if (!isSealed(stored)) {
      if (this.#acceptClear && check(stored)) return stored;
      throw new TokenAuthError(
        'STORE_FAILED',
        `${where} holds a pair in clear, which \`encryption\` takes only with \`acceptClear\` (a step of the switch ` +
          'to sealing): it is read as no pair, and the next renewal logs in once and overwrites it sealed.',
      );
    }
    let plaintext: Uint8Array;
    try {
      plaintext = await this.#cipher.unseal(stored.sealed, context);
    } catch (error) {
      if (error instanceof KeyMissing) throw keyMissing(where, error.keyId, this.#cipher.ids);
      if (error instanceof Inauthentic) throw inauthentic(where, this.#cipher.ids.length > 0);
      throw error;
    }
    let pair: unknown;
    try {
      pair = JSON.parse(new TextDecoder().decode(plaintext));
    } catch {
      throw inauthentic(where, this.#cipher.ids.length > 0);
    }
    if (!check(pair)) throw inauthentic(where, this.#cipher.ids.length > 0);
    return pair;
  }
}

/** The additional data of a seal: the purpose, then the place, so that a pair opens only where it was sealed. */
function additionalData(context: string) {
  return new TextEncoder().encode(`${PURPOSE}${context}`);
}

/** A sealed pair that does not open: read as no pair, so that the next renewal logs in once and overwrites it. */
function inauthentic(where: string, withKeys: boolean): TokenAuthError {
  const by = withKeys ? '`encryption.keys`' : '`encryption.unseal`';
  return new TokenAuthError(
    'STORE_FAILED',
    `${where} holds a sealed pair that failed authentication with ${by} (tampered, corrupt, or copied from another ` +
      'place): it is read as no pair, and the next renewal logs in once and overwrites it sealed.',
  );
}
