// One turn at a shared store: what a renewal (or a call of the user's) does there under the store's lock, or with the
// lock missed, in order, every call bounded; and the locks as the plugin holds them. The link (link.ts) opens turns.
import { accountRecordIn } from '../stores/common/account-record.js';
import type { AccountRecord, TokenPair, TokenStore, TokenStoreLock } from '../contract/store.js';
import { TurnLost } from '../account/link.js';
import type { Turn } from '../account/link.js';
import { FAILED, SILENT } from './calls.js';
import type { StoreCalls } from './calls.js';
import type { Pairs } from '../account/pairs.js';
import type { RecordKeeper } from './record.js';

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

/** What a turn reads and writes with: the store's calls, the store, what its pairs are taken for, and its record. */
export interface TurnParts {
  readonly calls: StoreCalls;
  readonly store: TokenStore;
  /** A pair read from the store, as this holder can use it (null for none): see link.ts' `fromStore`. */
  readonly fromStore: (read: unknown) => TokenPair | null;
  /** The account's pairs: the ones given up, the rule for another holder's pair. */
  readonly pairs: Pairs;
  /** The account's record, when the store keeps it. */
  readonly record: RecordKeeper | undefined;
}

/**
 * The store as one renewal (or call of the user's) uses it: under its lock (or none), with every call bounded; a
 * store seen failing is not called again in the same turn but to release its lock (it answers as if empty, or
 * written), so that a silent store costs a renewal one timeout, not one per call. The writes go on off the path of the
 * requests waiting for the pair, and the lock is released once they are done. Its calls begin once the turns before it
 * have ended, so that writes land in the order they were made, with or without a lock.
 */
export class StoreTurn implements Turn {
  private failed: boolean;
  private silent = false;
  private readonly writes: Promise<unknown>[] = [];
  private previous: Promise<unknown> = Promise.resolve();
  private finish: () => void = () => undefined;
  /** The record as it was read at {@link openRecord}, to tell whether the turn changed it. */
  private recordBefore: string | undefined;
  /** Resolves once `end()` has awaited the writes and released the lock. */
  readonly ended = new Promise<void>((resolve) => (this.finish = resolve));

  /** `answered`: false when a try at the lock got no answer, which is the store failing already. */
  constructor(
    private readonly parts: TurnParts,
    private readonly lock: HeldLock,
    answered: boolean,
  ) {
    this.failed = !answered;
  }

  get lockMissed(): boolean {
    return this.lock.missed !== undefined;
  }

  get missedBecause(): unknown {
    return this.lock.missed?.cause;
  }

  get lockTaken(): boolean {
    return this.lock !== NO_LOCK && this.lock.missed === undefined;
  }

  get storeSilent(): boolean {
    return this.silent;
  }

  /**
   * Throws {@link TurnLost} when the lock's lease may have lapsed: asked right before each login or token call
   * leaves, as late as the plugin can ask, so that a holder that thaws after its lease lapsed sends nothing.
   */
  confirmLease(): void {
    if (this.leaseLost) throw new TurnLost({ lapsed: true });
  }

  get leaseLost(): boolean {
    const left = this.lock.leaseLeftMs?.();
    return left !== undefined && !(left > 0);
  }

  /** Begins the calls of this turn after `previous`, the end of the turns before it. */
  follow(previous: Promise<unknown>): void {
    this.previous = previous;
  }

  async read(): Promise<TokenPair | null> {
    const pair = await this.get();
    return pair && !this.parts.pairs.givenUp(pair) ? pair : null;
  }

  async openRecord(): Promise<void> {
    const { record } = this.parts;
    if (record) this.recordBefore = await record.open(this);
  }

  closeRecord(): void {
    this.parts.record?.close(this, this.recordBefore);
  }

  /** The stored pair as this holder can use it, or null. */
  async get(): Promise<TokenPair | null> {
    return this.parts.fromStore(await this.call((store) => store.get(), true));
  }

  /** The account's record the store keeps, if it keeps one and it is one. */
  async getAccount(): Promise<AccountRecord | undefined> {
    return accountRecordIn(await this.call((store) => store.getAccount?.(), true));
  }

  /** Writes the account's record without waiting for it; the lock is released once it is written. */
  setAccount(record: AccountRecord): void {
    this.writes.push(this.call((store) => store.setAccount?.(record, this.lock.fence)));
  }

  async clear(): Promise<void> {
    await this.call((store) => store.clear(this.lock.fence));
  }

  /**
   * Writes `pair`, just obtained and in use, without waiting for it. When the lock lapsed while this holder renewed
   * (it stalled past the lease) and a later holder has written since, the fence refuses the write, and that holder's
   * pair is the one the others use: ours stays valid for the requests that have it, but one pair per account is the
   * point of sharing, so the requests that follow carry the later one, unless `stillWanted` says a logout came
   * meanwhile. The fence vouches for that pair even if this holder gave it up for the one it was writing.
   */
  write(pair: TokenPair, stillWanted: () => boolean): void {
    const { pairs } = this.parts;
    this.writes.push(
      (async () => {
        if ((await this.call((store) => store.set(pair, this.lock.fence))) !== false) return;
        const later = await this.get();
        if (!later || !stillWanted() || later.access === pairs.current?.pair.access) return;
        if (pairs.accepts(later, { renewing: true, vouched: true })) pairs.use(later, true);
      })(),
    );
  }

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
    const { calls, store } = this.parts;
    const answer = await calls.make(() => operation(store), { read });
    if (answer !== FAILED && answer !== SILENT) return answer;
    this.failed = true;
    if (answer === SILENT) this.silent = true;
    return undefined;
  }
}
