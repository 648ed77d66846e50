// The store's word, which a renewal needs before it generates a token: its lock, or the pair another holder stored. A
// store that is down is asked again, with back-off, for as long as `whenStoreDown` lets a renewal wait; meanwhile the
// renewal says so (getState(), a request out of time, the waiters of a token that has not expired yet).
import type { InternalAxiosRequestConfig } from 'axios';
import type { TimedOut } from '../../support/abort.js';
import { settle } from '../../support/deadline.js';
import type { TokenPair } from '../../contract/store.js';
import type { ResolvedOptions } from '../../options/defaults.js';
import type { PairInUse, Pairs } from '../pairs.js';
import type { AccountReports } from '../reports.js';
import type { SignInState } from '../sign-in-state.js';
import type { StoreLink } from '../store/link.js';
import { StoreOutageWait, storeUnavailable } from '../store/outage.js';
import { StoreTurn } from '../store/turn.js';
import { loggedOutMeanwhile } from './calls.js';
import type { Mode } from './calls.js';

/** What the store's word needs of the account: its parts, built before it. */
export interface StoreWordParts {
  readonly options: Pick<ResolvedOptions, 'clock' | 'whenStoreDown' | 'storeOutageWaitMs' | 'storeTimeoutMs'>;
  readonly pairs: Pairs;
  readonly link: StoreLink;
  readonly reports: AccountReports;
  readonly signIn: SignInState;
}

/** A renewal's wait for the store's word: for what, replacing which pair, and in which logout epoch. */
export interface WordRequest {
  readonly mode: Mode;
  readonly replacing: TokenPair | undefined;
  readonly epoch: number;
  /** Whether a login pause another holder wrote meanwhile stops the renewal (its error), when only a login would do. */
  readonly halted: () => Promise<Error | undefined>;
}

const ignore = (): void => {};

/** The store's word for the renewals of one account, one renewal at a time (the machine's). */
export class StoreWord {
  /** The renewal under way waits for a store that is down: since when (by `clock`), and the store's error. */
  private down: { since: number; cause: unknown } | undefined;
  /** Its wait, if any: a logout or a pair that arrives cuts it. */
  private wait: StoreOutageWait | undefined;
  /** The try at the store it is making, while it does not know yet whether the store is down. */
  private opening: Promise<unknown> | undefined;
  /** For the waiters of a renewal due to the expiry margin: see {@link held}. */
  private heldWhenDown: { promise: Promise<PairInUse>; resolve: (inUse: PairInUse) => void } | undefined;

  constructor(private readonly parts: StoreWordParts) {}

  /** Since when (by `clock`) the renewal under way waits for a store that is down; undefined when it does not. */
  get downSince(): number | undefined {
    return this.down?.since;
  }

  /** The pair in use while the renewal waits for a store that is down, when it has not expired: it may be sent. */
  heldThroughOutage(): PairInUse | undefined {
    return this.down ? this.parts.pairs.stillValid() : undefined;
  }

  /**
   * Resolves with the pair in use once the store is found down, while that pair has not expired: what the waiters of
   * a renewal due to the expiry margin race the renewal with. Only the generation of a token waits for the store.
   */
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

  /** Ends a pause between tries: a logout, or a pair another holder stored, to look at now. */
  cut(): void {
    this.wait?.cut();
  }

  /** The renewal under way ended: nothing of its wait remains. */
  done(): void {
    this.down = undefined;
    this.heldWhenDown = undefined;
  }

  /**
   * What a request says whose `timeout` passed while it waited for the renewal under way: when the renewal waits for a
   * store that is down, or finds it so with the try it is making (given at most `storeTimeoutMs` more),
   * STORE_UNAVAILABLE with the store's error; otherwise nothing, and axios' own timeout error.
   */
  readonly timedOut: TimedOut = async (config: InternalAxiosRequestConfig) => {
    const opening = this.opening;
    if (!this.down && opening)
      await settle(opening, { ms: this.parts.options.storeTimeoutMs, signal: config.signal ?? undefined });
    const down = this.down;
    return down && storeUnavailable(down.cause, `the request's \`timeout\` (${config.timeout} ms) passed first`);
  };

  /**
   * A turn at the store with its word: its lock taken (or a store without one); or the pair another holder stored
   * meanwhile, in use now. A store that is down (the lock missed) is asked again, with back-off, until it answers or
   * the outage wait, counted from the first try, is over ({@link StoreOutageWait}); then `'wait'` fails the renewal
   * with STORE_UNAVAILABLE, having sent nothing, and `'go-alone'` gives the turn with the lock missed, which renews
   * alone (at once, for a holder that already went alone in this outage: its own refresh token is nobody else's).
   */
  async turn(request: WordRequest): Promise<StoreTurn | PairInUse> {
    const { whenStoreDown, storeOutageWaitMs } = this.parts.options;
    const wait = (this.wait = new StoreOutageWait(whenStoreDown, storeOutageWaitMs));
    try {
      // Known to be down: the renewal waits for it from the start (getState() says so, a request out of time says why).
      const known = this.parts.link.outage;
      if (known) this.foundDown(known.cause);
      for (;;) {
        const turn = await this.open(request);
        if (!(turn instanceof StoreTurn) || !turn.lockMissed) return this.answered(turn);
        this.foundDown(turn.missedBecause);
        const alone = whenStoreDown === 'go-alone' && this.parts.link.outage?.said.has('alone');
        if (wait.over || alone) {
          if (whenStoreDown === 'go-alone') return turn;
          void turn.end();
          throw storeUnavailable(
            turn.missedBecause,
            `it did not answer within \`storeOutageWaitMs\` (${storeOutageWaitMs} ms)`,
          );
        }
        void turn.end();
        await wait.pause();
        if (request.epoch !== this.parts.pairs.epoch) throw loggedOutMeanwhile();
        const arrived = this.arrived(request);
        if (arrived) return this.answered(arrived);
      }
    } finally {
      this.opening = undefined;
      this.wait = undefined;
      wait.stop();
    }
  }

  /** One try at a turn: for a renewal of the client rule, one that a pair another holder stores meanwhile ends. */
  private async open({ mode, replacing, halted }: WordRequest): Promise<StoreTurn | PairInUse> {
    const { link } = this.parts;
    const opening = mode === 'auto' ? link.turnForRenewal(replacing, halted) : link.turn();
    this.opening = opening;
    try {
      return await opening;
    } finally {
      this.opening = undefined;
    }
  }

  /** A pair another holder stored reached this holder between tries (pub/sub, a file event). */
  private arrived({ mode, replacing }: WordRequest): PairInUse | undefined {
    const { pairs } = this.parts;
    const current = mode === 'auto' ? pairs.current : null;
    return current && current.pair.access !== replacing?.access && !pairs.expired(current) ? current : undefined;
  }

  /** The renewal under way found the store down: said once per outage, and shown by `getState()`. */
  private foundDown(cause: unknown): void {
    const { link, reports, options, signIn } = this.parts;
    const outage = link.outage;
    if (outage && !outage.said.has('down')) {
      outage.said.add('down');
      reports.storeDown(options.whenStoreDown, options.storeOutageWaitMs);
    }
    if (this.down) return;
    this.down = { since: options.clock(), cause };
    const held = this.heldThroughOutage();
    if (held) this.heldWhenDown?.resolve(held);
    signIn.storeDown(this.down.since);
  }

  /** The store gave its word (its lock, or another holder's pair). */
  private answered<T extends StoreTurn | PairInUse>(turn: T): T {
    if (this.down) {
      this.down = undefined;
      this.parts.signIn.storeDown(undefined);
    }
    return turn;
  }
}
