// The pairs of one account as this holder knows them: the pair in use and its generation, the pairs given up, the one
// rule for taking another holder's pair, the logout epoch that a logout moves on, and what taking a pair into use
// tells the rest of the account (its secrets, its events, its sign-in state, its guards).
import { lifetimeOf } from '../token-calls/parse.js';
import type { ResolvedOptions } from '../options/defaults.js';
import type { TokenPair } from '../contract/store.js';
import type { SecretList } from '../support/redact.js';
import type { Guards } from './guards/guards.js';
import type { AccountReports } from './reports.js';
import type { SignInState } from './sign-in-state.js';

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

/** What a renewal (or the store's fence) says of a pair offered to {@link Pairs.accepts}. */
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

/**
 * The account's pairs as this holder knows them. A pair counts as expired within `marginFor(lifetime)` of its expiry,
 * the lifetime being the JWT's `exp - iat` where the token says, else the time it had left when this holder got it (the
 * whole lifetime, for a pair fresh from an answer).
 */
export class Pairs {
  private inUse: PairInUse | null = null;
  private generation = 0;
  private epochCount = 0;
  /** The generation of the pair in use when the service refused it and a renewal was started for it. */
  private refusedGeneration = -1;
  /** The access tokens of the last pairs given up (replaced or dropped), newest last. */
  private readonly givenUpAccess: string[] = [];

  constructor(
    private readonly options: Pick<ResolvedOptions, 'clock' | 'marginFor'>,
    private readonly parts: {
      /** A pair in use is a sign-in: whoever signed out is signed in again. */
      readonly guards: Guards;
      /** The secrets of the pairs, masked wherever the account's errors surface. */
      readonly secrets: SecretList;
      readonly reports: AccountReports;
      readonly signIn: SignInState;
    },
  ) {}

  get current(): PairInUse | null {
    return this.inUse;
  }

  /** The logout epoch: a renewal or a request of an earlier one must not sign the account back in. */
  get epoch(): number {
    return this.epochCount;
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
    const { guards, secrets, reports, signIn } = this.parts;
    // A pair in use, from this holder or another, is a sign-in: whoever signed out is signed in again.
    guards.signIn();
    if (!secrets.remember(pair) && fromStore) reports.load(pair);
    // A pair another holder (a tab) brought ends a failure here too. A renewal of this holder's tells the state once,
    // as it ends, not as it takes its pair.
    signIn.held(true);
    return inUse;
  }

  /** Forgets the pair in use, so that no request carries it again. */
  drop(): void {
    if (!this.inUse) return;
    this.giveUp();
    this.inUse = null;
    this.generation += 1;
    this.parts.signIn.held(false);
  }

  /**
   * The service refused the pair of `generation` while valid, and a renewal is under way for it: until a pair replaces
   * it, it is sent no more (see {@link usable}).
   */
  refused(generation: number): void {
    if (this.inUse?.generation === generation) this.refusedGeneration = generation;
  }

  /** Whether a request may carry `inUse` now: not known to be expired, nor refused. */
  usable(inUse: PairInUse): boolean {
    return inUse.generation !== this.refusedGeneration && !this.expired(inUse);
  }

  /** How the pair in use stands for a request that needs one. */
  standing(): 'none' | 'valid' | 'expired' | 'refused' {
    const inUse = this.inUse;
    if (!inUse) return 'none';
    if (inUse.generation === this.refusedGeneration) return 'refused';
    return this.expired(inUse) ? 'expired' : 'valid';
  }

  /** `auth.logout()`: the pair dropped, and the epoch moved on, so that nothing under way brings one back. */
  signOut(): void {
    this.drop();
    this.epochCount += 1;
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

  /** The pair in use, when it has not expired yet (its expiry, not its margin) nor been refused: it may still be sent. */
  stillValid(): PairInUse | undefined {
    const inUse = this.inUse;
    const expiresAt = inUse?.pair.expiresAt;
    return inUse &&
      inUse.generation !== this.refusedGeneration &&
      expiresAt !== undefined &&
      expiresAt > this.options.clock()
      ? inUse
      : undefined;
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
