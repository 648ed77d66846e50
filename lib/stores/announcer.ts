import type { TokenPair } from '../store-contract.js';

/**
 * The listeners of one store in this process. A record is announced once, whether this process wrote it (other
 * instances attached with the same store learn of it) or another process did (a file event, a pub/sub message).
 */
export class Announcer {
  private readonly listeners = new Set<(pair: TokenPair | null) => void>();
  private lastSeen: string | undefined;

  get size(): number {
    return this.listeners.size;
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
}
