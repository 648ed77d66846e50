// A logout, for every holder of the store: after `auth.logout()` nothing fetches a token by itself, here or in any
// process or tab sharing the store, until a sign-in (a pair taken into use: `login()`, `setTokens()`, `refresh()`).
import { signedOut } from '../../contract/errors.js';
import type { TokenAuthError } from '../../contract/errors.js';
import type { Gate, GuardedCall } from './gate.js';
import { INVALID, isNumber } from './record-part.js';
import type { RecordPart } from './record-part.js';

/**
 * How long the record keeps a logout's word for a store that expires what it keeps: 30 days, as long as refresh tokens
 * commonly live, so that a session the server did not end (a cookie left behind) is not taken back by itself.
 */
const KEPT_MS = 30 * 24 * 3_600_000;

export class SignedOut implements Gate, RecordPart<number | undefined> {
  readonly field = 'signedOut';
  /** When the account was signed out (epoch ms); undefined once anyone signed in since. */
  private at: number | undefined;

  constructor(private readonly clock: () => number) {}

  /** Signed out, by this holder or another of the store, and not signed in since. */
  get active(): boolean {
    return this.at !== undefined;
  }

  /** `auth.logout()`. */
  signOut(): void {
    this.at = this.clock();
  }

  /** A pair in use, from this holder or another, is a sign-in: whoever signed out is signed in again. */
  signIn(): void {
    this.at = undefined;
  }

  /** Nothing by the client rule while signed out: only the user signs in again. */
  refuse({ mode }: GuardedCall): TokenAuthError | undefined {
    return mode === 'auto' && this.active ? signedOut() : undefined;
  }

  save(): number | undefined {
    return this.at;
  }

  until(): number {
    return this.at === undefined ? 0 : this.at + KEPT_MS;
  }

  /** Absent, or when the logout was. */
  parse(value: unknown): number | undefined | typeof INVALID {
    return value === undefined || isNumber(value) ? value : INVALID;
  }

  load(at: number | undefined): void {
    this.at = at;
  }
}
