import type { TokenPair } from '../../contract/store.js';

/**
 * The listeners of one store in this process. A record is announced once, whether this process wrote it (other
 * instances attached with the same store learn of it) or another process did (a file event, a pub/sub message).
 */
export class Announcer {
  private readonly listeners = new Set<(pair: TokenPair | null) => void>();
  /** The listeners of the account's record (`subscribeAccount`), told when it pauses logins. */
  private readonly accountListeners = new Set<() => void>();
  private lastSeen: string | undefined;
  /** The records read so far, announced in the order read. */
  private reading: Promise<void> = Promise.resolve();

  /** The listeners, of the pair and of the account's record: while there are any, the store listens. */
  get size(): number {
    return this.listeners.size + this.accountListeners.size;
  }

  addAccount(listener: () => void): () => void {
    this.accountListeners.add(listener);
    return () => {
      this.accountListeners.delete(listener);
    };
  }

  /** The account's record was written with a login pause in it (see `pausesLogins` in account-record.ts). */
  announceAccount(): void {
    for (const listener of [...this.accountListeners]) listener();
  }

  add(listener: (pair: TokenPair | null) => void): () => void {
    this.listeners.add(listener);
    return () => {
      this.listeners.delete(listener);
    };
  }

  /** `text` is the stored record (or '' for none): a record seen before calls nobody. */
  announce(text: string, pair: TokenPair | null): void {
    if (text === this.lastSeen) return;
    this.lastSeen = text;
    for (const listener of [...this.listeners]) listener(pair && { ...pair });
  }

  /**
   * Announces a record another holder wrote, read as `text`, with the pair `open` finds in it (a sealed one opened):
   * in the order read, since an opening may take a while and an older record must not be announced last; a record
   * seen before is not opened again. One that is not ours, or does not open, is announced not at all: the store's
   * `get()` reports it, where the plugin can say so.
   */
  announceRead(text: string, open: () => TokenPair | null | Promise<TokenPair | null>): void {
    this.reading = this.reading.then(async () => {
      if (text === this.lastSeen) return;
      try {
        this.announce(text, await open());
      } catch {
        // Reported by get() (above).
      }
    });
  }
}
