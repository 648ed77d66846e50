// How a renewal waits out a store that is down (`whenStoreDown`, `storeOutageWaitMs`): how long, and how often it asks
// the store again; and what is said of an outage, once each. What the renewal does once the wait is over is decided in
// the core (account/renewal/decide.ts).
import type { AccountReports } from '../account/reports.js';

/** The first pause between two tries at a store found down, and the longest: it doubles from one to the other. */
const FIRST_PAUSE_MS = 100;
const LONGEST_PAUSE_MS = 2_000;

/** `whenStoreDown` and `storeOutageWaitMs`. */
export interface OutagePolicy {
  readonly whenStoreDown: 'wait' | 'go-alone';
  readonly storeOutageWaitMs: number;
}

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
  private wakeUp: (() => void) | undefined;

  constructor({ whenStoreDown, storeOutageWaitMs: waitMs }: OutagePolicy) {
    const boundMs = whenStoreDown === 'wait' ? waitMs : waitMs / 3 + (Math.random() * 2 * waitMs) / 3;
    // A timer, not a clock reading: the wait ends in real time whatever the `clock` option says.
    this.end = setTimeout(() => {
      this.ended = true;
      this.wake();
    }, boundMs);
  }

  /** The wait is over (the store is asked once more then), or was stopped. */
  get over(): boolean {
    return this.ended;
  }

  /** Pauses before the next try at the store: resolves after the back-off, at the wait's end, or on {@link wake}. */
  pause(): Promise<void> {
    if (this.ended) return Promise.resolve();
    const backOffMs = Math.min(LONGEST_PAUSE_MS, FIRST_PAUSE_MS * 2 ** this.tries);
    this.tries += 1;
    return new Promise((resolve) => {
      this.wakeUp = resolve;
      this.timer = setTimeout(resolve, backOffMs * (0.5 + Math.random() / 2));
    });
  }

  /** Ends a pause at once: a logout, or a pair another holder stored. */
  wake(): void {
    clearTimeout(this.timer);
    this.wakeUp?.();
    this.wakeUp = undefined;
  }

  /** The renewal is done with the outage: no timer is left behind. */
  stop(): void {
    this.ended = true;
    clearTimeout(this.end);
    this.wake();
  }
}

/** A renewal found the store down, and waits for it under `policy`: said once per outage. */
export function foundDown(reports: AccountReports, { whenStoreDown, storeOutageWaitMs: waitMs }: OutagePolicy): void {
  const then =
    whenStoreDown === 'wait'
      ? 'No token is generated without its word: the renewal and its requests wait for the store, up to ' +
        `\`storeOutageWaitMs\` (${waitMs} ms) or a request's own \`timeout\`, then fail with STORE_UNAVAILABLE ` +
        "(`whenStoreDown: 'wait'`)."
      : 'The renewal tries the store again for a while within `storeOutageWaitMs` ' +
        `(${waitMs} ms), then gets a pair of its own (\`whenStoreDown: 'go-alone'\`).`;
  const message =
    `The token store is down as a renewal${reports.of} fell due (its lock got no answer or failed, or another holder ` +
    `kept it past the store's \`lockTimeoutMs\`). ${then} Requests with a valid token go on. Said once per outage.`;
  reports.warn({ code: 'STORE_UNAVAILABLE', message });
}

/** A renewal went on without the store's lock: said once per outage. */
export function goesAlone(reports: AccountReports): void {
  const message =
    `The token store's lock could not be taken as a renewal${reports.of} fell due, for as long as the renewal ` +
    "waited (`whenStoreDown: 'go-alone'`): this holder got a pair of its own rather than send the refresh token the " +
    'holders share, which the holder of the lock may have spent. It goes back to the ' +
    "store's pair once the store answers. Said once per outage.";
  reports.warn({ code: 'STORE_LOCK_MISSED', message });
}
