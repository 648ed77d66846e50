// The record every store that shares the pair keeps (the token file, the Redis key, the browser's storage entry): one
// format and one check, so that what one store takes for its own, every store does.
import type { TokenPair } from '../../contract/store.js';

/**
 * A write of the pair: the fence it was written under, and the pair, or null once dropped. A dropped pair stays a
 * record, with its fence, so that an older record cannot come back after it.
 */
export interface FencedPair<Pair extends Partial<TokenPair> = TokenPair> {
  fence: number;
  pair: Pair | null;
}

/**
 * How a record is read. `accessOptional` takes a pair without its access token too: the browser store writes one with
 * `keepAccessInMemory`.
 */
export interface RecordReading {
  accessOptional?: boolean;
}

/**
 * A pair as a store with `encryption` keeps it: its tokens sealed (see sealing/cipher.ts), and beside them, in clear,
 * the expiry, which the scripts and the plugin read without the key.
 */
interface SealedPair {
  /** The tokens, sealed: `v1.<key id>.<iv>.<ciphertext>` with `keys`, or what `encryption.seal` gave. */
  sealed: string;
  expiresAt?: number;
}

/** A pair as a record may hold it: in clear, or sealed. */
export type StoredPair<Pair extends Partial<TokenPair> = TokenPair> = Pair | SealedPair;

/** The record of one write, as stored. The version lets a later format tell this one apart. */
export function recordToJson(fence: number, pair: StoredPair<Partial<TokenPair>> | null): string {
  return JSON.stringify({ version: 1, fence, pair });
}

/**
 * The record in `text`; anything else is not ours, and is reported rather than overwritten, so a wrong path or key
 * loses nothing. Throws, naming `where` and the fix.
 */
export function parseRecord(text: string, where: string): FencedPair<StoredPair> {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch {
    throw new Error(
      `${where} does not hold JSON, so it is not a token file of this package; point the store elsewhere or delete it.`,
    );
  }
  const record = recordIn(data, {});
  if (!record) {
    throw new Error(
      `${where} is not a token record of this package (version 1 with a fence and a pair); point the store elsewhere or delete it.`,
    );
  }
  return record as FencedPair<StoredPair>;
}

/** The record in `text`, or undefined when it is not one of ours (not JSON, or not a record). */
export function tryParseRecord(
  text: string,
  reading: RecordReading = {},
): FencedPair<StoredPair<Partial<TokenPair>>> | undefined {
  try {
    return recordIn(JSON.parse(text), reading);
  } catch {
    return undefined;
  }
}

/** True for what a record's pair may be; `accessOptional` as for {@link RecordReading}. */
export function isPair(value: unknown): value is TokenPair;
export function isPair(value: unknown, reading: RecordReading): value is Partial<TokenPair>;
export function isPair(value: unknown, { accessOptional = false }: RecordReading = {}): value is Partial<TokenPair> {
  if (value === null || typeof value !== 'object') return false;
  const pair = value as Partial<Record<keyof TokenPair | 'sealed', unknown>>;
  return (
    pair.sealed === undefined &&
    (typeof pair.access === 'string' || (accessOptional && pair.access === undefined)) &&
    (pair.refresh === undefined || typeof pair.refresh === 'string') &&
    (pair.expiresAt === undefined || typeof pair.expiresAt === 'number')
  );
}

/** True for a sealed pair: its sealed text, its expiry, and no token in clear. */
export function isSealed(value: unknown): value is SealedPair {
  if (value === null || typeof value !== 'object') return false;
  const pair = value as Partial<Record<keyof TokenPair | 'sealed', unknown>>;
  return (
    typeof pair.sealed === 'string' &&
    pair.access === undefined &&
    pair.refresh === undefined &&
    (pair.expiresAt === undefined || typeof pair.expiresAt === 'number')
  );
}

function recordIn(data: unknown, reading: RecordReading): FencedPair<StoredPair<Partial<TokenPair>>> | undefined {
  const record = data as { version?: unknown; fence?: unknown; pair?: unknown } | null;
  if (record?.version !== 1 || typeof record.fence !== 'number') return undefined;
  const { fence, pair } = record;
  return pair === null || isPair(pair, reading) || isSealed(pair) ? { fence, pair } : undefined;
}

/** A copy, so that no caller can change a pair another holds. */
export function copyPair<Pair extends Partial<TokenPair>>(pair: Pair | null): Pair | null {
  return pair && { ...pair };
}
