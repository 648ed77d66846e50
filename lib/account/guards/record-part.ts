// A part of the account's record: one guard's state, which a shared store keeps for every holder. The record is made
// of its parts alone (guards.ts): a new part is one file implementing RecordPart, and one line in guards.ts.

/** One part of the account's record. */
export interface RecordPart<State> {
  /** Its field in the account's record. */
  readonly field: string;
  /** Its state, for the record. */
  save(): State;
  /** Until when (epoch ms) its state says anything: the record expires with the last part's. 0: nothing to say. */
  until(): number;
  /**
   * Until when (epoch ms) its state halts the renewals that could only log in: the record's `haltsUntil`, which a
   * store that tells the holders waiting for its lock reads. Absent, or 0: it halts nothing.
   */
  halts?(): number;
  /** The state in a record's field, checked; INVALID when the value is not one of this part's states. */
  parse(value: unknown): State | typeof INVALID;
  /**
   * Takes a state from the record (another holder's, or this one's from before) for its own; `record.expiresAt` says
   * until when the record says anything, for a part whose state keeps no time of its own.
   */
  load(state: State, record: { readonly expiresAt: number }): void;
}

/** What {@link RecordPart.parse} gives for a value that is not a state of its part: the record is then none. */
export const INVALID: unique symbol = Symbol('not a state of this part');

export const isNumber = (value: unknown): value is number => typeof value === 'number' && Number.isFinite(value);
export const isNumbers = (value: unknown): value is number[] => Array.isArray(value) && value.every(isNumber);
export const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
