import type { GuardedStore, StoreSession } from './guarded-store.js';
import type { Held, HeldPair } from './held-pair.js';
import type { TokenPair } from './types.js';

/**
 * This holder's side of a store it may share with other holders (tabs, processes, hosts): the pair it loads at
 * first use, the pairs the others store, the lock each renewal runs under, and the writes that go on after a
 * renewal's requests have left.
 */
export class SharedPair {
  private loading: Promise<void> | undefined;
  private done = false;
  /** The last renewal's writes and its release of the lock. */
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
    return this.done;
  }

  /** Reads the stored pair once, for the first requests. */
  load(): Promise<void> {
    return (this.loading ??= (async () => {
      const pair = await this.store.get();
      if (pair && !this.pairs.current) this.pairs.hold(pair, true);
      this.done = true;
    })());
  }

  /**
   * The store, under its lock, for a renewal. For a renewal of the client rule (`refused` given: the pair it found
   * refused or expired, if any), the pair held now instead when, while it waited for the lock, another holder's pair
   * arrived that is neither that one nor expired: that pair is the renewal's outcome, and nobody is called.
   */
  session(): Promise<StoreSession>;
  session(refused: { pair: TokenPair | undefined } | undefined): Promise<StoreSession | Held>;
  async session(refused?: { pair: TokenPair | undefined }): Promise<StoreSession | Held> {
    if (!refused) return this.store.session();
    const waiting = new AbortController();
    this.arrival = (held) => {
      if (held.pair.access !== refused.pair?.access && !this.pairs.expired(held)) waiting.abort();
    };
    try {
      const session = await this.store.session(waiting.signal);
      if (!waiting.signal.aborted) return session;
      // Aborted: the session holds no lock.
      void session.end();
    } finally {
      this.arrival = undefined;
    }
    // The pair that ended the wait may have gone since (a logout elsewhere): then wait for the lock after all.
    const current = this.pairs.current;
    return current && !this.pairs.expired(current) ? current : this.store.session();
  }

  /** A renewal's requests have their pair: its writes and the release go on without them. */
  settle(session: StoreSession): void {
    this.settling = session.end();
  }

  /** Resolves once the last renewal's writes are done and its lock released. */
  settled(): Promise<void> {
    return this.settling;
  }

  /** A pair another holder stored (null: it cleared the pair, a logout). */
  heard(pair: TokenPair | null): void {
    if (pair === null) return this.pairs.drop();
    const current = this.pairs.current;
    if (pair.access === current?.pair.access) return;
    // An older pair read back (from a store that missed this holder's last writes) must not replace a valid one.
    if (this.pairs.expired(pair) && current && !this.pairs.expired(current)) return;
    const held = this.pairs.hold(pair, true);
    this.arrival?.(held);
  }

  close(): void {
    this.unsubscribe();
  }
}
