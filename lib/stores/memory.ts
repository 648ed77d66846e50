import { Mutex } from 'async-mutex';
import type { TokenPair, TokenStore, TokenStoreLock } from '../store-contract.js';

/**
 * Keeps the pair in memory, for one process. Instances of axios attached with the same MemoryTokenStore share its
 * pair and its lock, so they renew once between them.
 *
 * @example
 * const store = new MemoryTokenStore();
 * attachTokenAuth(ordersApi, { credentials, store });
 * attachTokenAuth(stockApi, { credentials, store }); // one login, one renewal per expiry, for both
 */
export class MemoryTokenStore implements TokenStore {
  private pair: TokenPair | null = null;
  private readonly mutex = new Mutex();
  private readonly listeners = new Set<(pair: TokenPair | null) => void>();

  /** A copy of the pair, or null. */
  get(): TokenPair | null {
    return this.pair && { ...this.pair };
  }

  set(pair: TokenPair): void {
    this.pair = { ...pair };
    this.notify();
  }

  clear(): void {
    this.pair = null;
    this.notify();
  }

  async lock(): Promise<TokenStoreLock> {
    const release = await this.mutex.acquire();
    return { release };
  }

  subscribe(listener: (pair: TokenPair | null) => void): () => void {
    this.listeners.add(listener);
    return () => {
      this.listeners.delete(listener);
    };
  }

  private notify(): void {
    for (const listener of [...this.listeners]) listener(this.get());
  }
}
