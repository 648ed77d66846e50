// The renewals of one account: where they stand, one shared renewal at a time, and its turns at the store.
import type { InternalAxiosRequestConfig } from 'axios';
import { abortable } from '../../support/abort.js';
import { isTokenAuthError } from '../../contract/errors.js';
import type { Credentials } from '../../contract/calls.js';
import type { RenewalReason } from '../../contract/handle.js';
import type { TokenPair } from '../../contract/store.js';
import type { ResolvedOptions } from '../../options/defaults.js';
import type { Guards } from '../guards/guards.js';
import type { PairInUse } from '../pairs.js';
import type { SharedRecord } from '../store/shared-record.js';
import type { SignInState } from '../sign-in-state.js';
import { leaseLapsedTooOften, storeUnavailable } from '../store/outage.js';
import { StoreTurn, TurnLost } from '../store/turn.js';
import { StoreWord } from './store-word.js';
import type { Mode } from './calls.js';
import { TurnWork } from './turn-work.js';
import type { TurnWorkParts } from './calls.js';

export type { Mode };

/**
 * Where the renewals of one account stand. What moves them, in one table (a request "needs a pair" when none is in
 * use or the one in use is known to be expired; a "refusal" is a 401 of the pair in use that the replay rules let
 * renew, see request/refusal.ts):
 *
 * | from       | what happens                                   | to                                              |
 * | ---------- | ---------------------------------------------- | ----------------------------------------------- |
 * | idle       | a request needs a pair; a refusal; the user's  | renewing (reason `no-token`, `expired`,         |
 * | or failed  | `login()` or `refresh()`                       | `rejected` or `manual`)                         |
 * | renewing   | a request needs a pair; a refusal              | renewing: it waits for the same renewal (one    |
 * |            |                                                | more of its `waiters`)                          |
 * | renewing   | the renewal brings a pair (its own, or one     | idle, the pair in use (generation + 1)          |
 * |            | another holder stored)                         |                                                 |
 * | renewing   | the renewal fails                              | failed, with its error (`failures` + 1)         |
 * | failed     | a late refusal of a request sent before it     | failed: the request shares that error           |
 * | any        | `logout()`                                     | the pair dropped, `epoch` + 1: renewals under   |
 * |            |                                                | way end with LOGGED_OUT                         |
 *
 * One renewal: the store's word first (store-word.ts: its lock, tried again while the store is down, or the pair
 * another holder stored meanwhile), then its work in that turn (turn-work.ts, its rules on one screen), and a turn
 * again when the turn was lost before a call could go (the lock's lease lapsed, or the store stopped answering).
 */
export type RenewalState =
  | { readonly name: 'idle' }
  | {
      readonly name: 'renewing';
      readonly reason: RenewalReason;
      readonly renewal: Promise<PairInUse>;
      /** The callers that waited for it so far, which its calls report. */
      readonly waiters: Waiters;
    }
  | { readonly name: 'failed'; readonly error: unknown };

/** How many callers waited for one renewal: requests, `accessToken()`, `login()` and `refresh()` calls. */
interface Waiters {
  count: number;
  /** Those of them still waiting that wait until it ends (no abort, no timeout): counted off together as it ends. */
  untilEnd: number;
}

/** How many turns in a row a renewal takes after one was lost before a call could go. */
const TURNS_TRIED = 3;

const ignore = (): void => {};

/** What the renewals of an account are built from: its parts, built before them. */
export interface RenewalParts extends TurnWorkParts {
  readonly options: ResolvedOptions;
  readonly guards: Guards;
  readonly record: SharedRecord;
  readonly signIn: SignInState;
}

/**
 * The renewals of one account: the state machine above. A renewal is one shared promise: the first caller starts it,
 * everyone else awaits it, and everyone gets its outcome.
 */
export class RenewalMachine {
  private state: RenewalState = { name: 'idle' };
  private failureCount = 0;
  readonly work: TurnWork;
  readonly word: StoreWord;

  constructor(private readonly parts: RenewalParts) {
    this.work = new TurnWork(parts);
    this.word = new StoreWord(parts);
  }

  /** The renewal under way, if any. */
  get renewal(): Promise<PairInUse> | undefined {
    return this.state.name === 'renewing' ? this.state.renewal : undefined;
  }

  /** How many renewals failed so far: a request's ticket notes it as it leaves. */
  get failures(): number {
    return this.failureCount;
  }

  /**
   * The pair a request may still carry while the renewal under way waits for a store that is down: the pair in use,
   * when the renewal was due to its expiry margin (not to a refusal) and the token has not expired yet.
   */
  heldThroughOutage(): PairInUse | undefined {
    const state = this.state;
    return state.name === 'renewing' && state.reason === 'expired' ? this.word.heldThroughOutage() : undefined;
  }

  /** The error a late refusal shares: the last renewal's, when it failed after `failures` of them had. */
  failedSince(failures: number): { error: unknown } | undefined {
    return this.state.name === 'failed' && failures !== this.failureCount ? this.state : undefined;
  }

  /** Starts a renewal for `reason`, or joins the one under way. */
  renew(reason: RenewalReason, mode: Mode = 'auto', credentials?: Credentials): Promise<PairInUse> {
    if (this.state.name === 'renewing') return this.state.renewal;
    const waiters: Waiters = { count: 0, untilEnd: 0 };
    const replacing = this.parts.pairs.current?.pair;
    const start = { reason, mode, replacing, credentials, epoch: this.parts.pairs.epoch, waiting: () => waiters.count };
    // Begun once the state says `renewing`, so that what the renewal tells (a store known to be down) comes after it.
    const renewal = Promise.resolve().then(() => this.run(start));
    this.state = { name: 'renewing', reason, renewal, waiters };
    this.parts.signIn.renewalStarted();
    const { reports } = this.parts;
    // Waiters may all have been aborted: the shared promise must not become an unhandled rejection.
    renewal.then(
      () => {
        reports.stoppedWaiting(waiters.untilEnd);
        this.settle(renewal, { name: 'idle' });
      },
      (error: unknown) => {
        reports.stoppedWaiting(waiters.untilEnd);
        this.failureCount += 1;
        this.settle(renewal, { name: 'failed', error });
      },
    );
    return renewal;
  }

  /**
   * Waits for `renewal` (the one under way) as one of its waiters, counted in `stats().waiting` until it ends or
   * `config`'s request is aborted or out of time.
   */
  wait(renewal: Promise<PairInUse>, config?: InternalAxiosRequestConfig): Promise<PairInUse> {
    const state = this.state;
    const { reports, options } = this.parts;
    const waiters = state.name === 'renewing' && state.renewal === renewal ? state.waiters : undefined;
    if (waiters) waiters.count += 1;
    // Due to the expiry margin only: the pair in use goes on if the store turns out to be down.
    const source =
      waiters && state.name === 'renewing' && state.reason === 'expired'
        ? Promise.race([renewal, this.word.held()])
        : renewal;
    // A request whose `timeout` passes while the store is down says so, with the store's error.
    const waited = config ? abortable(source, config, { clock: options.clock, timedOut: this.word.timedOut }) : source;
    // Thousands of requests may wait at once: one that waits until the renewal ends is the renewal itself, counted off
    // with the others as it ends, with nothing of its own to hold. One that may stop sooner counts itself off.
    reports.startedWaiting();
    if (waiters && waited === renewal) {
      waiters.untilEnd += 1;
      return renewal;
    }
    return waited.finally(reports.stoppedOne);
  }

  /** Resolves once no renewal is under way. */
  async idle(): Promise<void> {
    while (this.renewal) await this.renewal.catch(ignore);
  }

  private settle(renewal: Promise<PairInUse>, next: RenewalState): void {
    if (this.state.name !== 'renewing' || this.state.renewal !== renewal) return;
    this.state = next;
    this.word.done();
    // A renewal that a logout ended failed for no reason a UI should show.
    const shown = next.name === 'failed' && isTokenAuthError(next.error) && next.error.code !== 'LOGGED_OUT';
    this.parts.signIn.renewalEnded(shown ? next.error : undefined);
  }

  /** One renewal: the store's word, then its work in that turn; a turn again when one is lost before a call. */
  private async run(start: {
    reason: RenewalReason;
    mode: Mode;
    replacing: TokenPair | undefined;
    credentials: Credentials | undefined;
    epoch: number;
    waiting: () => number;
  }): Promise<PairInUse> {
    const { mode, replacing, epoch } = start;
    const halted = () => this.halted(replacing);
    // A known login pause, and only a login would do: if the record still says so, and the store holds no pair this
    // holder missed (a store that tells nobody), fail with it, with no turn at the lock (for a fleet, N turns).
    if (mode === 'auto' && this.pausedWithoutTurn(replacing)) {
      const halt = await halted();
      if (halt) {
        const stored = await this.parts.link.peek();
        if (stored && this.parts.pairs.accepts(stored, { replacing, renewing: true }))
          return this.work.take(stored, epoch);
        throw halt;
      }
    }
    for (let turns = 1; ; turns += 1) {
      const turn = await this.word.turn({ mode, replacing, epoch, halted });
      // Another holder's pair arrived while this one waited for the lock.
      if (!(turn instanceof StoreTurn)) return this.work.take(turn.pair, epoch);
      try {
        return await this.parts.record.within(turn, () => this.work.run({ ...start, turn }));
      } catch (error) {
        // The turn was lost before a call could go: the lock's lease lapsed (this holder was frozen, or stalled), and
        // another holder may have renewed and spent the refresh token this one read; or the store stopped answering
        // under the lock. Nothing was sent: a turn again, which waits for the store's word and reads it anew.
        if (!(error instanceof TurnLost)) throw error;
        if (turns >= TURNS_TRIED)
          throw error.lapsed
            ? leaseLapsedTooOften(TURNS_TRIED)
            : storeUnavailable(error.cause, `it stopped answering under its lock, in each of ${TURNS_TRIED} turns`);
      } finally {
        // The waiting requests have their pair: the writes and the release go on without them.
        void turn.end();
      }
    }
  }

  /** A login pause this holder knows of, when only a login would renew `replacing`. */
  private pausedWithoutTurn(replacing: TokenPair | undefined): boolean {
    return this.work.onlyLogin(replacing) && this.parts.guards.pause.refuse(AUTOMATIC_LOGIN) !== undefined;
  }

  /**
   * The login pause that stops a renewal of the client rule replacing `replacing`, when only a login would do, by the
   * account's record as the store has it now (read without the lock).
   */
  private async halted(replacing: TokenPair | undefined): Promise<Error | undefined> {
    await this.parts.record.consult();
    return this.work.onlyLogin(replacing) ? this.parts.guards.pause.refuse(AUTOMATIC_LOGIN) : undefined;
  }
}

/** A login of the client rule, as the login pause is asked about it. */
const AUTOMATIC_LOGIN = { operation: 'login', mode: 'auto', typed: false } as const;
