import { Mutex } from 'async-mutex';
import type { AccountRecord, TokenPair, TokenStore, TokenStoreLock, TokenStoreLockRequest } from '../contract/store.js';

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
  /** It keeps a pair's DPoP key as it is: the `CryptoKey` never leaves the process. */
  readonly dpopKeys = 'as-is' as const;
  private pair: TokenPair | null = null;
  private account: AccountRecord | null = null;
  /** Grants its turns in the order asked for; a release called twice frees nobody (async-mutex's releaser). */
  private readonly mutex = new Mutex();
  private readonly listeners = new Set<(pair: TokenPair | null) => void>();
  private readonly accountListeners = new Set<() => void>();
  /** The stores of the named accounts, kept as long as this one: a dropped account that comes back finds its pair. */
  private readonly accounts = new Map<string, MemoryTokenStore>();

  /** The store of account `name`: its own pair, record and lock, shared by the attachments that share this store. */
  forAccount(name: string): MemoryTokenStore {
    let store = this.accounts.get(name);
    if (!store) this.accounts.set(name, (store = new MemoryTokenStore()));
    return store;
  }

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

  /** A copy of the account's record, which the attachments sharing this store consult; null when none. */
  getAccount(): AccountRecord | null {
    return this.account && structuredCopy(this.account);
  }

  setAccount(record: AccountRecord): void {
    this.account = structuredCopy(record);
    for (const listener of [...this.accountListeners]) listener();
  }

  /** The lock, in the order asked for; a turn that comes after `request.signal` aborted is passed on, and rejects. */
  async lock(request?: TokenStoreLockRequest): Promise<TokenStoreLock> {
    const release = await this.mutex.acquire();
    if (request?.signal?.aborted) {
      release();
      throw request.signal.reason;
    }
    return { release };
  }

  subscribe(listener: (pair: TokenPair | null) => void): () => void {
    this.listeners.add(listener);
    return () => {
      this.listeners.delete(listener);
    };
  }

  /** Calls `listener` whenever the account's record is written (in one process, telling costs nothing). */
  subscribeAccount(listener: () => void): () => void {
    this.accountListeners.add(listener);
    return () => {
      this.accountListeners.delete(listener);
    };
  }

  private notify(): void {
    for (const listener of [...this.listeners]) listener(this.get());
  }
}

/** A deep copy of plain data, so that no holder changes a record another holds (structuredClone is Node 17+). */
function structuredCopy<T>(value: T): T {
  return JSON.parse(JSON.stringify(value)) as T;
}
