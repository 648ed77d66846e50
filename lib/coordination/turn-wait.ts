// One renewal's wait for its turns at a shared store: the store's word (its lock, or the pair another holder stored)
// before a token is generated. A store that is down is asked again, with back-off, for as long as `whenStoreDown` lets
// the renewal wait; meanwhile the renewal says so (getState(), a request out of time, the waiters of a token that has
// not expired yet). What to do at each try is decided in the core (account/renewal/decide.ts).
import type { InternalAxiosRequestConfig } from 'axios';
import type { TimedOut } from '../support/abort.js';
import { settle } from '../support/deadline.js';
import type { TurnRequest, TurnWait } from '../account/link.js';
import { TurnLost } from '../account/link.js';
import { leaseLapsedTooOften, storeUnavailable } from './outage-errors.js';
import type { PairInUse, Pairs } from '../account/pairs.js';
import { decide, TURNS_TRIED } from '../account/renewal/decide.js';
import { loggedOutMeanwhile } from '../account/renewal/calls.js';
import type { SignInState } from '../account/sign-in-state.js';
import type { ResolvedOptions } from '../options/defaults.js';
import type { StoreCalls } from './calls.js';
import { StoreOutageWait } from './outage.js';
import type { StoreTurn } from './turn.js';

/** What the wait needs of the link and the account. */
export interface TurnWaitParts {
  readonly options: Pick<ResolvedOptions, 'clock' | 'whenStoreDown' | 'storeOutageWaitMs' | 'storeTimeoutMs'>;
  readonly calls: StoreCalls;
  readonly pairs: Pairs;
  readonly signIn: SignInState;
  /** A try at a turn: for a renewal of the client rule, one that a pair another holder stores meanwhile ends. */
  readonly tryTurn: (request: TurnRequest) => Promise<StoreTurn | { arrived: PairInUse } | { gone: true }>;
  /** A turn for what the user asked for. */
  readonly turn: () => Promise<StoreTurn>;
  /** Tells the wait under way, if any, of a pair another holder stored: it ends a pause. */
  readonly waiting: (wait: StoreOutageWait | undefined) => void;
}

const ignore = (): void => {};

export class StoreTurnWait implements TurnWait {
  /** It waits for a store that is down: since when (by `clock`), and the store's error. */
  private down: { since: number; cause: unknown } | undefined;
  /** For the waiters of a renewal due to the expiry margin: see {@link held}. */
  private heldWhenDown: { promise: Promise<PairInUse>; resolve: (inUse: PairInUse) => void } | undefined;
  /** The try at the store it is making, while it does not know yet whether the store is down. */
  private opening: Promise<unknown> | undefined;
  /** Its wait for a store that is down, while it waits. */
  private wait: StoreOutageWait | undefined;

  constructor(
    private readonly parts: TurnWaitParts,
    private readonly request: TurnRequest,
  ) {}

  heldThroughOutage(): PairInUse | undefined {
    return this.down ? this.parts.pairs.stillValid() : undefined;
  }

  held(): Promise<PairInUse> {
    if (!this.heldWhenDown) {
      let resolve: (inUse: PairInUse) => void = ignore;
      const promise = new Promise<PairInUse>((settled) => (resolve = settled));
      this.heldWhenDown = { promise, resolve };
      const held = this.heldThroughOutage();
      if (held) resolve(held);
    }
    return this.heldWhenDown.promise;
  }

  /**
   * When it waits for a store that is down, or finds it so with the try it is making (given at most `storeTimeoutMs`
   * more), STORE_UNAVAILABLE with the store's error; otherwise nothing, and axios' own timeout error.
   */
  readonly timedOut: TimedOut = async (config: InternalAxiosRequestConfig) => {
    const opening = this.opening;
    if (!this.down && opening)
      await settle(opening, { ms: this.parts.options.storeTimeoutMs, signal: config.signal ?? undefined });
    const down = this.down;
    return down && storeUnavailable(down.cause, `the request's \`timeout\` (${config.timeout} ms) passed first`);
  };

  wake(): void {
    this.wait?.wake();
  }

  /**
   * The store's word: a turn under its lock (or a store without one); or the pair another holder stored meanwhile, in
   * use now. A store that is down (the lock missed) is asked again, with back-off, until it answers or the outage wait
   * (counted from the first try) is over; then `'wait'` fails the renewal with STORE_UNAVAILABLE, having sent nothing,
   * and `'go-alone'` gives the turn with the lock missed, which renews alone (at once, for a holder that already went
   * alone in this outage: its own refresh token is nobody else's).
   */
  async next(): Promise<StoreTurn | { arrived: PairInUse }> {
    const { options, calls, pairs } = this.parts;
    const wait = (this.wait = new StoreOutageWait(options));
    this.parts.waiting(wait);
    try {
      // Known to be down: the renewal waits for it from the start (getState() says so, a request out of time says why).
      const known = calls.outage;
      if (known) this.foundDown(known.cause);
      for (;;) {
        const tried = await this.try();
        const got =
          'confirmLease' in tried ? (tried.lockMissed ? 'missed' : 'turn') : 'arrived' in tried ? 'arrived' : 'gone';
        if (got === 'missed') this.foundDown((tried as StoreTurn).missedBecause);
        const facts = {
          at: 'word',
          got,
          policy: options.whenStoreDown,
          waitOver: wait.over,
          aloneThisOutage: calls.outage?.alone ?? false,
        } as const;
        switch (decide(facts)) {
          case 'use-turn':
          case 'take-arrived':
            return this.answered(tried as StoreTurn | { arrived: PairInUse });
          case 'try-again':
            continue;
          case 'go-alone':
            return tried as StoreTurn;
          case 'fail-unavailable':
            void (tried as StoreTurn).end();
            throw storeUnavailable(
              (tried as StoreTurn).missedBecause,
              `it did not answer within \`storeOutageWaitMs\` (${options.storeOutageWaitMs} ms)`,
            );
          case 'pause':
            void (tried as StoreTurn).end();
        }
        await wait.pause();
        const arrived = this.arrived();
        switch (
          decide({ at: 'pause', loggedOut: this.request.epoch !== pairs.epoch, arrived: arrived !== undefined })
        ) {
          case 'logged-out':
            throw loggedOutMeanwhile();
          case 'take-arrived':
            return this.answered({ arrived: arrived! });
          case 'try-again':
        }
      }
    } finally {
      this.opening = undefined;
      this.wait = undefined;
      this.parts.waiting(undefined);
      wait.stop();
    }
  }

  lost(error: unknown, turns: number): boolean {
    if (!(error instanceof TurnLost)) throw error;
    switch (decide({ at: 'turn-lost', turns, lapsed: error.lapsed })) {
      case 'take-turn-again':
        return true;
      case 'fail-lapsed':
        throw leaseLapsedTooOften(TURNS_TRIED);
      case 'fail-unavailable':
        throw storeUnavailable(error.cause, `it stopped answering under its lock, in each of ${TURNS_TRIED} turns`);
    }
  }

  /** One try at a turn: for a renewal of the client rule, one that a pair another holder stores meanwhile ends. */
  private async try(): Promise<StoreTurn | { arrived: PairInUse } | { gone: true }> {
    const opening = this.request.mode === 'auto' ? this.parts.tryTurn(this.request) : this.parts.turn();
    this.opening = opening;
    try {
      return await opening;
    } finally {
      this.opening = undefined;
    }
  }

  /** The pair another holder stored that reached this holder while it waited: valid, and not the one it replaces. */
  private arrived(): PairInUse | undefined {
    const { pairs } = this.parts;
    const { mode, replacing } = this.request;
    const current = mode === 'auto' ? pairs.current : null;
    return current && current.pair.access !== replacing?.access && !pairs.expired(current) ? current : undefined;
  }

  /** The renewal found the store down: said once per outage, and shown by `getState()`. */
  private foundDown(cause: unknown): void {
    const { calls, options, signIn } = this.parts;
    calls.outage?.foundDown();
    if (this.down) return;
    this.down = { since: options.clock(), cause };
    const held = this.heldThroughOutage();
    if (held) this.heldWhenDown?.resolve(held);
    signIn.storeDown(this.down.since);
  }

  /** The store gave its word (its lock, or another holder's pair). */
  private answered<T>(answer: T): T {
    if (this.down) {
      this.down = undefined;
      this.parts.signIn.storeDown(undefined);
    }
    return answer;
  }
}
