import type { TokenPair, TokenStore } from '../../lib/index.js';

/**
 * A store with neither `lock` nor `subscribe`, as a user may write one. Under it the plugin's own single-flight
 * renewal is the only thing that keeps concurrent requests to one token call: the MemoryTokenStore's lock and
 * re-read would hide its loss.
 */
export class LocklessStore implements TokenStore {
  private pair: TokenPair | null = null;

  get(): TokenPair | null {
    return this.pair && { ...this.pair };
  }

  set(pair: TokenPair): void {
    this.pair = { ...pair };
  }

  clear(): void {
    this.pair = null;
  }
}
