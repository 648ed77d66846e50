// The link of an account nobody else holds (no `store` given: the pair lives in this holder's memory alone): nothing to
// load, read or write but the pair in use, no record, no outage; its turns go one at a time under async-mutex, so that
// a logout or `setTokens` waits for the renewal under way, as it would at a shared store's lock.
import { Mutex } from 'async-mutex';
import type { StoreLink, Turn, TurnWait } from './link.js';
import type { PairInUse, Pairs } from './pairs.js';

const done = (): Promise<void> => Promise.resolve();
const nothing = (): void => undefined;

export class SoloLink implements StoreLink {
  readonly loaded = true;
  readonly shares = false;
  readonly keepsRecord = false;
  readonly outage = undefined;
  readonly #turns = new Mutex();
  /** The release of the last turn: what `settled()` waits for. */
  #last: Promise<void> = Promise.resolve();

  constructor(private readonly pairs: Pairs) {}

  load = done;
  consult = done;
  readTimedOut = (): undefined => undefined;
  close = nothing;
  goesAlone = nothing;

  /** What another holder would have stored: nothing, for nobody else holds it. */
  peek(): Promise<null> {
    return Promise.resolve(null);
  }

  async turn(): Promise<Turn> {
    let ended!: () => void;
    this.#last = new Promise((resolve) => (ended = resolve));
    const release = await this.#turns.acquire();
    const pairs = this.pairs;
    return {
      lockMissed: false,
      missedBecause: undefined,
      lockTaken: true,
      storeSilent: false,
      confirmLease: nothing,
      leaseLost: false,
      // The pair this holder keeps is the only one there is.
      read: () => Promise.resolve(pairs.current?.pair ?? null),
      openRecord: done,
      closeRecord: nothing,
      write: nothing,
      clear: done,
      end() {
        release();
        ended();
        return done();
      },
    };
  }

  /** Its turns, one after another: never missed, never waiting out an outage. */
  turnWait(): TurnWait {
    let held: Promise<PairInUse> | undefined;
    return {
      next: () => this.turn(),
      lost(error) {
        throw error;
      },
      heldThroughOutage: () => undefined,
      // Never found down: what the waiters of a renewal due to the expiry margin race it with never comes.
      held: () => (held ??= new Promise(nothing)),
      timedOut: () => undefined,
      wake: nothing,
    };
  }

  settled(): Promise<void> {
    return this.#last;
  }
}
