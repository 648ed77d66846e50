// One renewal, from its start to the pair it brings: at each moment it gathers the facts, asks `decide` (decide.ts),
// and takes the step. It owns its turn at the store: it waits for it (the link's TurnWait, through an outage where the
// store is shared), reads and writes in it, and ends it; the store's side runs nothing of the renewal's.
import { hasCode } from '../../contract/errors.js';
import type { Credentials } from '../../contract/calls.js';
import type { RenewalReason } from '../../contract/handle.js';
import type { TokenPair } from '../../contract/store.js';
import type { Turn, TurnWait } from '../link.js';
import { TurnLost } from '../link.js';
import type { PairInUse } from '../pairs.js';
import type { SignInState } from '../sign-in-state.js';
import type { CallParts, Mode, RenewalCalls, TurnScope } from './calls.js';
import { decide } from './decide.js';

/** What a renewal is started for, and who waits for it. */
export interface RenewalStart {
  readonly reason: RenewalReason;
  readonly mode: Mode;
  /** The pair in use as it started, which it replaces (refused, or expired). */
  readonly replacing: TokenPair | undefined;
  /** Credentials `auth.login()` was given for this renewal alone. */
  readonly credentials: Credentials | undefined;
  /** The logout epoch it started in. */
  readonly epoch: number;
  /** How many callers waited for it so far. */
  readonly waiting: () => number;
}

/** What a renewal needs of the account: the calls' parts, and the sign-in state its account's machine tells. */
export interface RenewalParts extends CallParts {
  readonly signIn: SignInState;
}

/** One renewal under way. */
export class Renewal {
  /** Its wait for its turns at the store, which the requests waiting for it ask where it stands. */
  readonly wait: TurnWait;

  constructor(
    private readonly parts: RenewalParts,
    private readonly calls: RenewalCalls,
    private readonly start: RenewalStart,
  ) {
    const { mode, replacing, epoch } = start;
    this.wait = parts.link.turnWait({ mode, replacing, epoch, halted: this.#halted });
  }

  /** The renewal: its start, then its turns, a turn again when one was lost before a call could go. */
  async run(): Promise<PairInUse> {
    const taken = await this.#begin();
    if (taken) return taken;
    for (let turns = 1; ; turns += 1) {
      const turn = await this.wait.next();
      if ('arrived' in turn) return this.calls.take(turn.arrived.pair, this.start.epoch);
      try {
        return await this.#inTurn(turn);
      } catch (error) {
        // Nothing was sent: a turn again, which waits for the store's word and reads it anew.
        this.wait.lost(error, turns);
      } finally {
        // The waiting requests have their pair: the writes and the release go on without them.
        void turn.end();
      }
    }
  }

  /** Before the store's word: a known login pause ends it here when only a login would do, with no turn at the lock. */
  async #begin(): Promise<PairInUse | undefined> {
    const { guards, link, pairs } = this.parts;
    const { mode, replacing, epoch } = this.start;
    let consulted = false;
    let stored: TokenPair | null = null;
    let peeked: 'unread' | 'none' | 'accepted' = 'unread';
    for (;;) {
      const paused = guards.paused();
      const onlyLogin = this.#onlyLogin(replacing);
      const facts = {
        at: 'start',
        auto: mode === 'auto',
        onlyLogin,
        paused: !!paused,
        consulted,
        stored: peeked,
      } as const;
      switch (decide(facts)) {
        case 'take-turn':
          return undefined;
        case 'consult':
          await link.consult();
          consulted = true;
          break;
        case 'peek':
          stored = await link.peek();
          peeked = stored && pairs.accepts(stored, { replacing, renewing: true }) ? 'accepted' : 'none';
          break;
        case 'take-stored':
          return this.calls.take(stored!, epoch);
        case 'fail-paused':
          throw paused!;
      }
    }
  }

  /**
   * Whether a login pause another holder wrote meanwhile stops this renewal, when only a login would do: by the
   * account's record as the store has it now (read without the lock), the pause's error.
   */
  readonly #halted = async (): Promise<Error | undefined> => {
    const { link, guards } = this.parts;
    await link.consult();
    return this.#onlyLogin(this.start.replacing) ? guards.paused() : undefined;
  };

  /** The renewal's work in its turn, with the account's record as the store has it under the lock. */
  async #inTurn(turn: Turn): Promise<PairInUse> {
    const { pairs, link, guards } = this.parts;
    const { mode, replacing, epoch, reason } = this.start;
    await turn.openRecord();
    try {
      const stored = await turn.read();
      const basis = stored ?? replacing;
      const facts = {
        at: 'turn',
        mode,
        silentUnderLock: turn.lockTaken && turn.storeSilent,
        signedOut: guards.signedOut,
        storedAccepted: stored !== null && pairs.accepts(stored, { replacing, renewing: true }),
        lockMissed: turn.lockMissed,
        storeLost: !stored && replacing !== undefined && !pairs.current?.alone && link.shares,
        refusedBefore: this.#refusedBefore(basis),
        canRefresh: this.#canRefresh(basis),
      } as const;
      const scope: TurnScope = { ...this.start, turn };
      switch (decide(facts)) {
        case 'turn-lost':
          throw new TurnLost({ cause: link.outage?.cause });
        case 'signed-out':
          throw guards.signedOutError();
        case 'take-stored':
          return this.calls.take(stored!, epoch);
        case 'go-alone':
          return await this.#goAlone(scope);
        case 'log-in-store-lost':
          return await this.calls.logIn('store-lost', scope);
        case 'drop-and-log-in':
          await this.#discard(basis, scope, stored);
          return await this.calls.logIn('refresh-rejected', scope);
        case 'log-in':
          return await this.calls.logIn(reason, scope);
        case 'refresh':
          return await this.#refreshOrLogIn(basis, scope);
      }
    } finally {
      turn.closeRecord();
    }
  }

  /** Refreshes with `basis`; a refused refresh token: the pair another holder stored meanwhile, else a login. */
  async #refreshOrLogIn(basis: TokenPair | undefined, scope: TurnScope): Promise<PairInUse> {
    try {
      return await this.calls.refresh(basis, scope);
    } catch (error) {
      if (!hasCode(error, 'REFRESH_REJECTED')) throw error;
      // What another holder stored, which this holder may have heard of even where the store cannot be read now.
      const { pairs } = this.parts;
      const again = (await scope.turn.read()) ?? pairs.current?.pair ?? null;
      const newerAccepted =
        again !== null && pairs.accepts(again, { replacing: basis, deadRefresh: basis?.refresh, renewing: true });
      const { leaseLost } = scope.turn;
      switch (decide({ at: 'refresh-refused', alone: false, newerAccepted, leaseLost })) {
        case 'take-stored':
          return this.calls.take(again!, scope.epoch);
        case 'turn-lost':
          throw new TurnLost({ lapsed: true });
        default:
          await this.#discard(basis, scope, again);
          return this.calls.logIn('refresh-rejected', scope);
      }
    }
  }

  /**
   * Renews without the store: with the refresh token of a pair this holder got alone before (nobody else holds it),
   * else with one login. Said once per outage.
   */
  async #goAlone(scope: TurnScope): Promise<PairInUse> {
    const { link, pairs } = this.parts;
    link.goesAlone();
    const own = pairs.current;
    const refresh = own?.alone ? own.pair.refresh : undefined;
    const ownRefreshable = refresh !== undefined && !this.#refusedBefore(own!.pair) && this.#canRefresh(own!.pair);
    if (decide({ at: 'alone', ownRefreshable }) === 'refresh-own') {
      try {
        return await this.calls.refresh(own!.pair, scope);
      } catch (error) {
        if (!hasCode(error, 'REFRESH_REJECTED')) throw error;
        decide({ at: 'refresh-refused', alone: true, newerAccepted: false, leaseLost: false });
      }
    }
    return this.calls.logIn(scope.reason, scope);
  }

  /** Drops `dead` where it is: in use here, and in the store (`stored`, as this turn read it). */
  async #discard(dead: TokenPair | undefined, scope: TurnScope, stored: TokenPair | null): Promise<void> {
    if (!dead) return;
    const { pairs } = this.parts;
    if (pairs.current?.pair.access === dead.access) pairs.drop();
    if (stored?.access === dead.access) await scope.turn.clear();
  }

  /** Renewing `replacing` can only log in: nothing to refresh with, or its refresh token refused before. */
  #onlyLogin(replacing: TokenPair | undefined): boolean {
    return this.#refusedBefore(replacing) || !this.#canRefresh(replacing);
  }

  /** The token call refused `pair`'s refresh token before, for this holder or another. */
  #refusedBefore(pair: TokenPair | undefined): boolean {
    return pair?.refresh !== undefined && this.parts.guards.refusedBefore(pair.refresh);
  }

  /**
   * `pair` (or the cookie, without one) can be refreshed: the scheme can use it, and it has a refresh token, or the
   * refresh token is the browser's, in a cookie the token call has not refused.
   */
  #canRefresh(pair: TokenPair | undefined): boolean {
    const { options, guards } = this.parts;
    const cookie = options.refreshTokenInCookie && !guards.cookieRefused;
    return options.scheme.usable(pair) && (pair?.refresh !== undefined || cookie);
  }
}
