// What every guard of an account is: what it lets through before a call that generates a token, what it counts as an
// attempt leaves, what it learns from the call's end, and its part of the account's record, which a shared store keeps
// for every holder. A new guard is one file implementing Guard, and one line in guards.ts.
import type { TokenAuthError } from '../../contract/errors.js';
import type { TokenOperation } from '../../contract/store.js';

/** A call that generates a token, as the guards are asked about it. */
export interface GuardedCall {
  readonly operation: TokenOperation;
  /** Who asked for it: the client rule (`auto`), or the user's `auth.login()` or `auth.refresh()`. */
  readonly mode: 'auto' | 'login' | 'refresh';
  /** A sign-in a person typed (credentials given to `auth.login()`): neither the budget nor the pause is theirs. */
  readonly typed: boolean;
  /** The refresh token it sends; undefined for a login, or for the refresh token the browser keeps in a cookie. */
  readonly refreshToken?: string | undefined;
}

/** One guard of an account. Every method but the record's is optional: a guard has what its rule needs. */
export interface Guard<State> {
  /** Its field in the account's record. */
  readonly field: string;
  /** Why `call` may not go now; undefined when it may. Asked before the call, and again as each attempt leaves. */
  refuse?(call: GuardedCall): TokenAuthError | undefined;
  /** An attempt of `call` leaves, first try or retry, having passed every guard. */
  spend?(call: GuardedCall): void;
  /** `call` ended: refused by the service with `error` (a TokenAuthError), or with a pair (no error). */
  learn?(call: GuardedCall, error?: TokenAuthError): void;
  /** Its state, for the record. */
  save(): State;
  /** Until when (epoch ms) its state says anything: the record expires with the last guard's. 0: nothing to say. */
  until(): number;
  /** The state in a record's field, checked; INVALID when the value is not one of this guard's states. */
  parse(value: unknown): State | typeof INVALID;
  /**
   * Takes a state from the record (another holder's, or this one's from before) for its own; `record.expiresAt` says
   * until when the record says anything, for a guard whose state keeps no time of its own.
   */
  load(state: State, record: { readonly expiresAt: number }): void;
}

/** What {@link Guard.parse} gives for a value that is not a state of its guard: the record is then none. */
export const INVALID: unique symbol = Symbol('not a state of this guard');

export const isNumber = (value: unknown): value is number => typeof value === 'number' && Number.isFinite(value);
export const isNumbers = (value: unknown): value is number[] => Array.isArray(value) && value.every(isNumber);
export const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
