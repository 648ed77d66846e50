// What this holder knows of one account, in one room: the pair in use and its generation, the pairs given up, the one
// rule for taking another holder's pair, and the guards consulted before a call that generates a token (the login
// pause, the memory of refusals renewing did not cure, the budget's spent calls, a refused refresh token, a logout).
// The guards read and write as one record, the account's, which a store can keep for every holder.
import { TokenBudget } from './guards/budget.js';
import { LoginCooldown, RefusalPolicy } from './guards/policies.js';
import { lifetimeOf } from '../token-calls/parse.js';
import type { ResolvedOptions } from '../options/defaults.js';
import type { AccountRecord, TokenOperation, TokenPair } from '../contract/store.js';

/**
 * The pair this holder uses now. `generation` numbers the pairs it has used, so that a request can tell whether the
 * pair it carried is still the current one without keeping the token itself.
 */
export interface PairInUse {
  readonly pair: TokenPair;
  readonly generation: number;
  /** When it is renewed before being sent: its expiry less the margin its lifetime gives. */
  readonly renewAt: number;
  /**
   * Obtained while the store's lock could not be taken, and kept out of the store: this holder alone holds it, so its
   * refresh token is this holder's to spend, and the store's pair replaces it as soon as the store answers.
   */
  readonly alone: boolean;
  /** Taken from another holder (the store), not obtained by a token call of this holder's. */
  readonly taken: boolean;
}

/** What a renewal (or the store's fence) says of a pair offered to {@link AccountState.accepts}. */
export interface Offer {
  /** The pair the renewal replaces (refused, or expired): its outcome is another. */
  replacing?: TokenPair | undefined;
  /** A refresh token the token call refused: a pair that carries it is dead too. */
  deadRefresh?: string | undefined;
  /** A renewal wants the pair: an expired one is no outcome. */
  renewing?: boolean;
  /** The store's fence says it is the later holder's pair, even if this holder used it before. */
  vouched?: boolean;
}

/** How many given-up pairs a holder remembers, to refuse stale copies of them. */
const GIVEN_UP_KEPT = 16;
/** How many refused refresh tokens the record remembers, and for how long after the last. */
const REFUSED_REFRESH_KEPT = 8;
const REFUSED_REFRESH_MS = 24 * 3_600_000;
/**
 * How long the record keeps a logout's word for a store that expires what it keeps: 30 days, as long as refresh tokens
 * commonly live, so that a session the server did not end (a cookie left behind) is not taken back by itself.
 */
const SIGNED_OUT_MS = 30 * 24 * 3_600_000;

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

/**
 * The account as this holder knows it. A pair counts as expired within `marginFor(lifetime)` of its expiry, the
 * lifetime being the JWT's `exp - iat` where the token says, else the time it had left when this holder got it (the
 * whole lifetime, for a pair fresh from an answer).
 */
export class AccountState {
  readonly cooldown: LoginCooldown;
  readonly refusals: RefusalPolicy;
  /** Refuses a call past `tokenBudget` before it leaves; absent without a budget. */
  private readonly budget: TokenBudget | undefined;
  /** See {@link AccountRecord.cookieRefreshRefused}. */
  cookieRefreshRefused = false;
  /** See {@link AccountRecord.signedOut}; and when. */
  private signedOutAt: number | undefined;
  /** See {@link AccountRecord.refusedRefresh}; and when the last was refused. */
  private refusedRefresh: string[] = [];
  private refusedRefreshAt = 0;
  private inUse: PairInUse | null = null;
  private generation = 0;
  /** The access tokens of the last pairs given up (replaced or dropped), newest last. */
  private readonly givenUpAccess: string[] = [];
  /** Hears of each pair taken into use (`fromStore` when another holder obtained it) and of each drop (null). */
  private onUse: (pair: TokenPair | null, fromStore: boolean) => void = () => undefined;

  /**
   * `shared`: the guards are the account's, kept in a store every holder consults, which they say where they refuse a
   * call.
   */
  constructor(
    private readonly options: Pick<
      ResolvedOptions,
      'clock' | 'marginFor' | 'accessTokenLifetimeMs' | 'loginCooldownMs' | 'tokenBudget'
    >,
    readonly shared = false,
  ) {
    this.cooldown = new LoginCooldown(options.loginCooldownMs, options.clock, Math.random().toString(36).slice(2, 10));
    this.refusals = new RefusalPolicy(options.accessTokenLifetimeMs, options.clock);
    this.budget = options.tokenBudget ? new TokenBudget(options.tokenBudget, options.clock, shared) : undefined;
  }

  get current(): PairInUse | null {
    return this.inUse;
  }

  /** Tells `listener` of each pair taken into use and each drop, once the account around this state is built. */
  listen(listener: (pair: TokenPair | null, fromStore: boolean) => void): void {
    this.onUse = listener;
  }

  /**
   * The one rule for a pair another holder offers (the store's, an event's, the winner of a fenced write): whether this
   * holder may use it. Never a pair it gave up (a stale copy: a replica behind, a write replayed, the pair a logout is
   * dropping) unless the store's fence `vouched` for it; never the pair a renewal is `replacing`, nor one carrying a
   * `deadRefresh` token; and an expired pair only where it is no worse than what is held and no renewal (`renewing`)
   * needs a valid one.
   */
  accepts(pair: TokenPair, { replacing, deadRefresh, renewing = false, vouched = false }: Offer = {}): boolean {
    if ((!vouched && this.givenUp(pair)) || pair.access === replacing?.access) return false;
    if (deadRefresh !== undefined && pair.refresh === deadRefresh) return false;
    if (!this.expired(pair)) return true;
    const inUse = this.inUse;
    return !renewing && (!inUse || this.expired(inUse));
  }

  /** Uses `pair` from now on; `fromStore` when another holder obtained it; `alone` as {@link PairInUse.alone}. */
  use(pair: TokenPair, fromStore: boolean, alone = false): PairInUse {
    this.generation += 1;
    const inUse: PairInUse = {
      pair,
      generation: this.generation,
      renewAt: this.renewAt(pair),
      alone,
      taken: fromStore,
    };
    this.giveUp();
    this.inUse = inUse;
    // A pair in use, from this holder or another, is a sign-in: whoever signed out is signed in again.
    this.signedOutAt = undefined;
    this.onUse(pair, fromStore);
    return inUse;
  }

  /** Forgets the pair in use, so that no request carries it again; `fromStore` when another holder dropped it. */
  drop(fromStore = false): void {
    if (!this.inUse) return;
    this.giveUp();
    this.inUse = null;
    this.generation += 1;
    this.onUse(null, fromStore);
  }

  /** `auth.logout()`: the pair dropped, and no token fetched by itself until a sign-in (a pair taken into use). */
  signOut(): void {
    this.drop();
    this.signedOutAt = this.options.clock();
  }

  /** Signed out (by this holder or another of the store), and not signed in since: nothing renews by itself. */
  get signedOut(): boolean {
    return this.signedOutAt !== undefined;
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

  /** The calls the budget still allows now, per operation; undefined without a budget. */
  budgetLeft(): Record<TokenOperation, number> | undefined {
    return this.budget?.left();
  }

  /** The token call refused `refreshToken`: no holder sends it again. */
  refreshRefused(refreshToken: string): void {
    const print = fingerprint(refreshToken);
    this.refusedRefresh = [...this.refusedRefresh.filter((known) => known !== print), print].slice(
      -REFUSED_REFRESH_KEPT,
    );
    this.refusedRefreshAt = this.options.clock();
  }

  /** The token call refused `refreshToken` before, for this holder or another. */
  isRefusedRefresh(refreshToken: string): boolean {
    return this.refusedRefresh.includes(fingerprint(refreshToken));
  }

  /** The guards as one record, to keep in a store. */
  record(): AccountRecord {
    const loginPause = this.cooldown.state;
    const refusals = this.refusals.state;
    const spent = this.budget?.state ?? { login: [], refresh: [] };
    const windowMs = this.options.tokenBudget ? this.options.tokenBudget.windowMs : 0;
    const remembered = this.refusedRefresh.length > 0 || this.cookieRefreshRefused;
    const expiresAt = Math.max(
      loginPause?.until ?? 0,
      refusals.until,
      ...refusals.uncured.map(([, until]) => until),
      ...[...spent.login, ...spent.refresh].map((at) => at + windowMs),
      remembered ? this.refusedRefreshAt + REFUSED_REFRESH_MS : 0,
      (this.signedOutAt ?? -Infinity) + SIGNED_OUT_MS,
    );
    return {
      version: 1,
      loginPause,
      refusals,
      spent,
      cookieRefreshRefused: this.cookieRefreshRefused,
      refusedRefresh: [...this.refusedRefresh],
      ...(this.signedOutAt === undefined ? {} : { signedOut: this.signedOutAt }),
      expiresAt,
    };
  }

  /** Takes the guards of `record` (another holder's, or this one's from before) for its own. */
  restore(record: AccountRecord): void {
    this.cooldown.state = record.loginPause;
    this.refusals.state = record.refusals;
    if (this.budget) this.budget.state = record.spent;
    this.cookieRefreshRefused = record.cookieRefreshRefused;
    this.refusedRefresh = [...record.refusedRefresh];
    // A sign-in anywhere clears the mark (under the lock), so a mark in the record is a logout after every pair held:
    // the pair this holder still uses (it missed the store's word of the logout) goes too.
    this.signedOutAt = record.signedOut;
    if (record.signedOut !== undefined) this.drop();
    if (this.refusedRefresh.length > 0 || record.cookieRefreshRefused)
      this.refusedRefreshAt = Math.max(this.refusedRefreshAt, record.expiresAt - REFUSED_REFRESH_MS);
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
