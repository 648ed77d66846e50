// How a renewal waits out a store that is down (`whenStoreDown`, `storeOutageWaitMs`): how long, how often it asks the
// store again, and what it does once the wait is over. A leaf: the renewal consults it (renewal.ts).
import { TokenAuthError } from '../../contract/errors.js';

/** The first pause between two tries at a store found down, and the longest: it doubles from one to the other. */
const FIRST_PAUSE_MS = 100;
const LONGEST_PAUSE_MS = 2_000;

/**
 * One renewal's wait for a store that is down, from the first lock missed. Under `'wait'` it lasts `waitMs`; under
 * `'go-alone'`, a third of it plus a random part of the rest, so that the holders of a fleet, which all found the store
 * down at once, do not all log in at once. Between tries it pauses 100 ms, doubling up to 2 s, each pause a random
 * half to whole of that (so that the holders do not come back in step), never past the wait's end.
 */
export class StoreOutageWait {
  private ended = false;
  private tries = 0;
  private readonly end: ReturnType<typeof setTimeout>;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private wake: (() => void) | undefined;

  constructor(
    readonly policy: 'wait' | 'go-alone',
    waitMs: number,
  ) {
    const boundMs = policy === 'wait' ? waitMs : waitMs / 3 + (Math.random() * 2 * waitMs) / 3;
    // A timer, not a clock reading: the wait ends in real time whatever the `clock` option says.
    this.end = setTimeout(() => {
      this.ended = true;
      this.cut();
    }, boundMs);
  }

  /** The wait is over (the store is asked once more then), or was stopped. */
  get over(): boolean {
    return this.ended;
  }

  /** Pauses before the next try at the store: resolves after the back-off, at the wait's end, or on {@link cut}. */
  pause(): Promise<void> {
    if (this.ended) return Promise.resolve();
    const backOffMs = Math.min(LONGEST_PAUSE_MS, FIRST_PAUSE_MS * 2 ** this.tries);
    this.tries += 1;
    return new Promise((resolve) => {
      this.wake = resolve;
      this.timer = setTimeout(resolve, backOffMs * (0.5 + Math.random() / 2));
    });
  }

  /** Ends a pause at once: something arrived that may end the wait (a pair another holder stored). */
  cut(): void {
    clearTimeout(this.timer);
    this.wake?.();
    this.wake = undefined;
  }

  /** The renewal is done with the store's outage: no timer is left behind. */
  stop(): void {
    this.ended = true;
    clearTimeout(this.end);
    this.cut();
  }
}

/**
 * The error of a token that was due while the store was down, for as long as a request (or the renewal) could wait:
 * nothing was sent to the token service. `cause`: the store's error (masked); `bound`: what ended the wait.
 */
export function storeUnavailable(cause: unknown, bound: string): TokenAuthError {
  return new TokenAuthError(
    'STORE_UNAVAILABLE',
    `A token was due while the token store was down, and ${bound}; no token is generated without the store's word ` +
      "(`whenStoreDown: 'wait'`), so nothing was sent to the token service. The store's error is the `cause`. " +
      "Pass a longer `storeOutageWaitMs` to wait out longer outages, or `whenStoreDown: 'go-alone'` to serve " +
      'requests through them at the cost of one login per holder.',
    { cause },
  );
}

/** The error of a renewal whose lock's lease lapsed before its token call `times` times in a row. */
export function leaseLapsedTooOften(times: number): TokenAuthError {
  return new TokenAuthError(
    'STORE_UNAVAILABLE',
    `The token store's lock lapsed before the token call could go, ${times} times in a row: this holder stalls ` +
      "(a blocked event loop, a frozen process) for longer than the lock's lease, so it sent no token call on the " +
      'strength of a lock another holder may have taken. Give the store a longer `lockTtlMs`, or find the stall.',
  );
}
