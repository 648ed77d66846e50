// What the plugin knows about the account, in one room: the pair in use and its generation, the pairs given up, and
// the guards consulted before a call that generates a token (the login pause, the memory of refusals renewing did not
// cure, the budget's spent calls, a refused refresh token). The guards read and write as one record, the account's,
// which a store can keep for every holder.
import { TokenBudget } from './budget.js';
import type { SpentCalls, TokenOperation } from './budget.js';
import { LoginCooldown, RefusalPolicy } from './policies.js';
import type { LoginPause, RefusalMemory } from './policies.js';
import { lifetimeOf } from './parse.js';
import type { ResolvedOptions } from './options.js';
import type { TokenPair } from './store-contract.js';

/**
 * The pair this holder uses now. `generation` numbers the pairs it has used, so that a request can tell whether the
 * pair it carried is still the current one without keeping the token itself.
 */
export interface PairInUse {
  readonly pair: TokenPair;
  readonly generation: number;
  /** When it is renewed before being sent: its expiry less the margin its lifetime gives. */
  readonly renewAt: number;
}

/**
 * The account's guards as one record, version 1: what a store keeps beside the pair so that every holder consults
 * the same. Times are epoch milliseconds by the plugin's `clock`. Nothing in it is a secret: the endpoints are
 * method and URL without query, the rejection is its message.
 */
export interface AccountRecord {
  version: 1;
  /** Automatic logins are paused after a rejection; null when they may go. */
  loginPause: LoginPause | null;
  /** Refusals renewing did not cure: the endpoints, and the back-off once they look general. */
  refusals: RefusalMemory;
  /** The calls spent in `tokenBudget`'s window; empty without a budget. */
  spent: SpentCalls;
  /** The token call refused the refresh token held in a cookie: no more such calls until a pair comes. */
  cookieRefreshRefused: boolean;
}

/** How many given-up pairs a holder remembers, to refuse stale copies of them. */
const GIVEN_UP_KEPT = 16;

/**
 * The account as this holder knows it. A pair counts as expired within `marginFor(lifetime)` of its expiry, the
 * lifetime being the JWT's `exp - iat` where the token says, else the time it had left when this holder got it (the
 * whole lifetime, for a pair fresh from an answer).
 */
export class Account {
  readonly cooldown: LoginCooldown;
  readonly refusals: RefusalPolicy;
  /** Refuses a call past `tokenBudget` before it leaves; absent without a budget. */
  private readonly budget: TokenBudget | undefined;
  /** See {@link AccountRecord.cookieRefreshRefused}. */
  cookieRefreshRefused = false;
  private inUse: PairInUse | null = null;
  private generation = 0;
  /** The access tokens of the last pairs given up (replaced or dropped), newest last. */
  private readonly givenUpAccess: string[] = [];

  /** `onUse` hears of each pair taken into use, `fromStore` when another holder obtained it. */
  constructor(
    private readonly options: Pick<
      ResolvedOptions,
      'clock' | 'marginFor' | 'accessTokenLifetimeMs' | 'loginCooldownMs' | 'tokenBudget'
    >,
    private readonly onUse: (pair: TokenPair, fromStore: boolean) => void,
  ) {
    this.cooldown = new LoginCooldown(options.loginCooldownMs, options.clock);
    this.refusals = new RefusalPolicy(options.accessTokenLifetimeMs, options.clock);
    this.budget = options.tokenBudget ? new TokenBudget(options.tokenBudget, options.clock) : undefined;
  }

  get current(): PairInUse | null {
    return this.inUse;
  }

  /** Uses `pair` from now on; `fromStore` when another holder obtained it. */
  use(pair: TokenPair, fromStore: boolean): PairInUse {
    this.generation += 1;
    const inUse: PairInUse = { pair, generation: this.generation, renewAt: this.renewAt(pair) };
    this.giveUp();
    this.inUse = inUse;
    this.onUse(pair, fromStore);
    return inUse;
  }

  /** Forgets the pair in use, so that no request carries it again. */
  drop(): void {
    if (!this.inUse) return;
    this.giveUp();
    this.inUse = null;
    this.generation += 1;
  }

  /** This holder used `pair` before and has since replaced or dropped it: a stale copy, wherever it comes from. */
  givenUp(pair: TokenPair): boolean {
    return this.givenUpAccess.includes(pair.access);
  }

  /** The current pair, if valid and newer than the pair of `generation`. */
  newerThan(generation: number): PairInUse | null {
    const inUse = this.inUse;
    return inUse && inUse.generation > generation && !this.expired(inUse) ? inUse : null;
  }

  /** Known to expire within its margin: renewed before it is sent. */
  expired(pair: TokenPair | PairInUse): boolean {
    return this.options.clock() >= ('renewAt' in pair ? pair.renewAt : this.renewAt(pair));
  }

  /** Counts one call of `operation` that leaves, or throws TOKEN_BUDGET_EXCEEDED without counting it. */
  spend(operation: TokenOperation): void {
    this.budget?.take(operation);
  }

  /** The guards as one record, to keep in a store. */
  record(): AccountRecord {
    return {
      version: 1,
      loginPause: this.cooldown.state,
      refusals: this.refusals.state,
      spent: this.budget?.state ?? { login: [], refresh: [] },
      cookieRefreshRefused: this.cookieRefreshRefused,
    };
  }

  /** Takes the guards of `record` (another holder's, or this one's from before) for its own. */
  restore(record: AccountRecord): void {
    this.cooldown.state = record.loginPause;
    this.refusals.state = record.refusals;
    if (this.budget) this.budget.state = record.spent;
    this.cookieRefreshRefused = record.cookieRefreshRefused;
  }

  private giveUp(): void {
    if (!this.inUse) return;
    this.givenUpAccess.push(this.inUse.pair.access);
    if (this.givenUpAccess.length > GIVEN_UP_KEPT) this.givenUpAccess.shift();
  }

  private renewAt(pair: TokenPair): number {
    const expiresAt = pair.expiresAt;
    if (expiresAt === undefined) return Infinity;
    const { clock, marginFor } = this.options;
    return expiresAt - marginFor(lifetimeOf(pair.access, expiresAt, clock()));
  }
}
