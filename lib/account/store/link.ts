// The store from one account's side: the first load, what other holders (tabs, processes, hosts) store, the account's
// record read without the lock, and the turns each renewal (or call of the user's) takes at the store under its lock,
// one after another (each a StoreTurn, turn.ts). Every call goes through StoreCalls (calls.ts), bounded and reported.
import type { TimedOut } from '../../support/abort.js';
import { settle } from '../../support/deadline.js';
import { accountRecordIn } from '../../stores/common/account-record.js';
import type { SecretList } from '../../support/redact.js';
import type { AccountRecord, TokenPair } from '../../contract/store.js';
import type { PairInUse, Pairs } from '../pairs.js';
import type { AccountReports } from '../reports.js';
import { isUnanswered, StoreCalls } from './calls.js';
import type { Outage } from './calls.js';
import type { LinkedStore } from './linked-store.js';
import { storeUnavailable } from './outage.js';
import { completed, fromStore, missed, NO_LOCK, noop, StoreTurn } from './turn.js';
import { takeLock } from './lock.js';

export type { Outage };

/** What the link of an account is made of: its store, linked at attach, and the parts of the account it serves. */
export interface LinkParts {
  readonly linked: LinkedStore;
  readonly timeoutMs: number;
  readonly pairs: Pairs;
  readonly secrets: SecretList;
  readonly reports: AccountReports;
}

/**
 * This holder's link to the account's store. A store failure must not fail requests while the plugin holds a valid
 * token: every call that fails is reported (as `STORE_FAILED`, secrets masked, the first of an outage) and answers as if
 * the store were empty, or had written. Nor may a store that stops answering (a paused Redis, a hung mount) hold
 * requests: past `storeTimeoutMs` a call counts as failed, and is left to finish on its own. So does each try at the
 * lock, for a store that bounds its tries by the `tryTimeoutMs` it is given.
 */
export class StoreLink {
  private loading: Promise<void> | undefined;
  private loadedOnce = false;
  /** The first read got no answer (this error): the first turn does not wait for the store a second time. */
  private silentAtLoad: unknown;
  /** Every turn's writes and release so far, in the order the turns began. */
  private settling: Promise<void> = Promise.resolve();
  /**
   * The renewal waiting for the lock, if any: told of each pair another holder stored meanwhile, and of each login
   * pause another holder wrote into the account's record.
   */
  private waiter: { stored(pair: TokenPair): void; halting(): void } | undefined;
  private readonly unsubscribe: () => void;
  private readonly unsubscribeAccount: () => void;
  private accountReading: Promise<AccountRecord | undefined> | undefined;
  private pairReading: Promise<TokenPair | null> | undefined;
  private readonly calls: StoreCalls;

  constructor(private readonly parts: LinkParts) {
    const { linked, timeoutMs, secrets, reports } = parts;
    this.calls = new StoreCalls(timeoutMs, secrets, reports);
    const { store } = linked;
    this.unsubscribe =
      store.subscribe?.((pair) => {
        this.calls.heard();
        const checked = pair === null ? null : completed(pair);
        if (checked !== undefined) this.stored(checked);
      }) ?? noop;
    this.unsubscribeAccount = (linked.keepsRecord && store.subscribeAccount?.(() => this.waiter?.halting())) || noop;
    // A store nobody else holds (a memory store of the attachment's own) has nothing to read.
    if (!linked.shared) {
      this.loadedOnce = true;
      this.loading = Promise.resolve();
    }
  }

  /** The store keeps the account's record, which its holders share. */
  get keepsRecord(): boolean {
    return this.parts.linked.keepsRecord;
  }

  /** With `dpop`, the store exports a login's key into its sealed record: the key is made extractable. */
  get exportsDpopKeys(): boolean {
    return this.parts.linked.exportsDpopKeys;
  }

  /** Other holders may share the store: what it holds may change, or be lost, under this one. */
  get shares(): boolean {
    return this.parts.linked.shared;
  }

  /** See {@link StoreCalls.outage}. */
  get outage(): Outage | undefined {
    return this.calls.outage;
  }

  /** The stored pair has been read once: until then, a request goes through `load()`. */
  get loaded(): boolean {
    return this.loadedOnce;
  }

  /**
   * What a request says whose `timeout` passed while it waited for the account's record (a refusal about to renew):
   * when the store is down, or turns out to be by the end of the read under way (bounded by `storeTimeoutMs`),
   * STORE_UNAVAILABLE with the store's error; otherwise nothing, and axios' own timeout error.
   */
  readonly readTimedOut: TimedOut = async (config) => {
    const reading = this.accountReading;
    if (!this.outage && reading)
      await settle(reading, { ms: this.parts.timeoutMs, signal: config.signal ?? undefined });
    const down = this.outage;
    return down && storeUnavailable(down.cause, `the request's \`timeout\` (${config.timeout} ms) passed first`);
  };

  /**
   * The account's record as the store has it now, read without the lock, to consult (not to change) the guards; one
   * read for the callers that ask at once. Undefined when there is none, or the store keeps none.
   */
  readAccount(): Promise<AccountRecord | undefined> {
    if (!this.keepsRecord) return Promise.resolve(undefined);
    const { store } = this.parts.linked;
    return (this.accountReading ??= this.calls
      .make(() => store.getAccount?.(), { read: true })
      // FAILED, as anything that is not a record, is none.
      .then(accountRecordIn)
      .finally(() => (this.accountReading = undefined)));
  }

  /**
   * The stored pair, read without the lock, to see whether another holder stored one this holder has not heard of;
   * one read for the callers that ask at once. Null when there is none, or it is one this holder gave up.
   */
  peek(): Promise<TokenPair | null> {
    const { store } = this.parts.linked;
    return (this.pairReading ??= this.calls
      .make(() => store.get(), { read: true })
      .then((read) => {
        const pair = fromStore(read);
        return pair && !this.parts.pairs.givenUp(pair) ? pair : null;
      })
      .finally(() => (this.pairReading = undefined)));
  }

  /** Reads the stored pair once, for the first requests. */
  load(): Promise<void> {
    const { store } = this.parts.linked;
    return (this.loading ??= (async () => {
      let read;
      try {
        read = await this.calls.make(() => store.get(), {
          read: true,
          failed: (error, masked) => {
            if (isUnanswered(error)) this.silentAtLoad = masked;
          },
        });
      } catch (error) {
        // A record this holder cannot open (sealed with a key it lacks): the next request reads it again.
        this.loading = undefined;
        throw error;
      }
      const pair = fromStore(read);
      this.loadedOnce = true;
      if (pair && !this.parts.pairs.current) this.parts.pairs.use(pair, true);
    })());
  }

  /** A turn at the store, under its lock, for what the user asked for (a login, a refresh, `setTokens`, a logout). */
  turn(): Promise<StoreTurn> {
    return this.open();
  }

  /**
   * A turn at the store, under its lock, for a renewal of the client rule, which found `replacing` (if any) refused or
   * expired; or, when another holder's pair that the renewal accepts arrived while it waited for the lock, that pair,
   * in use now: the renewal's outcome, and nobody is called. When another holder writes a login pause into the
   * account's record (its login was rejected), `halted` is asked whether it stops this renewal: its error (the
   * pause's) ends the wait and the renewal, so that a fleet does not take the lock one by one to learn it there.
   */
  async turnForRenewal(
    replacing: TokenPair | undefined,
    halted: () => Promise<Error | undefined>,
  ): Promise<StoreTurn | PairInUse> {
    const { pairs } = this.parts;
    const waiting = new AbortController();
    let stop: Error | undefined;
    const waiter = {
      stored: (pair: TokenPair): void => {
        if (pairs.accepts(pair, { replacing, renewing: true })) waiting.abort();
      },
      halting: (): void => {
        void halted().then((error) => {
          if (!error || waiting.signal.aborted) return;
          stop = error;
          waiting.abort();
        }, noop);
      },
    };
    this.waiter = waiter;
    try {
      const turn = await this.open(waiting.signal);
      if (!waiting.signal.aborted) return turn;
      // It holds no lock, or one granted just before the abort, which its end releases.
      void turn.end();
    } finally {
      if (this.waiter === waiter) this.waiter = undefined;
    }
    if (stop) throw stop;
    // The pair that ended the wait may have gone since (a logout elsewhere): then wait for the lock after all.
    const current = pairs.current;
    return current && !pairs.expired(current) ? current : this.open();
  }

  /** The stored pair, unless it is a stale copy of one this holder gave up (a replica behind, a write replayed). */
  async read(turn: StoreTurn): Promise<TokenPair | null> {
    const pair = await turn.get();
    return pair && !this.parts.pairs.givenUp(pair) ? pair : null;
  }

  /**
   * Has `pair`, just obtained and in use, written in `turn`. When the lock lapsed while this holder renewed (it
   * stalled past the lease) and a later holder has written since, that holder's pair is the one the others use: ours
   * stays valid for the requests that have it, but one pair per account is the point of sharing, so the requests that
   * follow carry the later one, unless `stillWanted` says a logout came meanwhile. The fence vouches for that pair
   * even if this holder gave it up for the one it was writing.
   */
  write(turn: StoreTurn, pair: TokenPair, stillWanted: () => boolean): void {
    const { pairs } = this.parts;
    turn.write(pair, (later) => {
      if (!stillWanted() || later.access === pairs.current?.pair.access) return;
      if (pairs.accepts(later, { renewing: true, vouched: true })) pairs.use(later, true);
    });
  }

  /** Resolves once every turn so far has written what it had to and released its lock. */
  settled(): Promise<void> {
    return this.settling;
  }

  close(): void {
    this.unsubscribe();
    this.unsubscribeAccount();
  }

  /** A pair another holder stored (null: it cleared the pair, a logout), used when the account's rule accepts it. */
  private stored(pair: TokenPair | null): void {
    const { pairs } = this.parts;
    if (pair === null) return pairs.drop(true);
    if (pair.access === pairs.current?.pair.access || !pairs.accepts(pair)) return;
    pairs.use(pair, true);
    this.waiter?.stored(pair);
  }

  /**
   * A turn that begins its calls once the turns before it have ended, so that writes land in order. When the store
   * has just been seen not to answer, the turn calls it not at all, not even for the lock.
   */
  private async open(signal?: AbortSignal): Promise<StoreTurn> {
    const { linked } = this.parts;
    const silent = this.silentAtLoad;
    this.silentAtLoad = undefined;
    let answered = silent === undefined;
    const lock =
      silent !== undefined
        ? linked.locks
          ? missed(silent)
          : NO_LOCK
        : await takeLock({
            linked,
            calls: this.calls,
            timeoutMs: this.parts.timeoutMs,
            signal,
            unanswered: () => (answered = false),
            settling: (late) => this.after(late),
          });
    const turn = new StoreTurn(
      (operation, read) => this.calls.make(() => operation(linked.store), { read }),
      lock,
      answered,
    );
    this.after(turn.ended, (previous) => turn.follow(previous));
    return turn;
  }

  /** Adds `ending` to what `settled()` waits for, after what it waited for so far (given to `follow`, if wanted). */
  private after(ending: Promise<unknown>, follow: (previous: Promise<void>) => void = noop): void {
    const previous = this.settling;
    follow(previous);
    this.settling = Promise.all([previous, ending]).then(noop);
  }
}
