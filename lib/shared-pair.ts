import type { GuardedStore, StoreSession } from './guarded-store.js';
import type { Held, HeldPair } from './held-pair.js';
import type { TokenPair } from './types.js';

/**
 * This holder's side of a store it may share with other holders (tabs, processes, hosts): the pair it loads at
 * first use, the pairs the others store, the lock each renewal runs under, and the writes that go on after a
 * renewal's requests have left, one session after another.
 */
export class SharedPair {
  private loading: Promise<void> | undefined;
  private loadedOnce = false;
  /** The first read got no answer: the first renewal does not wait for the store a second time. */
  private silentAtLoad = false;
  /** Every session's writes and release so far, in the order the sessions began. */
  private settling: Promise<void> = Promise.resolve();
  /** While a renewal waits for the lock: hears of each pair another holder stored meanwhile. */
  private arrival: ((held: Held) => void) | undefined;
  private readonly unsubscribe: () => void;

  constructor(
    private readonly store: GuardedStore,
    private readonly pairs: HeldPair,
  ) {
    this.unsubscribe = store.subscribe((pair) => this.heard(pair));
  }

  /** The stored pair has been read once: until then, a request goes through `load()`. */
  get loaded(): boolean {
    return this.loadedOnce;
  }

  /** Reads the stored pair once, for the first requests. */
  load(): Promise<void> {
    return (this.loading ??= (async () => {
      const pair = await this.store.get(() => (this.silentAtLoad = true));
      if (pair && !this.pairs.current) this.pairs.hold(pair, true);
      this.loadedOnce = true;
    })());
  }

  /** The store, under its lock, for what the user asked for (a login, a refresh, `setTokens`, a logout). */
  session(): Promise<StoreSession> {
    return this.open();
  }

  /**
   * The store, under its lock, for a renewal of the client rule, which found `refused` (if any) refused or expired;
   * or, when another holder's pair arrived while it waited for the lock that is neither that one nor expired, that
   * pair, held now: the renewal's outcome, and nobody is called.
   */
  async renewalSession(refused: TokenPair | undefined): Promise<StoreSession | Held> {
    const waiting = new AbortController();
    const arrival = (held: Held): void => {
      if (held.pair.access !== refused?.access && !this.pairs.expired(held)) waiting.abort();
    };
    this.arrival = arrival;
    try {
      const session = await this.open(waiting.signal);
      if (!waiting.signal.aborted) return session;
      // It holds no lock, or one granted just before the abort, which its end releases.
      void session.end();
    } finally {
      if (this.arrival === arrival) this.arrival = undefined;
    }
    // The pair that ended the wait may have gone since (a logout elsewhere): then wait for the lock after all.
    const current = this.pairs.current;
    return current && !this.pairs.expired(current) ? current : this.open();
  }

  /** The stored pair, unless it is a stale copy of one this holder gave up (a replica behind, a write replayed). */
  async read(session: StoreSession): Promise<TokenPair | null> {
    const pair = await session.get();
    return pair && !this.pairs.givenUp(pair) ? pair : null;
  }

  /**
   * Has `pair`, just obtained and held, written in `session`. When the lock lapsed while this holder renewed (it
   * stalled past the lease) and a later holder has written since, that holder's pair is the one the others use: ours
   * stays valid for the requests that have it, but one pair per account is the point of sharing, so the requests that
   * follow carry the later one, unless `stillWanted` says a logout came meanwhile. The fence vouches for that pair
   * even if this holder gave it up for the one it was writing.
   */
  write(session: StoreSession, pair: TokenPair, stillWanted: () => boolean): void {
    session.write(pair, (later) => {
      if (stillWanted() && !this.pairs.expired(later) && later.access !== this.pairs.current?.pair.access)
        this.pairs.hold(later, true);
    });
  }

  /** Resolves once every session so far has written what it had to and released its lock. */
  settled(): Promise<void> {
    return this.settling;
  }

  /**
   * A pair another holder stored (null: it cleared the pair, a logout). A pair this holder gave up before is a stale
   * copy (a replica behind its master, a write replayed after a reconnect, the pair a logout is dropping): it never
   * comes back; nor does an expired one replace a valid one.
   */
  heard(pair: TokenPair | null): void {
    if (pair === null) return this.pairs.drop();
    const current = this.pairs.current;
    if (pair.access === current?.pair.access || this.pairs.givenUp(pair)) return;
    if (current && !this.pairs.expired(current) && this.pairs.expired(pair)) return;
    const held = this.pairs.hold(pair, true);
    this.arrival?.(held);
  }

  close(): void {
    this.unsubscribe();
  }

  /** A session that begins its calls once the sessions before it have ended, so that writes land in order. */
  private async open(signal?: AbortSignal): Promise<StoreSession> {
    const silent = this.silentAtLoad;
    this.silentAtLoad = false;
    const session = await this.store.session(signal, silent);
    const previous = this.settling;
    session.follow(previous);
    this.settling = Promise.all([previous, session.ended]).then(() => undefined);
    return session;
  }
}
