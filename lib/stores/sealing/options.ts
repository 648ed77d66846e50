// The `encryption` option of the stores that keep the pair where others can read it (Redis, a file, the browser's
// storage): its shapes, and the one check of it, which names what to fix and never shows a secret. Nothing from Node:
// `sealing()` (index.ts) runs it in the browser too. The Node stores load it with themselves; the browser store never
// does (it takes only what `sealing()` checked, known by brand.ts' mark), so that an app without `encryption` ships
// none of it.
import { shown } from '../common/options.js';
import { KEY_ID } from './records.js';
import { bytesFromBase64 } from '../../support/base64.js';

/**
 * A key of `encryption.keys`: 32 random bytes and the id that names them in every pair they seal.
 *
 * @example
 * // openssl rand -base64 32
 * { id: '2026-11', secret: process.env.TOKEN_SEALING_KEY! }
 */
export interface SealingSecret {
  /**
   * Names the key in every pair it seals, in clear, so that a holder knows which key opens it: letters, digits, `_` and
   * `-`, at most 64. Never a secret; a new key takes a new id.
   */
  id: string;
  /**
   * 32 random bytes: a Base64 (or Base64url) string, such as `openssl rand -base64 32` prints, or a `Uint8Array` (a
   * `Buffer` is one). Kept out of every error, event, `util.inspect()` and `JSON.stringify()` of the store.
   */
  secret: string | Uint8Array;
}

/**
 * Sealing by a service of yours (a KMS, an HSM) in place of `keys`: two async functions. `context` is where the pair is
 * kept (the Redis key, the token file's path, the storage entry): pass it to the service as the additional data or
 * encryption context, so that a sealed pair copied to another place fails to open.
 *
 * @example
 * encryption: {
 *   seal: async (plaintext, context) => myKms.encrypt(plaintext, { context }),
 *   unseal: async (sealed, context) => myKms.decrypt(sealed, { context }),
 * }
 */
export interface SealingFunctions {
  /** Seals `plaintext` (the pair, as UTF-8 JSON) for `context`: the text the store keeps, in place of the tokens. */
  seal(plaintext: Uint8Array, context: string): Promise<string>;
  /**
   * Opens what `seal` gave for `context`. How it says what went wrong decides what the holder does:
   * - a `TokenAuthError` with code `STORE_KEY_MISSING` (a message naming the key, never a secret): the value names a
   *   key this process cannot use. Requests fail at once with that error, and nothing logs in;
   * - a `TokenAuthError` with code `STORE_FAILED`: the value failed authentication (tampered, or sealed for another
   *   context). It is read as no pair and reported; the next renewal logs in once and overwrites it;
   * - anything else: the service failed, as a store that fails: reported, and the holder goes on with the tokens it
   *   holds in memory.
   */
  unseal(sealed: string, context: string): Promise<Uint8Array>;
}

/**
 * A key of `encryption.keys` for the browser store that no script can read: a non-extractable AES-GCM CryptoKey of 256
 * bits, which IndexedDB can keep as it is, so that the key never sits in memory a script could read.
 *
 * @example
 * const key = await crypto.subtle.generateKey({ name: 'AES-GCM', length: 256 }, false, ['encrypt', 'decrypt']);
 * // keep `key` in IndexedDB, and read it back at start
 * new BrowserTokenStore({ key: 'orders-api', encryption: sealing({ keys: [{ id: 'tab-key-1', key }] }) });
 */
export interface SealingCryptoKey {
  /** Names the key in every pair it seals, as `SealingSecret`'s id does. */
  id: string;
  /** An AES-GCM key of 256 bits, with the usages `encrypt` (for the first key) and `decrypt`. */
  key: CryptoKey;
}

/** The steps of a switch from a pair kept in clear to a sealed one. */
export interface SealingSwitch {
  /**
   * Read a pair stored in clear too, while the fleet switches to sealing. Without it, a pair in clear is read as no
   * pair and reported: the next renewal logs in once and overwrites it sealed.
   * @default false
   */
  acceptClear?: boolean;
  /**
   * With `acceptClear`: go on writing the pair in clear. The first step of a rolling switch, so that no holder seals a
   * pair while a holder without the key still runs; drop it once every holder has the key.
   * @default false
   */
  writeClear?: boolean;
}

/**
 * The `encryption` option of a store, as `sealing()` takes it (and the Node stores as it is): `keys` (the first seals,
 * every one opens), or `seal` and `unseal` of your own, and the switch from clear. `Key` is what a key may be:
 * {@link SealingSecret}, and for the browser store a {@link SealingCryptoKey} too.
 */
export type StoreEncryption<Key = SealingSecret> =
  | (SealingSwitch & {
      /** The first key seals; every key listed opens. At least one; ids differ. */
      keys: readonly Key[];
      /** Not with `keys`: your own `seal` and `unseal` stand in for them. */
      seal?: never;
      /** Not with `keys`: your own `seal` and `unseal` stand in for them. */
      unseal?: never;
    })
  | (SealingSwitch &
      SealingFunctions & {
        /** Not with `seal` and `unseal`, which stand in for the keys. */
        keys?: never;
      });

/** A key as the cipher takes it: raw bytes (copied), or a CryptoKey it uses as it is. */
export interface KeyMaterial {
  id: string;
  material: Uint8Array | CryptoKey;
}

/** `encryption` checked: what seals and opens, and the switch. Holds secrets: the sealer keeps it in private fields. */
export type CheckedEncryption = Required<SealingSwitch> &
  ({ keys: KeyMaterial[]; functions?: undefined } | { functions: SealingFunctions; keys?: undefined });

const NAMES = ['keys', 'seal', 'unseal', 'acceptClear', 'writeClear'];
const SECRET_HELP =
  'a Base64 string of 32 random bytes, such as `openssl rand -base64 32` prints, or a Uint8Array of 32 bytes';
/** Why a Node store refuses a CryptoKey: the browser store keeps one in IndexedDB; a process keeps a secret. */
const NOT_HERE = `is for the browser store: here pass \`secret\`, ${SECRET_HELP}.`;

/**
 * `encryption` checked: a TypeError naming who checks (`who`: a store, or `sealing()`), `encryption`, the field at
 * fault and what to pass, for an empty list, a secret that is not 32 bytes, an id that is empty, malformed or listed
 * twice, a CryptoKey that is not AES-GCM 256 (or any CryptoKey where `cryptoKeys` is false), both `keys` and
 * `seal`/`unseal`, or neither. No message holds a secret.
 */
export function checkEncryption(who: string, value: unknown, cryptoKeys: boolean): CheckedEncryption {
  /** Throws for `encryption` followed by `field` (`.keys[0].secret`, or '' for the option itself). */
  const fail = (field: string, what: string): never => {
    throw new TypeError(`${who}: \`encryption${field}\` ${what}`);
  };
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    fail(
      '',
      `must be an object, such as { keys: [{ id: 'k1', secret: '<32 random bytes in Base64>' }] }; got ${kindOf(value)}.`,
    );
  const given = value as Record<string, unknown>;
  const unknown = Object.keys(given).find((name) => !NAMES.includes(name));
  if (unknown !== undefined)
    fail('', `has an unknown field \`${unknown}\`; the fields are ${NAMES.map((n) => `\`${n}\``).join(', ')}.`);
  const flag = (name: 'acceptClear' | 'writeClear'): boolean => {
    const flagValue = given[name];
    if (flagValue !== undefined && typeof flagValue !== 'boolean')
      fail(`.${name}`, `must be true or false; got ${kindOf(flagValue)}.`);
    return flagValue === true;
  };
  const acceptClear = flag('acceptClear');
  const writeClear = flag('writeClear');
  if (writeClear && !acceptClear)
    fail('.writeClear', 'needs `encryption.acceptClear: true`: a holder that writes in clear must read in clear too.');
  const hasFunctions = given['seal'] !== undefined || given['unseal'] !== undefined;
  if (given['keys'] !== undefined && hasFunctions)
    fail('', 'takes `keys`, or `seal` and `unseal`, not both: pass one way of sealing.');
  if (hasFunctions) {
    const { seal, unseal } = given;
    if (typeof seal !== 'function' || typeof unseal !== 'function')
      fail('', 'needs both `seal(plaintext, context)` and `unseal(sealed, context)` as async functions.');
    return { acceptClear, writeClear, functions: { seal, unseal } as SealingFunctions };
  }
  return { acceptClear, writeClear, keys: checkKeys(given['keys'], cryptoKeys, fail) };
}

/**
 * A TypeError naming `store` and the first key of `checked` that is a CryptoKey, which only the browser store takes:
 * for what `sealing()` checked, which takes either, given to a Node store.
 */
export function refuseCryptoKeys(store: string, checked: CheckedEncryption): void {
  const index = checked.keys?.findIndex((key) => !isBytes(key.material)) ?? -1;
  if (index >= 0) throw new TypeError(`${store}: \`encryption.keys[${index}].key\` ${NOT_HERE}`);
}

function checkKeys(keys: unknown, cryptoKeys: boolean, fail: (field: string, what: string) => never): KeyMaterial[] {
  const example = cryptoKeys
    ? "{ id: 'k1', secret } (or, for the browser store, { id: 'k1', key } with a CryptoKey)"
    : "{ id: 'k1', secret }";
  if (keys === undefined) fail('', `needs \`keys\`, a list of ${example}, or \`seal\` and \`unseal\`.`);
  if (!Array.isArray(keys) || keys.length === 0)
    fail(
      '.keys',
      `must list at least one key, ${example}; got ${Array.isArray(keys) ? 'an empty list' : kindOf(keys)}.`,
    );
  const ids = new Set<string>();
  return (keys as unknown[]).map((key, index) => {
    const at = `.keys[${index}]`;
    if (key === null || typeof key !== 'object') fail(at, `must be ${example}; got ${kindOf(key)}.`);
    const { id, secret, key: cryptoKey, ...rest } = key as Record<string, unknown>;
    const extra = Object.keys(rest)[0];
    if (extra !== undefined) fail(at, `has an unknown field \`${extra}\`; a key is ${example}.`);
    if (typeof id !== 'string' || id === '')
      fail(`${at}.id`, `must be a non-empty string, such as 'k1'; got ${shown(id)}.`);
    const keyId = id;
    if (!KEY_ID.test(keyId))
      fail(`${at}.id`, `${shown(keyId)} may hold letters, digits, \`_\` and \`-\` only, at most 64.`);
    if (ids.has(keyId)) fail(`${at}.id`, `${shown(keyId)} is listed twice: every key needs an id of its own.`);
    ids.add(keyId);
    if (cryptoKey === undefined) return { id: keyId, material: secretBytes(secret, `${at}.secret`, fail) };
    if (!cryptoKeys) fail(`${at}.key`, NOT_HERE);
    if (secret !== undefined) fail(at, 'takes `secret` or `key`, not both.');
    const problem = cryptoKeyProblem(cryptoKey, index === 0);
    if (problem !== undefined) fail(`${at}.key`, problem);
    return { id: keyId, material: cryptoKey as CryptoKey };
  });
}

/** The 32 bytes of a secret, copied; a message that names its length (never its content) otherwise. */
function secretBytes(secret: unknown, at: string, fail: (field: string, what: string) => never): Uint8Array {
  if (isBytes(secret)) {
    if (secret.length !== 32) fail(at, `must be 32 bytes, ${SECRET_HELP}; got ${secret.length} bytes.`);
    return Uint8Array.from(secret);
  }
  if (typeof secret !== 'string') return fail(at, `must be ${SECRET_HELP}; got ${kindOf(secret)}.`);
  const bytes = bytesFromBase64(secret);
  if (!bytes) return fail(at, `is not Base64: it must be ${SECRET_HELP}.`);
  if (bytes.length !== 32) fail(at, `must be 32 bytes once decoded, ${SECRET_HELP}; got ${bytes.length} bytes.`);
  return bytes;
}

/** Why a CryptoKey cannot seal here, where it can be told; undefined when it can. */
function cryptoKeyProblem(key: unknown, seals: boolean): string | undefined {
  const constructor = (globalThis as { CryptoKey?: abstract new () => unknown }).CryptoKey;
  const looksLikeKey = typeof key === 'object' && key !== null && 'algorithm' in key && 'usages' in key;
  if (!(constructor && key instanceof constructor) && !looksLikeKey) return `must be a CryptoKey; got ${kindOf(key)}.`;
  const { algorithm, usages, type } = key as {
    algorithm?: { name?: unknown; length?: unknown };
    usages?: unknown;
    type?: unknown;
  };
  if (type !== 'secret' || algorithm?.name !== 'AES-GCM' || algorithm.length !== 256)
    return (
      'must be an AES-GCM key of 256 bits, such as crypto.subtle.generateKey({ name: "AES-GCM", length: 256 }, false, ' +
      `["encrypt", "decrypt"]) makes; got ${typeof algorithm?.name === 'string' ? algorithm.name : 'another'} key` +
      `${typeof algorithm?.length === 'number' ? ` of ${algorithm.length} bits` : ''}.`
    );
  const needed = seals ? ['encrypt', 'decrypt'] : ['decrypt'];
  const missing = needed.filter((usage) => !(Array.isArray(usages) && usages.includes(usage)));
  if (missing.length > 0)
    return `lacks the usage ${missing.map((usage) => `"${usage}"`).join(' and ')} that ${seals ? 'the first key, which seals,' : 'a key that opens'} needs.`;
  return undefined;
}

/** A Uint8Array (a Buffer is one), from this realm or another (a test's sandbox, an iframe). */
export function isBytes(value: unknown): value is Uint8Array {
  return ArrayBuffer.isView(value) && Object.prototype.toString.call(value) === '[object Uint8Array]';
}

/** What a value is, for a message: never its content, which may be a secret. */
function kindOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' ? 'an object of another kind' : `a ${typeof value}`;
}
