// The public contract of a store: what the plugin asks of the place the tokens live, of its lock, and the account's
// record a shared store keeps beside the pair.
import type { DpopKey } from './dpop.js';
/** The pair a store keeps. Plain data, so a store may serialise it, but for a DPoP key (`dpopKey`). */
export interface TokenPair {
  /** The access token, sent on requests to `origins`. */
  access: string;
  /** The refresh token, sent only to the token call; absent when the service gave none. */
  refresh?: string;
  /** When the access token expires, in epoch milliseconds, when known. */
  expiresAt?: number;
  /**
   * With `dpop`, the key the pair is bound to: every request with its access token and every token call with its
   * refresh token carries a proof signed by it. A store keeps it beside the pair (see {@link TokenStore.dpopKeys}).
   */
  dpopKey?: DpopKey;
}

/** Held while renewing; released when the renewal ends, whatever its outcome. */
export interface TokenStoreLock {
  /**
   * A number that grows with every lock the store grants. The plugin passes it back to `set` and `clear`, so that a
   * holder whose lock lapsed (its process stalled past the lease) cannot overwrite the tokens of a later holder.
   * Stores whose lock cannot lapse (one process) leave it out.
   */
  readonly fence?: number;
  /**
   * How long the lock is surely still this holder's, in milliseconds by this process's clock, for a lock kept as a
   * lease that can lapse: its end as last granted or extended, less a margin of the store's for the way to it and the
   * clocks' drift, or 0 once the store sees the lock as another holder's. The plugin asks it right before each login or
   * token call goes out, and sends nothing when it is 0 or less: a holder frozen with the lock (a stopped process, a
   * serverless instance thawed, a long GC pause) may thaw after another holder took the lock and spent the refresh
   * token this one read. It asks again when the token call refused the refresh token: at 0 or less it drops nothing and
   * takes its turn again, for the pair of the holder that spent it. Stores whose lock cannot lapse (one process) leave
   * it out.
   */
  leaseLeftMs?(): number;
  /**
   * Lets the next holder take the lock. The plugin calls it once, when the renewal ends, off the request path, and
   * `auth.flush()` waits for it.
   */
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
  /**
   * The stored pair, or null (or undefined) when there is none. A store that seals its pairs says why it cannot give
   * one by the error it throws: a `TokenAuthError` with code `STORE_KEY_MISSING` (the pair is sealed with a key this
   * holder lacks) fails requests at once, reported once, and nothing logs in; with code `STORE_FAILED` (what it holds
   * failed authentication) it is reported and read as no pair, and the store is used on, so that the pair the next
   * renewal gets overwrites it. Any other error is the store failing: reported, and the holder goes on with the tokens
   * it holds in memory.
   */
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
   * shared store gives up after a timeout of its own and rejects; the plugin then treats the store as down (the
   * `whenStoreDown` option: it waits for the store, or goes on alone). `request` says when to stop waiting and how long
   * one try may take; a store may ignore it.
   */
  lock?(request?: TokenStoreLockRequest): Promise<TokenStoreLock>;
  /** Calls `listener` when another holder writes or clears the pair. Returns an unsubscribe function. */
  subscribe?(listener: (pair: TokenPair | null) => void): () => void;
  /**
   * The account's record (its login pause, the refusals renewing did not cure, the budget spent), which every holder
   * of a shared store consults before a call that generates a token; null when none is kept. Optional, with
   * `setAccount`: a store without them leaves each holder its own guards, so that a fleet in trouble costs the account
   * once per holder.
   */
  getAccount?(): AccountRecord | null | undefined | Promise<AccountRecord | null | undefined>;
  /**
   * Writes the account's record, under the lock: `fence` as for `set`. The record says nothing after its `expiresAt`;
   * a store may drop it then.
   */
  setAccount?(record: AccountRecord, fence?: number): void | boolean | Promise<void | boolean>;
  /**
   * Calls `listener` when another holder writes the account's record with a login pause in it that has not ended (a
   * store may call it for any write of the record). The renewals waiting for the lock that could only log in read the
   * record then, and fail with the pause at once, instead of each taking the lock in turn to read it there. Returns an
   * unsubscribe function. Optional, with `getAccount`: without it, those waiters learn of the pause under the lock.
   */
  subscribeAccount?(listener: () => void): () => void;
  /**
   * The store of account `name`, for requests that name their account: a store of the same kind whose keys, files or
   * entries are that account's alone (a name is any non-empty string: escape it, see the stores of this package). The
   * store itself keeps the default account. Optional: a store without it keeps the default account only, and a
   * request for another fails with `ACCOUNT_INVALID`.
   */
  forAccount?(name: string): TokenStore;
  /**
   * Whether the store keeps a pair's DPoP key (`dpopKey`), which `dpop` needs of a store shared by several holders:
   * `'as-is'`, the `CryptoKey` itself (memory, IndexedDB), or `'sealed'`, the private key exported into the record
   * that `encryption` seals (file, Redis), which asks the plugin for an extractable key. A store without it keeps no
   * key, and `dpop` refuses it.
   */
  readonly dpopKeys?: 'as-is' | 'sealed' | undefined;
}

/** The two calls that generate a token: the login, and the token call with the refresh token. */
export type TokenOperation = 'login' | 'refresh';

/**
 * The account's guards as one record, version 1: what a store keeps beside the pair so that every holder consults
 * the same. Times are epoch milliseconds by the plugin's `clock`. Nothing in it is a secret: the endpoints are method
 * and URL without query, the rejection is its masked message.
 */
export interface AccountRecord {
  /** The format's version: a later format can tell this one apart. */
  readonly version: 1;
  /** After this (epoch ms) the record says nothing any more: every pause, back-off and spent call has lapsed. */
  readonly expiresAt: number;
  /**
   * Until when (epoch ms) the record halts the renewals that could only log in (a login pause after a rejected login):
   * a store that tells the holders waiting for its lock of a halt (`subscribeAccount`) reads it. 0 or absent: none.
   */
  readonly haltsUntil?: number;
  /**
   * The guards' states (the login pause, the refusals renewing did not cure, the budget spent, refused refresh tokens
   * by their fingerprints, a logout): the plugin's own, which a store keeps as they are.
   */
  readonly [guard: string]: unknown;
}
