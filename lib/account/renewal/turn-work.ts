// What one renewal does in its turn at the store, on one screen: the rules (RULES below, the first that holds decides),
// with the steps they take (the calls themselves are calls.ts').
import { hasCode } from '../../contract/errors.js';
import type { ParsedTokens } from '../../contract/calls.js';
import type { TokenPair } from '../../contract/store.js';
import type { PairInUse } from '../pairs.js';
import { TurnLost } from '../store/turn.js';
import type { StoreTurn } from '../store/turn.js';
import { loggedOutMeanwhile, RenewalCalls } from './calls.js';
import type { TurnScope, TurnWorkParts } from './calls.js';

/** What the turn finds, which the rules read. */
interface Facts {
  readonly auto: boolean;
  readonly login: boolean;
  readonly signedOut: boolean;
  /** A pair another holder stored, which this renewal accepts. */
  readonly stored: TokenPair | null;
  readonly storedAccepted: boolean;
  readonly lockMissed: boolean;
  /** The store holds no pair, though the one renewed came through it: lost, or dropped as dead. */
  readonly storeLost: boolean;
  /** The refresh token it would send was refused before, for any holder of the store. */
  readonly refusedBefore: boolean;
  readonly canRefresh: boolean;
}

type Step = 'signed-out' | 'take-stored' | 'go-alone' | 'log-in-store-lost' | 'drop-and-log-in' | 'log-in' | 'refresh';

/**
 * What a renewal does in its turn, by what it finds there: the first rule that holds decides.
 *
 * | finds                                                                              | does                          |
 * | ---------------------------------------------------------------------------------- | ----------------------------- |
 * | signed out, here or by the record read for this turn (client rule)                 | fails with LOGGED_OUT         |
 * | a pair another holder stored, valid, not the one it replaces (client rule)        | takes it: no call             |
 * | the store's lock missed, its wait over (`whenStoreDown: 'go-alone'`)               | its own refresh token, else a login, kept out of the store |
 * | no pair in the store, where the one it replaces came through it                    | logs in (`store-lost`): never a refresh token someone may have spent |
 * | the refresh token it would send refused before (client rule)                       | drops the pair, logs in (`refresh-rejected`) |
 * | `auth.login()`, or nothing to refresh with (no refresh token, no usable cookie)   | logs in                       |
 * | otherwise                                                                          | refreshes; refused: takes a newer pair another holder stored, else drops the pair and logs in |
 */
const RULES: ReadonlyArray<[(facts: Facts) => boolean, Step]> = [
  [(f) => f.auto && f.signedOut, 'signed-out'],
  [(f) => f.auto && f.storedAccepted, 'take-stored'],
  [(f) => f.lockMissed && !f.login, 'go-alone'],
  [(f) => !f.login && f.storeLost, 'log-in-store-lost'],
  [(f) => f.auto && f.refusedBefore, 'drop-and-log-in'],
  [(f) => f.login || !f.canRefresh, 'log-in'],
  [() => true, 'refresh'],
];

/** The work of a renewal in its turn at the store, with the account's guards as the store has them. */
export class TurnWork {
  private readonly calls: RenewalCalls;

  constructor(private readonly parts: TurnWorkParts) {
    this.calls = new RenewalCalls(parts);
  }

  /** Does what {@link RULES} say for what `scope`'s turn finds; gives the pair the renewal brings. */
  async run(scope: TurnScope): Promise<PairInUse> {
    const { turn, mode, replacing } = scope;
    const { pairs, link, guards } = this.parts;
    const stored = await link.read(turn);
    // The store stopped answering under the lock (it was paused right after it granted it): what it holds is not
    // known, so nothing is generated on it. A store that answers with an error is read as holding no pair.
    if (turn.lockTaken && turn.storeSilent) throw new TurnLost({ cause: link.outage?.cause });
    const basis = stored ?? replacing;
    const facts: Facts = {
      auto: mode === 'auto',
      login: mode === 'login',
      signedOut: guards.signedOut.active,
      stored,
      storedAccepted: stored !== null && pairs.accepts(stored, { replacing, renewing: true }),
      lockMissed: turn.lockMissed,
      storeLost: !stored && replacing !== undefined && !pairs.current?.alone && link.shares,
      refusedBefore: basis?.refresh !== undefined && this.refused(basis.refresh),
      canRefresh: basis?.refresh !== undefined || this.cookieMayRefresh,
    };
    return this.step(RULES.find(([holds]) => holds(facts))![1], facts, scope);
  }

  /** Renewing `replacing` can only log in: it has no refresh token (nor a cookie's) to send, or one found refused. */
  onlyLogin(replacing: TokenPair | undefined): boolean {
    return replacing?.refresh !== undefined ? this.refused(replacing.refresh) : !this.cookieMayRefresh;
  }

  /** Uses a pair obtained elsewhere (`setTokens`), and has it written in `turn`, as a renewal would. */
  adopt(pair: TokenPair, turn: StoreTurn, epoch: number): PairInUse {
    this.parts.guards.cookie.cleared();
    return this.calls.keep(pair, turn, epoch);
  }

  /** The pair a token answer (or a `setTokens` argument) stands for, its expiry read as an answer's. */
  pairFrom(parsed: ParsedTokens, previousRefresh: string | undefined): TokenPair {
    return this.calls.pairFrom(parsed, previousRefresh);
  }

  /** Uses a pair another holder wrote to the store, unless logout() came in between. */
  take(pair: TokenPair, epoch: number): PairInUse {
    const { pairs } = this.parts;
    if (epoch !== pairs.epoch) throw loggedOutMeanwhile();
    const current = pairs.current;
    return pair.access === current?.pair.access ? current : pairs.use(pair, true);
  }

  private async step(step: Step, facts: Facts, scope: TurnScope): Promise<PairInUse> {
    const { stored } = facts;
    const basis = stored ?? scope.replacing;
    switch (step) {
      case 'signed-out':
        throw this.parts.guards.signedOut.refuse({ operation: 'login', mode: 'auto', typed: false })!;
      case 'take-stored':
        return this.take(stored!, scope.epoch);
      case 'go-alone':
        return this.goAlone(scope);
      case 'log-in-store-lost':
        return this.calls.logIn('store-lost', scope);
      case 'drop-and-log-in':
        await this.discard(basis, scope, stored);
        return this.calls.logIn('refresh-rejected', scope);
      case 'log-in':
        return this.calls.logIn(scope.reason, scope);
      case 'refresh':
        return this.refreshOrLogIn(basis, scope);
    }
  }

  /** Refreshes with `basis`; a refused refresh token: the pair another holder stored meanwhile, else a login. */
  private async refreshOrLogIn(basis: TokenPair | undefined, scope: TurnScope): Promise<PairInUse> {
    try {
      return await this.calls.refresh(basis, scope);
    } catch (error) {
      if (!hasCode(error, 'REFRESH_REJECTED')) throw error;
      // Rotated refresh tokens work once: another holder may have spent this one and stored its successor, which
      // this holder may have heard of meanwhile even where the store cannot be read (it failed this renewal).
      const { link, pairs } = this.parts;
      const again = (await link.read(scope.turn)) ?? pairs.current?.pair ?? null;
      if (again && pairs.accepts(again, { replacing: basis, deadRefresh: basis?.refresh, renewing: true }))
        return this.take(again, scope.epoch);
      // Otherwise the pair is dead: its access token was refused or is expiring, its refresh token is refused.
      // Forget it, so that if the login fails too, later requests do not send it again while they wait.
      await this.discard(basis, scope, again);
      return this.calls.logIn('refresh-rejected', scope);
    }
  }

  /**
   * Renews without the store: with the refresh token of a pair this holder got alone before (nobody else holds it),
   * else with one login. Said once per outage.
   */
  private async goAlone(scope: TurnScope): Promise<PairInUse> {
    const { link, reports, pairs } = this.parts;
    const outage = link.outage;
    if (!outage?.said.has('alone')) reports.wentAlone();
    outage?.said.add('alone');
    const own = pairs.current;
    const refresh = own?.alone ? own.pair.refresh : undefined;
    if (refresh !== undefined && !this.refused(refresh)) {
      try {
        return await this.calls.refresh(own!.pair, scope);
      } catch (error) {
        if (!hasCode(error, 'REFRESH_REJECTED')) throw error;
      }
    }
    return this.calls.logIn(scope.reason, scope);
  }

  /** Drops `dead` where it is: in use here, and in the store (`stored`, as this turn read it). */
  private async discard(dead: TokenPair | undefined, scope: TurnScope, stored: TokenPair | null): Promise<void> {
    if (!dead) return;
    const { pairs } = this.parts;
    if (pairs.current?.pair.access === dead.access) pairs.drop();
    if (stored?.access === dead.access) await scope.turn.clear();
  }

  /** The token call refused `refreshToken` before, for this holder or another. */
  private refused(refreshToken: string): boolean {
    return this.parts.guards.refusedRefresh.has(refreshToken);
  }

  /** The refresh token is the browser's, in a cookie, and the token call has not refused it. */
  private get cookieMayRefresh(): boolean {
    return this.parts.options.refreshTokenInCookie && !this.parts.guards.cookie.active;
  }
}
