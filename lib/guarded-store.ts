import { TokenAuthError } from './errors.js';
import { withJwtExpiry } from './parse.js';
import type { SecretList } from './redact.js';
import type { TokenPair, TokenStore, TokenStoreLock } from './types.js';

const noop = (): void => {};

/** A store's lock as the plugin holds it: its release goes on off the caller's path, and cannot fail. */
export interface GuardedLock extends TokenStoreLock {
  release(): void;
}

/** What a lock of a store that has none, or whose lock failed, holds: nothing. */
const NO_LOCK: GuardedLock = { release: noop };

/**
 * The user's store as the plugin calls it. A store failure must not fail requests while the plugin holds tokens in
 * memory: every call that fails is reported through `onFailure` (as `STORE_FAILED`, secrets masked) and answers as
 * if the store were empty, or had written. Nor may a store that stops answering (a paused Redis, a hung mount) hold
 * requests: past `timeoutMs` a call counts as failed, and is left to finish on its own. The wait for the lock is the
 * exception: the store bounds it itself (`lockTimeoutMs`), so that a holder that is merely slow is waited for.
 */
export class GuardedStore implements TokenStore {
  constructor(
    private readonly store: TokenStore,
    private readonly timeoutMs: number,
    private readonly secrets: SecretList,
    private readonly onFailure: (error: TokenAuthError) => void,
  ) {}

  /**
   * The stored pair; null when there is none, when what is stored has no access token, or when the read failed. A
   * pair stored without `expiresAt` (a custom store, a pair from another library) gets its JWT's `exp`, so that an
   * expired token is renewed before it is sent rather than refused.
   */
  async get(): Promise<TokenPair | null> {
    return usable(await this.call(() => this.store.get())) ?? null;
  }

  /** False when the store refused the write for a later holder's fence; undefined when it failed. */
  set(pair: TokenPair, fence?: number): Promise<boolean | void | undefined> {
    return this.call(() => this.store.set(pair, fence));
  }

  clear(fence?: number): Promise<boolean | void | undefined> {
    return this.call(() => this.store.clear(fence));
  }

  /**
   * The store's lock, or one that holds nothing when the store has none or could not grant it (the renewal then
   * goes on without it). Its release runs off the caller's path and reports a failure like any call.
   */
  async lock(): Promise<GuardedLock> {
    if (!this.store.lock) return NO_LOCK;
    const lock = await this.call(() => this.store.lock?.(), false);
    if (!lock) return NO_LOCK;
    return {
      fence: lock.fence,
      release: () => {
        void this.call(() => lock.release());
      },
    };
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

  private async call<T>(operation: () => T | Promise<T>, bounded = true): Promise<T | undefined> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    try {
      const call = Promise.resolve().then(operation);
      if (!bounded) return await call;
      call.catch(noop);
      const limit = this.timeoutMs;
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`it did not answer within ${limit} ms, \`tokenTimeoutMs\``)), limit);
      });
      return await Promise.race([call, timeout]);
    } catch (error) {
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
      return undefined;
    } finally {
      clearTimeout(timer);
    }
  }
}

/** A pair the plugin can use, with its JWT's expiry when the store kept none; undefined for anything else. */
function usable(pair: TokenPair | null | undefined): TokenPair | undefined {
  return pair && typeof pair.access === 'string' ? withJwtExpiry(pair) : undefined;
}
