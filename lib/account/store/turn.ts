// One turn at the store: what a renewal (or a call of the user's) does there under the store's lock, or with the lock
// missed, in order, every call bounded; and the locks as the plugin holds them. StoreLink (store-link.ts) opens turns.
import { withJwtExpiry } from '../../token-calls/parse.js';
import { accountRecordIn } from '../../stores/common/account-record.js';
import type { AccountRecord, TokenPair, TokenStore, TokenStoreLock } from '../../contract/store.js';

export const noop = (): void => {};

/**
 * A store's lock as the plugin holds it: its release cannot fail. `missed`: the store has a lock and this holder could
 * not take it, with why (the store's error, masked: it did not answer, failed, or another holder kept the lock past
 * the store's `lockTimeoutMs`).
 */
export interface HeldLock extends Omit<TokenStoreLock, 'release'> {
  readonly missed?: { readonly cause: unknown };
  release(): Promise<void>;
}

const released = (): Promise<void> => Promise.resolve();

/** What the lock of a store that has none holds: nothing. */
export const NO_LOCK: HeldLock = { release: released };

/** What a lock the store could not grant holds: nothing, and says why. */
export function missed(cause: unknown): HeldLock {
  return { release: released, missed: { cause } };
}

/**
 * A turn lost before a login or token call went: the lease of its lock lapsed (`lapsed`: the holder was frozen, or
 * stalled, and another holder may have taken the lock and spent the refresh token this one read), or the store
 * stopped answering under the lock (what it holds is not known). The renewal takes its turn again; it never reaches a
 * caller.
 */
export class TurnLost extends Error {
  override readonly name = 'TurnLost';
  readonly lapsed: boolean;
  constructor({ lapsed = false, cause }: { lapsed?: boolean; cause?: unknown } = {}) {
    super(
      lapsed
        ? "The store lock's lease lapsed before a token call could go."
        : 'The store stopped answering under its lock.',
      { cause },
    );
    this.lapsed = lapsed;
  }
}

/** What a call that failed (and was reported) gives instead of an answer. */
export const FAILED = Symbol('failed');
/** What a call that got no answer within `storeTimeoutMs` gives: it failed too, and the store may be silent now. */
export const SILENT = Symbol('silent');

/** A call of the store, bounded and reported by the link. */
type Bounded = <T>(
  operation: (store: TokenStore) => T | Promise<T>,
  read: boolean,
) => Promise<T | undefined | typeof FAILED | typeof SILENT>;

/**
 * The store as one renewal (or call of the user's) uses it: under its lock (or none), with every call bounded; a
 * store seen failing is not called again in the same turn but to release its lock (it answers as if empty, or
 * written), so that a silent store costs a renewal one timeout, not one per call. The writes go on off the path of the
 * requests waiting for the pair, and the lock is released once they are done. Its calls begin once the turns before it
 * have ended, so that writes land in the order they were made, with or without a lock.
 */
export class StoreTurn {
  private failed: boolean;
  private silent = false;
  private readonly writes: Promise<unknown>[] = [];
  private previous: Promise<unknown> = Promise.resolve();
  private finish: () => void = noop;
  /** Resolves once `end()` has awaited the writes and released the lock. */
  readonly ended = new Promise<void>((resolve) => (this.finish = resolve));

  /** `answered`: false when a try at the lock got no answer, which is the store failing already. */
  constructor(
    private readonly bounded: Bounded,
    private readonly lock: HeldLock,
    answered: boolean,
  ) {
    this.failed = !answered;
  }

  /**
   * The store has a lock and this turn could not take it: what the store holds may be changing under another holder
   * (or unreadable), so the turn must not spend what the holders share.
   */
  get lockMissed(): boolean {
    return this.lock.missed !== undefined;
  }

  /** Why the lock was missed: the store's error (masked), when {@link lockMissed}. */
  get missedBecause(): unknown {
    return this.lock.missed?.cause;
  }

  /** The store's lock is this turn's. */
  get lockTaken(): boolean {
    return this.lock !== NO_LOCK && this.lock.missed === undefined;
  }

  /**
   * Throws {@link TurnLost} when the lock's lease may have lapsed: asked right before each login or token call
   * leaves, as late as the plugin can ask, so that a holder that thaws after its lease lapsed sends nothing.
   */
  confirmLease(): void {
    const left = this.lock.leaseLeftMs?.();
    if (left !== undefined && !(left > 0)) throw new TurnLost({ lapsed: true });
  }

  /**
   * A call of this turn got no answer within `storeTimeoutMs`: the store stopped answering, and is called no more in
   * this turn (one that failed at once is called no more either, but answered).
   */
  get storeSilent(): boolean {
    return this.silent;
  }

  /** Begins the calls of this turn after `previous`, the end of the turns before it. */
  follow(previous: Promise<unknown>): void {
    this.previous = previous;
  }

  async get(): Promise<TokenPair | null> {
    return fromStore(await this.call((store) => store.get(), true));
  }

  /** The account's record the store keeps, if it keeps one and it is one. */
  async getAccount(): Promise<AccountRecord | undefined> {
    return accountRecordIn(await this.call((store) => store.getAccount?.(), true));
  }

  /** Writes the account's record without waiting for it; the lock is released once it is written. */
  setAccount(record: AccountRecord): void {
    this.writes.push(this.call((store) => store.setAccount?.(record, this.lock.fence)));
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

  /** Releases the lock after the writes; resolves once it is released. */
  async end(): Promise<void> {
    await Promise.allSettled(this.writes);
    await this.lock.release();
    this.finish();
  }

  /** `read`: a read, which a store may answer with "what I hold cannot be used" (none, then). */
  private async call<T>(
    operation: (store: TokenStore) => T | Promise<T>,
    read = false,
  ): Promise<Awaited<T> | undefined> {
    if (this.failed) return undefined;
    await this.previous;
    if (this.failed) return undefined;
    const answer = await this.bounded(operation, read);
    if (answer !== FAILED && answer !== SILENT) return answer;
    this.failed = true;
    if (answer === SILENT) this.silent = true;
    return undefined;
  }
}

export function fromStore(pair: TokenPair | null | undefined | typeof FAILED | typeof SILENT): TokenPair | null {
  return typeof pair === 'symbol' ? null : (completed(pair) ?? null);
}

/** A pair the plugin can use, with its JWT's expiry when the store kept none; undefined for anything else. */
export function completed(pair: TokenPair | null | undefined): TokenPair | undefined {
  return pair && typeof pair.access === 'string' ? withJwtExpiry(pair) : undefined;
}
