// The guards of one account, together, and the facts the rest of the account asks of them: the one place a call that
// generates a token asks whether it may go (the gates) and is told how it ended, and the account's record, made of its
// parts alone and read back into them. Nothing outside reaches a guard itself.
import type { TokenAuthError } from '../../contract/errors.js';
import type { AccountRecord, TokenOperation } from '../../contract/store.js';
import type { ResolvedOptions } from '../../options/defaults.js';
import { Budget } from './budget.js';
import { CookieRefusal } from './cookie-refusal.js';
import type { Gate, GuardedCall } from './gate.js';
import { LoginPause } from './login-pause.js';
import { INVALID } from './record-part.js';
import type { RecordPart } from './record-part.js';
import { RefusedRefresh } from './refused-refresh.js';
import { Refusals } from './refusals.js';
import { SignedOut } from './signed-out.js';

export type { GuardedCall };

/** The options the guards read. */
type GuardOptions = Pick<ResolvedOptions, 'clock' | 'accessTokenLifetimeMs' | 'loginCooldownMs' | 'tokenBudget'>;

/** A login of the client rule, as the login pause is asked about it. */
const AUTOMATIC_LOGIN: GuardedCall = { operation: 'login', mode: 'auto', typed: false };

/**
 * Every guard of an account. `shared`: a store every holder consults keeps the record, which the guards' refusals say
 * (a pause another holder saw, a budget counted across the fleet).
 */
export class Guards {
  readonly #pause: LoginPause;
  readonly #budget: Budget;
  readonly #refusedRefresh: RefusedRefresh;
  readonly #cookie: CookieRefusal;
  readonly #signedOut: SignedOut;
  readonly #refusals: Refusals;
  /** The gates, in the order their refusals are asked: the budget last, as it counts what the others let through. */
  readonly #gates: readonly Gate[];
  /** The parts of the account's record. */
  readonly #parts: ReadonlyArray<RecordPart<unknown>>;

  constructor(options: GuardOptions, { shared }: { shared: boolean }) {
    const { clock } = options;
    // An id of no meaning outside the store, so that another holder's pause says it was not this one's.
    const holder = Math.random().toString(36).slice(2, 10);
    const pause = (this.#pause = new LoginPause(options.loginCooldownMs, clock, holder));
    const budget = (this.#budget = new Budget(options.tokenBudget, clock, shared));
    const refusedRefresh = (this.#refusedRefresh = new RefusedRefresh(clock));
    const cookie = (this.#cookie = new CookieRefusal(clock));
    const signedOut = (this.#signedOut = new SignedOut(clock));
    const refusals = (this.#refusals = new Refusals(options.accessTokenLifetimeMs, clock));
    this.#gates = [signedOut, pause, refusedRefresh, cookie, budget];
    this.#parts = [signedOut, pause, refusedRefresh, cookie, refusals, budget];
  }

  // ---- The gates.

  /** Why `call` may not go now, by the first gate that refuses it; undefined when every gate lets it through. */
  refusal(call: GuardedCall): TokenAuthError | undefined {
    for (const gate of this.#gates) {
      const refused = gate.refuse?.(call);
      if (refused) return refused;
    }
    return undefined;
  }

  /** An attempt of `call` leaves: throws the first refusal, else counts it. */
  pass(call: GuardedCall): void {
    const refused = this.refusal(call);
    if (refused) throw refused;
    for (const gate of this.#gates) gate.spend?.(call);
  }

  /** `call` ended, with `error` when the service refused it (or failed), or with a pair. */
  learn(call: GuardedCall, error?: TokenAuthError): void {
    for (const gate of this.#gates) gate.learn?.(call, error);
  }

  // ---- Facts.

  /** The login pause's refusal of `call` (by default, a login of the client rule); undefined when there is none. */
  paused(call: GuardedCall = AUTOMATIC_LOGIN): TokenAuthError | undefined {
    return this.#pause.refuse(call);
  }

  /** Signed out, by this holder or another of the store, and not signed in since. */
  get signedOut(): boolean {
    return this.#signedOut.active;
  }

  /** The error of a call of the client rule while signed out. */
  signedOutError(): TokenAuthError {
    return this.#signedOut.refuse(AUTOMATIC_LOGIN)!;
  }

  /** The token call refused `refreshToken` before, for this holder or another: the pair that holds it is dead. */
  refusedBefore(refreshToken: string): boolean {
    return this.#refusedRefresh.has(refreshToken);
  }

  /** The refresh token the browser keeps in a cookie was refused, and no pair came since. */
  get cookieRefused(): boolean {
    return this.#cookie.active;
  }

  /** Whether a renewal for a refusal on `endpoint` may cure it now. */
  mayRenewFor(endpoint: string): boolean {
    return this.#refusals.mayRenewFor(endpoint);
  }

  /** Whether a stream refused on `endpoint` with the pair of `generation` was refused with the pair its renewal brought. */
  streamRenewedWith(endpoint: string, generation: number): boolean {
    return this.#refusals.streamRenewedWith(endpoint) === generation;
  }

  /** The calls the budget still allows now, per operation; undefined without a budget. */
  budgetLeft(): Record<TokenOperation, number> | undefined {
    return this.#budget.left();
  }

  // ---- What the account tells them.

  /** `auth.logout()`: signed out, and the refusals forgotten (the next login may be another account's). */
  signOut(): void {
    this.#signedOut.signOut();
    this.#refusals.forget();
  }

  /** A pair in use, from this holder or another, is a sign-in: whoever signed out is signed in again. */
  signIn(): void {
    this.#signedOut.signIn();
  }

  /** A person signs in with credentials: the refusals of whoever was signed in before are not theirs. */
  forgetRefusals(): void {
    this.#refusals.forget();
  }

  /** A pair came from elsewhere (`setTokens()`): the cookie that came with it is another. */
  cookieCleared(): void {
    this.#cookie.cleared();
  }

  /** The renewed pair of `generation` was refused at once on `endpoint`: renewing did not cure it. */
  uncured(generation: number, endpoint: string): void {
    this.#refusals.uncured(generation, endpoint);
  }

  /** A replay with the renewed pair of `generation` was accepted; true when that changed what is remembered. */
  cured(generation: number): boolean {
    return this.#refusals.cured(generation);
  }

  /** A stream refused on `endpoint` started the renewal that brought the pair of `generation`. */
  streamRenewed(endpoint: string, generation: number): void {
    this.#refusals.streamRenewed(endpoint, generation);
  }

  // ---- The record.

  /**
   * The parts' states as one record, to keep in a store: it says nothing after the last part's `until`, and halts the
   * renewals that could only log in until the last part's `halts`.
   */
  record(): AccountRecord {
    const record: Record<string, unknown> = { version: 1 };
    const parts = this.#parts;
    for (const part of parts) {
      const state = part.save();
      if (state !== undefined) record[part.field] = state;
    }
    record.expiresAt = Math.max(0, ...parts.map((part) => part.until()));
    record.haltsUntil = Math.max(0, ...parts.map((part) => part.halts?.() ?? 0));
    return record as unknown as AccountRecord;
  }

  /**
   * Takes the states of `data` (a record from the store: another holder's, or this one's from before) for the parts'
   * own; false, changing nothing, when it is not a record every part can read (the guards start afresh).
   */
  restore(data: unknown): boolean {
    const record = data as Partial<Record<string, unknown>> | null;
    if (typeof record !== 'object' || record === null || record.version !== 1) return false;
    const { expiresAt } = record;
    if (typeof expiresAt !== 'number' || !Number.isFinite(expiresAt)) return false;
    const parts = this.#parts;
    const states = parts.map((part) => part.parse(record[part.field]));
    if (states.includes(INVALID)) return false;
    parts.forEach((part, i) => part.load(states[i], { expiresAt }));
    return true;
  }
}
