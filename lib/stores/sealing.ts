// Tokens sealed at rest: the pair's tokens go into the store sealed with AES-256-GCM (WebCrypto), under a key of
// `encryption.keys` named in the sealed text, and bound to where the store keeps them, so that a sealed pair copied to
// another key, file or entry fails to open. Or by `encryption.seal`/`unseal` of the user's. What the store's scripts
// read (the version, the fence, the expiry) stays in clear beside it. A leaf, with nothing from Node: each store says
// where WebCrypto comes from.
import { hasCode, TokenAuthError } from '../contract/errors.js';
import type { TokenPair } from '../contract/store.js';
import { isSealed, recordToJson } from './record.js';
import type { FencedPair, StoredPair } from './record.js';
import { bytesFromBase64, isBytes, KEY_ID } from './sealing-options.js';
import type { CheckedEncryption, KeyMaterial, SealingFunctions } from './sealing-options.js';

/** Where a store gets WebCrypto: `globalThis.crypto` in the browser, web-crypto.ts on Node. */
type CryptoSource = () => Crypto | Promise<Crypto>;

/** The format of the sealed text, first in it, so that a later format can tell this one apart. */
const FORMAT = 'v1';
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
    return [FORMAT, id, base64Url(iv), base64Url(new Uint8Array(sealed))].join('.');
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
export class PairSealer {
  readonly #cipher: Cipher;
  readonly #acceptClear: boolean;
  readonly #writeClear: boolean;

  /** `encryption` as `checkEncryption` gave it; `crypto`, where WebCrypto comes from. */
  constructor(encryption: CheckedEncryption, crypto: CryptoSource) {
    this.#cipher = encryption.keys ? new KeyRing(encryption.keys, crypto) : new UserSealing(encryption.functions);
    this.#acceptClear = encryption.acceptClear;
    this.#writeClear = encryption.writeClear;
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

/**
 * The records of one place (a Redis key, a token file, a storage entry) as a store reads and writes them: the pair
 * sealed with the store's `encryption` (or in clear without it), and the last pair opened kept, so that reading the
 * same record again (a lock's try, a notification, the re-read under the lock) does not decrypt it again.
 */
export class SealedRecords<Pair extends Partial<TokenPair>> {
  readonly #sealer: PairSealer | undefined;
  /** The last record opened or written: its fence, its sealed text, and the pair. */
  #last: { fence: number; sealed: string; pair: Promise<Pair> } | undefined;

  /**
   * @param sealer The store's sealing; none without `encryption`.
   * @param context Where the records are kept: the additional data every sealed pair is bound to.
   * @param where The place, as a message names it ("The Redis key …").
   * @param check What a pair opened must be.
   */
  constructor(
    sealer: PairSealer | undefined,
    readonly context: string,
    private readonly where: string,
    private readonly check: (value: unknown) => value is Pair,
  ) {
    this.#sealer = sealer;
  }

  /** The sealing of these records, which the stores of named accounts share; none without `encryption`. */
  get sealer(): PairSealer | undefined {
    return this.#sealer;
  }

  /** The records of another place (a named account's), with the same sealing. */
  at(context: string, where: string): SealedRecords<Pair> {
    return new SealedRecords<Pair>(this.#sealer, context, where, this.check);
  }

  /** The record of a write, as text: the pair sealed (or in clear without `encryption`). */
  async toJson(fence: number, pair: Pair | null): Promise<string> {
    if (!this.#sealer || pair === null) return recordToJson(fence, pair);
    const stored = await this.#sealer.seal(pair, this.context);
    // What this holder wrote, it can read back without decrypting.
    if (isSealed(stored)) this.#last = { fence, sealed: stored.sealed, pair: Promise.resolve({ ...pair }) };
    return recordToJson(fence, stored);
  }

  /** The pair of a record read, opened; see {@link PairSealer.open} for what it throws. */
  async open(record: FencedPair<StoredPair<Partial<TokenPair>>>): Promise<Pair | null> {
    const { fence, pair } = record;
    if (pair === null) return null;
    if (!this.#sealer) {
      if (!isSealed(pair)) {
        if (this.check(pair)) return pair;
        throw new Error(`${this.where} holds a pair this store cannot read; point the store elsewhere or delete it.`);
      }
      throw keyMissing(this.where, keyIdOf(pair.sealed), [], true);
    }
    if (!isSealed(pair)) return this.#sealer.open(pair, this.context, this.where, this.check);
    const last = this.#last;
    if (last?.fence === fence && last.sealed === pair.sealed) return { ...(await last.pair) };
    const opening = this.#sealer.open(pair, this.context, this.where, this.check);
    const entry = { fence, sealed: pair.sealed, pair: opening };
    this.#last = entry;
    // A record that does not open is not kept: the next read says why again.
    opening.catch(() => {
      if (this.#last === entry) this.#last = undefined;
    });
    return { ...(await opening) };
  }
}

/** The additional data of a seal: the purpose, then the place, so that a pair opens only where it was sealed. */
function additionalData(context: string) {
  return new TextEncoder().encode(`${PURPOSE}${context}`);
}

/** The key id a sealed text of ours names, if it names one. */
function keyIdOf(sealed: string): string | undefined {
  const [format, id] = sealed.split('.');
  return format === FORMAT && id !== undefined && KEY_ID.test(id) ? id : undefined;
}

/**
 * Why requests fail at once: the record names a key this holder lacks (or this store has no `encryption` at all). Names
 * key ids, never a secret.
 */
function keyMissing(
  where: string,
  id: string | undefined,
  held: readonly string[],
  noEncryption = false,
): TokenAuthError {
  const sealedWith = id === undefined ? 'a sealed pair' : `a pair sealed with key "${id}"`;
  const fix = noEncryption
    ? `this store has no \`encryption\`: give it the \`encryption.keys\` of the holders that wrote it${id === undefined ? '' : `, key "${id}" among them`}`
    : `\`encryption.keys\` lacks ${id === undefined ? 'its key' : `key "${id}"`} here (it has ${held.map((each) => `"${each}"`).join(', ')}): add it`;
  return new TokenAuthError(
    'STORE_KEY_MISSING',
    `${where} holds ${sealedWith}, and ${fix}. Until then requests fail and nothing logs in: a pair sealed here could ` +
      "not be opened by the holders that lack this one's key.",
  );
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

/** Base64url without padding, without Buffer, so that the browser store takes it too. */
function base64Url(bytes: Uint8Array): string {
  let binary = '';
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}
