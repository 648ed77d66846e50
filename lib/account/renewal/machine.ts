// The renewals of one account: where they stand (the MOVES of decide.ts, run here), one shared renewal at a time, and
// its waiters.
import type { InternalAxiosRequestConfig } from 'axios';
import { abortable } from '../../support/abort.js';
import { isTokenAuthError } from '../../contract/errors.js';
import type { Credentials } from '../../contract/calls.js';
import type { RenewalReason } from '../../contract/handle.js';
import type { PairInUse } from '../pairs.js';
import { RenewalCalls } from './calls.js';
import type { Mode } from './calls.js';
import { move } from './decide.js';
import type { RenewalEvent, RenewalStateName } from './decide.js';
import { Renewal } from './run.js';
import type { RenewalParts } from './run.js';

export type { Mode };

/** Where the renewals of one account stand: a state of MOVES (decide.ts), with what each state holds. */
export type RenewalState =
  | { readonly name: 'idle' }
  | {
      readonly name: 'renewing';
      readonly reason: RenewalReason;
      readonly promise: Promise<PairInUse>;
      readonly renewal: Renewal;
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

const ignore = (): void => {};

/**
 * The renewals of one account. A renewal is one shared promise: the first caller starts it, everyone else awaits it,
 * and everyone gets its outcome.
 */
export class RenewalMachine {
  private state: RenewalState = { name: 'idle' };
  private failureCount = 0;
  readonly calls: RenewalCalls;

  constructor(private readonly parts: RenewalParts) {
    this.calls = new RenewalCalls(parts);
  }

  /** The renewal under way, if any. */
  get renewal(): Promise<PairInUse> | undefined {
    return this.state.name === 'renewing' ? this.state.promise : undefined;
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
    return state.name === 'renewing' && state.reason === 'expired' ? state.renewal.wait.heldThroughOutage() : undefined;
  }

  /** The error a late refusal shares: the last renewal's, when it failed after `failures` of them had. */
  failedSince(failures: number): { error: unknown } | undefined {
    return this.state.name === 'failed' && failures !== this.failureCount ? this.state : undefined;
  }

  /** Starts a renewal for `reason`, or joins the one under way. */
  renew(reason: RenewalReason, mode: Mode = 'auto', credentials?: Credentials): Promise<PairInUse> {
    const state = this.state;
    const to = move(state.name, 'renew');
    if (state.name === 'renewing') return state.promise;
    const waiters: Waiters = { count: 0, untilEnd: 0 };
    const { pairs, signIn, reports } = this.parts;
    const start = {
      reason,
      mode,
      replacing: pairs.current?.pair,
      credentials,
      epoch: pairs.epoch,
      waiting: () => waiters.count,
    };
    const renewal = new Renewal(this.parts, this.calls, start);
    // Begun once the state says `renewing`, so that what the renewal tells (a store known to be down) comes after it.
    const promise = Promise.resolve().then(() => renewal.run());
    this.state = { name: to as 'renewing', reason, promise, renewal, waiters };
    signIn.renewalStarted();
    // Waiters may all have been aborted: the shared promise must not become an unhandled rejection.
    promise.then(
      () => {
        reports.stoppedWaiting(waiters.untilEnd);
        this.settle(promise, 'succeed');
      },
      (error: unknown) => {
        reports.stoppedWaiting(waiters.untilEnd);
        this.failureCount += 1;
        this.settle(promise, 'fail', error);
      },
    );
    return promise;
  }

  /**
   * Waits for `promise` (the renewal under way) as one of its waiters, counted in `stats().waiting` until it ends or
   * `config`'s request is aborted or out of time.
   */
  wait(promise: Promise<PairInUse>, config?: InternalAxiosRequestConfig): Promise<PairInUse> {
    const state = this.state;
    const { reports, options } = this.parts;
    const current = state.name === 'renewing' && state.promise === promise ? state : undefined;
    if (current) current.waiters.count += 1;
    // Due to the expiry margin only: the pair in use goes on if the store turns out to be down.
    const source = current?.reason === 'expired' ? Promise.race([promise, current.renewal.wait.held()]) : promise;
    // A request whose `timeout` passes while the store is down says so, with the store's error.
    const timedOut = current?.renewal.wait.timedOut;
    const waited = config ? abortable(source, config, { clock: options.clock, timedOut }) : source;
    // Thousands of requests may wait at once: one that waits until the renewal ends is the renewal itself, counted off
    // with the others as it ends, with nothing of its own to hold. One that may stop sooner counts itself off.
    reports.startedWaiting();
    if (current && waited === promise) {
      current.waiters.untilEnd += 1;
      return promise;
    }
    return waited.finally(reports.stoppedOne);
  }

  /** Resolves once no renewal is under way. */
  async idle(): Promise<void> {
    while (this.renewal) await this.renewal.catch(ignore);
  }

  /** Ends a pause of the renewal under way between tries at a store that is down: a logout, to look at now. */
  wake(): void {
    if (this.state.name === 'renewing') this.state.renewal.wait.wake();
  }

  private settle(promise: Promise<PairInUse>, event: RenewalEvent, error?: unknown): void {
    const state = this.state;
    if (state.name !== 'renewing' || state.promise !== promise) return;
    const to: RenewalStateName = move(state.name, event);
    this.state = to === 'failed' ? { name: to, error } : { name: 'idle' };
    // A renewal that a logout ended failed for no reason a UI should show.
    const shown = to === 'failed' && isTokenAuthError(error) && error.code !== 'LOGGED_OUT';
    this.parts.signIn.renewalEnded(shown ? error : undefined);
  }
}
