// The records of a store that may seal its pair (a Redis key, a token file, a storage entry), as it reads and writes
// them: the pair sealed by the store's sealer with `encryption`, in clear without it. Every store takes this, with or
// without `encryption`; the cipher is cipher.ts', which the browser store loads only with `encryption`. The message
// for a pair sealed with a key the holder lacks is here too, since a store without `encryption` gives it as well, and
// the form of a key's id, which the sealed text carries: every store reads it, with or without sealing's checks.
import { TokenAuthError } from '../../contract/errors.js';
import type { TokenPair } from '../../contract/store.js';
import { isSealed, recordToJson } from '../common/record.js';
import type { FencedPair, StoredPair } from '../common/record.js';

/**
 * The format of the sealed text that `encryption.keys` write (cipher.ts), first in it, so that a later format can tell
 * this one apart; the id of the key that sealed it follows, which a message names.
 */
export const FORMAT = 'v1';

/** The form of a key's id: what the sealed text can carry between its dots. */
export const KEY_ID = /^[A-Za-z0-9_-]{1,64}$/;

/**
 * What seals and opens the pairs of the records: the PairSealer of `encryption` (cipher.ts), or, in the browser store,
 * one that loads it at its first seal or open.
 */
export interface Sealer {
  /** It seals what it keeps (not `writeClear`): a pair's DPoP key may go into the record. */
  readonly sealsPairs: boolean;
  /** What a store keeps of `pair` at `context`: its tokens sealed, its expiry beside them. */
  seal(pair: Partial<TokenPair>, context: string): Promise<StoredPair<Partial<TokenPair>>>;
  /** The pair a store keeps at `context` (`where`, as a message names it), opened and checked by `check`. */
  open<Pair extends Partial<TokenPair>>(
    stored: StoredPair<Partial<TokenPair>>,
    context: string,
    where: string,
    check: (value: unknown) => value is Pair,
  ): Promise<Pair>;
}

/**
 * The records of one place (a Redis key, a token file, a storage entry) as a store reads and writes them: the pair
 * sealed with the store's `encryption` (or in clear without it), and the last pair opened kept, so that reading the
 * same record again (a lock's try, a notification, the re-read under the lock) does not decrypt it again.
 */
export class SealedRecords<Pair extends Partial<TokenPair>> {
  readonly #sealer: Sealer | undefined;
  /** The last record opened or written: its fence, its sealed text, and the pair. */
  #last: { fence: number; sealed: string; pair: Promise<Pair> } | undefined;

  /**
   * @param sealer The store's sealing; none without `encryption`.
   * @param context Where the records are kept: the additional data every sealed pair is bound to.
   * @param where The place, as a message names it ("The Redis key …").
   * @param check What a pair opened must be.
   */
  constructor(
    sealer: Sealer | undefined,
    readonly context: string,
    private readonly where: string,
    private readonly check: (value: unknown) => value is Pair,
  ) {
    this.#sealer = sealer;
  }

  /** The sealing of these records, which the stores of named accounts share; none without `encryption`. */
  get sealer(): Sealer | undefined {
    return this.#sealer;
  }

  /** A pair's DPoP key goes into these records, sealed: there is a sealer, and it seals. */
  get keepsDpopKeys(): boolean {
    return this.#sealer?.sealsPairs === true;
  }

  /** The records of another place (a named account's), with the same sealing. */
  at(context: string, where: string): SealedRecords<Pair> {
    return new SealedRecords<Pair>(this.#sealer, context, where, this.check);
  }

  /** The record of a write, as text: the pair sealed (or in clear without `encryption`). */
  async toJson(fence: number, pair: Pair | null): Promise<string> {
    if (pair?.dpopKey && !this.keepsDpopKeys)
      throw new Error(
        `${this.where} would keep a DPoP key in clear: give the store \`encryption\` (without \`writeClear\`).`,
      );
    if (!this.#sealer || pair === null) return recordToJson(fence, pair);
    const stored = await this.#sealer.seal(await withStoredKey(pair), this.context);
    // What this holder wrote, it can read back without decrypting.
    if (isSealed(stored)) this.#last = { fence, sealed: stored.sealed, pair: Promise.resolve({ ...pair }) };
    return recordToJson(fence, stored);
  }

  /** The pair of a record read, opened; see `PairSealer.open` (cipher.ts) for what it throws. */
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
    const opening = this.#sealer.open(pair, this.context, this.where, this.check).then(withKey);
    const entry = { fence, sealed: pair.sealed, pair: opening };
    this.#last = entry;
    // A record that does not open is not kept: the next read says why again.
    opening.catch(() => {
      if (this.#last === entry) this.#last = undefined;
    });
    return { ...(await opening) };
  }
}

/** `pair` as a sealed record carries it: its DPoP key, if any, as the private JWK (see dpop/stored-key.ts). */
async function withStoredKey<Pair extends Partial<TokenPair>>(pair: Pair): Promise<Partial<TokenPair>> {
  if (!pair.dpopKey) return pair;
  const { exportDpopKey } = await import('../../dpop/stored-key.js');
  return { ...pair, dpopKey: await exportDpopKey(pair.dpopKey) };
}

/** A pair opened from a sealed record, its DPoP key a key again; one whose key does not import has none. */
async function withKey<Pair extends Partial<TokenPair>>(pair: Pair): Promise<Pair> {
  if (pair.dpopKey === undefined) return pair;
  const { importDpopKey, isStoredDpopKey } = await import('../../dpop/stored-key.js');
  const { dpopKey: stored, ...rest } = pair;
  if (!isStoredDpopKey(stored)) return rest as Pair;
  return { ...rest, dpopKey: await importDpopKey(stored) } as Pair;
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
export function keyMissing(
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
