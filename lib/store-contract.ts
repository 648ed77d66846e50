// The public contract of a store: what the plugin asks of the place the tokens live, and of its lock.
/** The pair a store keeps. Plain data, so a store may serialise it. */
export interface TokenPair {
  /** The access token, sent on requests to `origins`. */
  access: string;
  /** The refresh token, sent only to the token call; absent when the service gave none. */
  refresh?: string;
  /** When the access token expires, in epoch milliseconds, when known. */
  expiresAt?: number;
}

/** Held while renewing; released when the renewal ends, whatever its outcome. */
export interface TokenStoreLock {
  /**
   * A number that grows with every lock the store grants. The plugin passes it back to `set` and `clear`, so that a
   * holder whose lock lapsed (its process stalled past the lease) cannot overwrite the tokens of a later holder.
   * Stores whose lock cannot lapse (one process) leave it out.
   */
  readonly fence?: number;
  /** Lets the next holder take the lock. The plugin calls it once, when the renewal ends, off the request path. */
  release(): void | Promise<void>;
}

/** What the plugin asks of a store's lock, besides the lock. */
export interface TokenStoreLockRequest {
  /**
   * Aborts when the lock is no longer needed: another holder's newer pair arrived while this one waited. The store
   * may stop trying and reject; the plugin releases a lock granted after it.
   */
  readonly signal?: AbortSignal | undefined;
  /**
   * How long one try at the lock may take (the plugin's `storeTimeoutMs`). A try that does not answer in time means
   * the store stopped answering, not that the lock is busy: the store rejects at once, saying so, rather than
   * waiting out its `lockTimeoutMs`.
   */
  readonly tryTimeoutMs?: number | undefined;
}

/**
 * Where the tokens live. Every method may be sync or async. `lock` and `subscribe` are optional: a store that
 * several holders share (tabs, processes, hosts) implements them so that the holders renew once between them.
 */
export interface TokenStore {
  /** The stored pair, or null (or undefined) when there is none. */
  get(): TokenPair | null | undefined | Promise<TokenPair | null | undefined>;
  /**
   * Writes the pair. `fence` is that of the lock the writer holds, if any; a store returns `false` instead of
   * writing when a later lock has been granted since, so the writer can take the newer pair instead.
   */
  set(pair: TokenPair, fence?: number): void | boolean | Promise<void | boolean>;
  /** Drops the pair; `fence` as for `set`. */
  clear(fence?: number): void | boolean | Promise<void | boolean>;
  /**
   * Resolves once this holder may renew; the plugin re-reads the store under it before calling the service. A
   * shared store gives up after a timeout of its own and rejects; the plugin then renews without the lock. `request`
   * says when to stop waiting and how long one try may take; a store may ignore it.
   */
  lock?(request?: TokenStoreLockRequest): Promise<TokenStoreLock>;
  /** Calls `listener` when another holder writes or clears the pair. Returns an unsubscribe function. */
  subscribe?(listener: (pair: TokenPair | null) => void): () => void;
}
