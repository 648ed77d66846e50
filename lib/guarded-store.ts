import { TokenAuthError } from './errors.js';
import { withJwtExpiry } from './parse.js';
import type { SecretList } from './redact.js';
import { ABORTED, settle, TIMED_OUT, UNANSWERED, unanswered } from './deadline.js';
import type { TokenPair, TokenStore, TokenStoreLock } from './types.js';

const noop = (): void => {};

/** A store's lock as the plugin holds it: its release goes on off the caller's path, and cannot fail. */
export interface GuardedLock extends TokenStoreLock {
  release(): void;
}

/** What a lock of a store that has none, or whose lock failed, holds: nothing. */
const NO_LOCK: GuardedLock = { release: noop };

/** What a call that failed (and was reported) gives instead of an answer. */
const FAILED = Symbol('failed');

/**
 * The user's store as the plugin calls it. A store failure must not fail requests while the plugin holds tokens in
 * memory: every call that fails is reported through `onFailure` (as `STORE_FAILED`, secrets masked) and answers as
 * if the store were empty, or had written. Nor may a store that stops answering (a paused Redis, a hung mount) hold
 * requests: past `timeoutMs` a call counts as failed, and is left to finish on its own. So does each try at the
 * lock, for a store that bounds its tries by the `tryTimeoutMs` it is given (a lock that is merely busy is waited
 * for, up to the store's `lockTimeoutMs`).
 */
export class GuardedStore {
  constructor(
    private readonly store: TokenStore,
    private readonly timeoutMs: number,
    private readonly secrets: SecretList,
    private readonly onFailure: (error: TokenAuthError) => void,
  ) {}

  /**
   * The stored pair; null when there is none, when what is stored has no access token, or when the read failed. A
   * pair stored without `expiresAt` (a custom store, a pair from another library) gets its JWT's `exp`, so that an
   * expired token is renewed before it is sent rather than refused. `unanswered` hears of a read that timed out.
   */
  async get(unanswered: () => void = noop): Promise<TokenPair | null> {
    return fromStore(await this.call(() => this.store.get(), true, whenUnanswered(unanswered)));
  }

  /**
   * The store's lock, or one that holds nothing when the store has none or could not grant it (the renewal then
   * goes on without it). Once `signal` aborts (the lock is no longer needed), the wait ends at once with no lock, and
   * a lock granted late is released. Its release runs off the caller's path and reports a failure like any call.
   */
  async lock(signal?: AbortSignal, unanswered: () => void = noop): Promise<GuardedLock> {
    const store = this.store;
    if (!store.lock || signal?.aborted) return NO_LOCK;
    const locking = Promise.resolve().then(() => store.lock?.({ signal, tryTimeoutMs: this.timeoutMs }));
    // A store that stops waiting when the signal aborts rejects then: that is no failure, and is not waited for.
    const granted = await this.call(() => settle(locking, { signal }), false, whenUnanswered(unanswered));
    if (
      granted === FAILED ||
      granted === ABORTED ||
      granted === TIMED_OUT ||
      granted === undefined ||
      signal?.aborted
    ) {
      // Granted after the wait was given up: nobody would release it.
      locking.then((late) => late && this.release(late), noop);
      return NO_LOCK;
    }
    return { fence: granted.fence, release: () => this.release(granted) };
  }

  /** Another holder's pairs, checked and completed as `get()` does; what has no access token is passed over. */
  subscribe(listener: (pair: TokenPair | null) => void): () => void {
    return (
      this.store.subscribe?.((pair) => {
        const checked = pair === null ? null : usable(pair);
        if (checked !== undefined) listener(checked);
      }) ?? noop
    );
  }

  /**
   * How one renewal uses the store: see {@link StoreSession}. `silent` when the store has just been seen not to
   * answer: the session then calls it not at all, not even for the lock.
   */
  async session(signal?: AbortSignal, silent = false): Promise<StoreSession> {
    let answered = !silent;
    const lock = silent ? NO_LOCK : await this.lock(signal, () => (answered = false));
    return new StoreSession((operation) => this.call(() => operation(this.store)), lock, answered);
  }

  private release(lock: TokenStoreLock): void {
    void this.call(() => lock.release());
  }

  /** The answer of `operation`, or FAILED once it failed or, when `bounded`, took longer than `timeoutMs`. */
  private async call<T>(
    operation: () => T | Promise<T>,
    bounded = true,
    failed: (error: unknown) => void = noop,
  ): Promise<T | typeof FAILED> {
    try {
      const call = Promise.resolve().then(operation);
      if (!bounded) return await call;
      const answer = await settle(call, { ms: this.timeoutMs });
      if (answer === TIMED_OUT)
        throw unanswered(`it did not answer within ${Math.round(this.timeoutMs)} ms, \`storeTimeoutMs\``);
      return answer as Awaited<T>;
    } catch (error) {
      failed(error);
      const reason = this.secrets.mask(error instanceof Error ? error.message : String(error));
      const cause = error instanceof Error ? this.secrets.copy(error) : undefined;
      this.onFailure(
        new TokenAuthError(
          'STORE_FAILED',
          `The token store failed (${reason}); going on with the tokens held in memory.`,
          {
            cause,
          },
        ),
      );
      return FAILED;
    }
  }
}

/**
 * The store as one renewal uses it: under its lock (or none), with every call bounded; a store seen failing is not
 * called again in the same renewal but to release its lock (it answers as if empty, or written), so that a silent
 * store costs a renewal one timeout, not one per call. The writes go on off the path of the requests waiting for
 * the pair, and the lock is released once they are done. Its calls begin once the sessions before it have ended,
 * so that writes land in the order they were made, with or without a lock.
 */
export class StoreSession {
  private failed: boolean;
  private readonly writes: Promise<unknown>[] = [];
  private previous: Promise<unknown> = Promise.resolve();
  private finish: () => void = noop;
  /** Resolves once `end()` has awaited the writes and released the lock. */
  readonly ended = new Promise<void>((resolve) => (this.finish = resolve));

  /** `answered`: false when a try at the lock got no answer, which is the store failing already. */
  constructor(
    private readonly guarded: <T>(operation: (store: TokenStore) => T | Promise<T>) => Promise<T | typeof FAILED>,
    private readonly lock: GuardedLock,
    answered: boolean,
  ) {
    this.failed = !answered;
  }

  /** Begins the calls of this session after `previous`, the end of the sessions before it. */
  follow(previous: Promise<unknown>): void {
    this.previous = previous;
  }

  async get(): Promise<TokenPair | null> {
    return fromStore(await this.call((store) => store.get()));
  }

  /** Clears the pair, and resolves once it is done. */
  async clear(): Promise<void> {
    await this.call((store) => store.clear(this.lock.fence));
  }

  /**
   * Writes `pair` without waiting for it. When the fence refuses the write (this holder's lease lapsed and a later
   * holder has written since), `later` gets the pair that holder stored.
   */
  write(pair: TokenPair, later: (stored: TokenPair) => void): void {
    this.writes.push(
      (async () => {
        if ((await this.call((store) => store.set(pair, this.lock.fence))) !== false) return;
        const stored = await this.get();
        if (stored) later(stored);
      })(),
    );
  }

  /** Releases the lock after the writes; resolves then. */
  async end(): Promise<void> {
    await Promise.allSettled(this.writes);
    this.lock.release();
    this.finish();
  }

  private async call<T>(operation: (store: TokenStore) => T | Promise<T>): Promise<Awaited<T> | undefined> {
    if (this.failed) return undefined;
    await this.previous;
    if (this.failed) return undefined;
    const answer = await this.guarded(operation);
    if (answer !== FAILED) return answer;
    this.failed = true;
    return undefined;
  }
}

/** Calls `unanswered` for a failure that was a store not answering. */
function whenUnanswered(unanswered: () => void): (error: unknown) => void {
  return (error) => {
    if (error instanceof Error && error.name === UNANSWERED) unanswered();
  };
}

function fromStore(pair: TokenPair | null | undefined | typeof FAILED): TokenPair | null {
  return pair === FAILED ? null : (usable(pair) ?? null);
}

/** A pair the plugin can use, with its JWT's expiry when the store kept none; undefined for anything else. */
function usable(pair: TokenPair | null | undefined): TokenPair | undefined {
  return pair && typeof pair.access === 'string' ? withJwtExpiry(pair) : undefined;
}
