// The guards of one account, together: the one place a call that generates a token asks whether it may go, the one
// place its end is told, and the account's record, made from the guards' states and read back into them.
import type { TokenAuthError } from '../../contract/errors.js';
import type { AccountRecord, TokenOperation } from '../../contract/store.js';
import type { ResolvedOptions } from '../../options/defaults.js';
import { Budget } from './budget.js';
import { CookieRefusal } from './cookie-refusal.js';
import { INVALID } from './guard.js';
import type { Guard, GuardedCall } from './guard.js';
import { LoginPause } from './login-pause.js';
import { RefusedRefresh } from './refused-refresh.js';
import { Refusals } from './refusals.js';
import { SignedOut } from './signed-out.js';

export type { GuardedCall };

/** The options the guards read. */
type GuardOptions = Pick<ResolvedOptions, 'clock' | 'accessTokenLifetimeMs' | 'loginCooldownMs' | 'tokenBudget'>;

/**
 * Every guard of an account. `shared`: a store every holder consults keeps the record, which the guards' refusals say
 * (a pause another holder saw, a budget counted across the fleet).
 */
export class Guards {
  readonly pause: LoginPause;
  readonly budget: Budget;
  readonly refusedRefresh: RefusedRefresh;
  readonly cookie: CookieRefusal;
  readonly signedOut: SignedOut;
  readonly refusals: Refusals;
  /** Every guard, in the order their refusals are asked: the budget last, as it counts what the others let through. */
  private readonly all: ReadonlyArray<Guard<unknown>>;

  constructor(options: GuardOptions, { shared }: { shared: boolean }) {
    const { clock } = options;
    // An id of no meaning outside the store, so that another holder's pause says it was not this one's.
    const holder = Math.random().toString(36).slice(2, 10);
    this.pause = new LoginPause(options.loginCooldownMs, clock, holder);
    this.budget = new Budget(options.tokenBudget, clock, shared);
    this.refusedRefresh = new RefusedRefresh(clock);
    this.cookie = new CookieRefusal(clock);
    this.signedOut = new SignedOut(clock);
    this.refusals = new Refusals(options.accessTokenLifetimeMs, clock);
    this.all = [this.signedOut, this.pause, this.refusedRefresh, this.cookie, this.refusals, this.budget];
  }

  /** Why `call` may not go now, by the first guard that refuses it; undefined when every guard lets it through. */
  refusal(call: GuardedCall): TokenAuthError | undefined {
    for (const guard of this.all) {
      const refused = guard.refuse?.(call);
      if (refused) return refused;
    }
    return undefined;
  }

  /** An attempt of `call` leaves: throws the first refusal, else counts it. */
  pass(call: GuardedCall): void {
    const refused = this.refusal(call);
    if (refused) throw refused;
    for (const guard of this.all) guard.spend?.(call);
  }

  /** `call` ended, with `error` when the service refused it (or failed), or with a pair. */
  learn(call: GuardedCall, error?: TokenAuthError): void {
    for (const guard of this.all) guard.learn?.(call, error);
  }

  /** The calls the budget still allows now, per operation; undefined without a budget. */
  budgetLeft(): Record<TokenOperation, number> | undefined {
    return this.budget.left();
  }

  /** The guards' states as one record, to keep in a store: it says nothing after the last guard's `until`. */
  record(): AccountRecord {
    const record: Record<string, unknown> = { version: 1 };
    for (const guard of this.all) {
      const state = guard.save();
      if (state !== undefined) record[guard.field] = state;
    }
    record.expiresAt = Math.max(0, ...this.all.map((guard) => guard.until()));
    return record as unknown as AccountRecord;
  }

  /**
   * Takes the states of `data` (a record from the store: another holder's, or this one's from before) for the
   * guards' own; false, changing nothing, when it is not a record every guard can read (the guards start afresh).
   */
  restore(data: unknown): boolean {
    const record = data as Partial<Record<string, unknown>> | null;
    if (typeof record !== 'object' || record === null || record.version !== 1) return false;
    const { expiresAt } = record;
    if (typeof expiresAt !== 'number' || !Number.isFinite(expiresAt)) return false;
    const states = this.all.map((guard) => guard.parse(record[guard.field]));
    if (states.includes(INVALID)) return false;
    this.all.forEach((guard, i) => guard.load(states[i], { expiresAt }));
    return true;
  }
}
