// The refresh tokens the token call refused, for any holder of the store: a holder that still holds one logs in rather
// than send it again. The record keeps their fingerprints, never the tokens.
import type { TokenAuthError } from '../../contract/errors.js';
import type { Gate, GuardedCall } from './gate.js';
import { INVALID } from './record-part.js';
import type { RecordPart } from './record-part.js';

/** How many refused refresh tokens the record remembers, and for how long after the last. */
const KEPT = 8;
const KEPT_MS = 24 * 3_600_000;

/**
 * A refresh token's fingerprint for the record, which may be read by anyone who can read the store: 53 bits of a
 * non-cryptographic hash (cyrb53), enough to tell tokens apart, too few and too lossy to give one back.
 */
export function fingerprint(token: string): string {
  let h1 = 0xdeadbeef;
  let h2 = 0x41c6ce57;
  for (let i = 0; i < token.length; i += 1) {
    const code = token.charCodeAt(i);
    h1 = Math.imul(h1 ^ code, 2654435761);
    h2 = Math.imul(h2 ^ code, 1597334677);
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  return (4294967296 * (2097151 & h2) + (h1 >>> 0)).toString(36);
}

export class RefusedRefresh implements Gate, RecordPart<string[]> {
  readonly field = 'refusedRefresh';
  private prints: string[] = [];
  /** When the last was refused (epoch ms), or as the record it came from lets tell. */
  private at = 0;

  constructor(private readonly clock: () => number) {}

  /** The token call refused `refreshToken` before, for this holder or another: the pair that holds it is dead. */
  has(refreshToken: string): boolean {
    return this.prints.includes(fingerprint(refreshToken));
  }

  learn({ operation, refreshToken }: GuardedCall, error?: TokenAuthError): void {
    if (operation !== 'refresh' || refreshToken === undefined || error?.code !== 'REFRESH_REJECTED') return;
    const print = fingerprint(refreshToken);
    this.prints = [...this.prints.filter((known) => known !== print), print].slice(-KEPT);
    this.at = this.clock();
  }

  save(): string[] {
    return [...this.prints];
  }

  until(): number {
    return this.prints.length > 0 ? this.at + KEPT_MS : 0;
  }

  parse(value: unknown): string[] | typeof INVALID {
    return Array.isArray(value) && value.every((print) => typeof print === 'string') ? value : INVALID;
  }

  load(prints: string[], { expiresAt }: { expiresAt: number }): void {
    this.prints = [...prints];
    if (prints.length > 0) this.at = Math.max(this.at, expiresAt - KEPT_MS);
  }
}
