// A shared store from one account's side: the first load, what other holders (tabs, processes, hosts) store, the
// account's record read without the lock, and the turns each renewal (or call of the user's) takes at the store under
// its lock, one after another (each a StoreTurn, turn.ts). Every call goes through StoreCalls (calls.ts), bounded and
// reported.
import type { TimedOut } from '../support/abort.js';
import { settle } from '../support/deadline.js';
import { accountRecordIn } from '../stores/common/account-record.js';
import { withJwtExpiry } from '../token-calls/parse.js';
import type { AccountRecord, TokenPair } from '../contract/store.js';
import type { CheckedStore } from '../account/checked-store.js';
import type { LinkParts, Outage, SharedStoreLink, Turn, TurnRequest, TurnWait } from '../account/link.js';
import type { PairInUse } from '../account/pairs.js';
import { storeUnavailable } from './outage-errors.js';
import { isUnanswered, noop, StoreCalls } from './calls.js';
import { takeLock } from './lock.js';
import type { StoreOutageWait } from './outage.js';
import { StoreTurnWait } from './turn-wait.js';
import { RecordKeeper } from './record.js';
import { missed, NO_LOCK, StoreTurn } from './turn.js';

/** What the link of an account is made of: its store, checked at attach, and the parts of the account it serves. */
export interface SharedLinkParts extends LinkParts {
  readonly checked: CheckedStore;
}

/**
 * This holder's link to the account's shared store. A store failure must not fail requests while the plugin holds a
 * valid token: every call that fails is reported (as `STORE_FAILED`, secrets masked, the first of an outage) and
 * answers as if the store were empty, or had written. Nor may a store that stops answering (a paused Redis, a hung
 * mount) hold requests: past `storeTimeoutMs` a call counts as failed, and is left to finish on its own. So does each
 * try at the lock, for a store that bounds its tries by the `tryTimeoutMs` it is given.
 */
export class SharedLink implements SharedStoreLink {
  readonly shares = true;
  readonly keepsRecord: boolean;
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
  /** The wait of the renewal under way for a store that is down: a pair another holder stored ends its pause. */
  private wait: StoreOutageWait | undefined;
  private accountReading: Promise<AccountRecord | undefined> | undefined;
  private pairReading: Promise<TokenPair | null> | undefined;
  private readonly calls: StoreCalls;
  private readonly record: RecordKeeper | undefined;

  constructor(private readonly parts: SharedLinkParts) {
    const { checked, options, secrets, reports, guards, pairs } = parts;
    this.calls = new StoreCalls(options.storeTimeoutMs, secrets, reports, options);
    this.keepsRecord = checked.keepsRecord;
    this.record = checked.keepsRecord ? new RecordKeeper(guards, pairs, () => this.readAccount()) : undefined;
  }

  /** The store told of a pair another holder stored (null: it cleared the pair) through its `subscribe`. */
  heard(pair: TokenPair | null): void {
    this.calls.heard();
    // A pair heard of that this holder cannot use (under DPoP, one without its key) is no news: not one to use, nor a
    // sign that the pair was dropped.
    const usable = pair === null ? null : this.usable(pair);
    if (usable !== undefined) this.stored(usable);
  }

  /** The store told, through its `subscribeAccount`, that another holder wrote a login pause into the record. */
  heardRecord(): void {
    if (this.record) this.waiter?.halting();
  }

  get outage(): Outage | undefined {
    return this.calls.outage;
  }

  get loaded(): boolean {
    return this.loadedOnce;
  }

  readonly readTimedOut: TimedOut = async (config) => {
    const reading = this.accountReading;
    if (!this.outage && reading)
      await settle(reading, { ms: this.parts.options.storeTimeoutMs, signal: config.signal ?? undefined });
    const down = this.outage;
    return down && storeUnavailable(down.cause, `the request's \`timeout\` (${config.timeout} ms) passed first`);
  };

  consult(): Promise<void> {
    return this.record?.consult() ?? Promise.resolve();
  }

  peek(): Promise<TokenPair | null> {
    const { store } = this.parts.checked;
    return (this.pairReading ??= this.calls
      .make(() => store.get(), { read: true })
      .then((read) => {
        const pair = this.fromStore(read);
        return pair && !this.parts.pairs.givenUp(pair) ? pair : null;
      })
      .finally(() => (this.pairReading = undefined)));
  }

  load(): Promise<void> {
    const { store } = this.parts.checked;
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
      const pair = this.fromStore(read);
      this.loadedOnce = true;
      const { pairs, signIn } = this.parts;
      signIn.loaded();
      if (pair && !pairs.current) pairs.use(pair, true);
    })());
  }

  turn(): Promise<Turn> {
    return this.open();
  }

  turnWait(request: TurnRequest): TurnWait {
    const { options, pairs, signIn } = this.parts;
    const parts = {
      options,
      calls: this.calls,
      pairs,
      signIn,
      tryTurn: (request: TurnRequest) => this.tryTurn(request),
      turn: () => this.open(),
      waiting: (wait: StoreOutageWait | undefined) => (this.wait = wait),
    };
    return new StoreTurnWait(parts, request);
  }

  /**
   * A try at a turn for a renewal of the client rule replacing `replacing`, which a pair another holder stores meanwhile
   * ends: the turn (its lock taken, or missed); `arrived`, that pair, in use now and still valid; or `gone`, that pair
   * gone again since. When another holder writes a login pause into the account's record, `halted` is asked whether it
   * stops this renewal: its error ends the wait and the renewal, so that a fleet does not take the lock one by one to
   * learn it there.
   */
  private async tryTurn({
    replacing,
    halted,
  }: TurnRequest): Promise<StoreTurn | { arrived: PairInUse } | { gone: true }> {
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
    const current = pairs.current;
    return current && !pairs.expired(current) ? { arrived: current } : { gone: true };
  }

  goesAlone(): void {
    this.calls.goesAlone();
  }

  settled(): Promise<void> {
    return this.settling;
  }

  /** Nothing to release: the account (lazy-link.ts) holds the subscriptions, and ends them. */
  close(): void {}

  /** The account's record as the store has it now, read without the lock; one read for the callers that ask at once. */
  private readAccount(): Promise<AccountRecord | undefined> {
    const { store } = this.parts.checked;
    return (this.accountReading ??= this.calls
      .make(() => store.getAccount?.(), { read: true })
      // FAILED, as anything that is not a record, is none.
      .then(accountRecordIn)
      .finally(() => (this.accountReading = undefined)));
  }

  /** A pair another holder stored (null: it cleared the pair, a logout), used when the account's rule accepts it. */
  private stored(pair: TokenPair | null): void {
    const { pairs } = this.parts;
    if (pair === null) {
      if (!pairs.current) return;
      pairs.drop();
      // Perhaps its logout, which the record says; read now, a request that follows fails at once rather than after a
      // turn at the lock.
      void this.record?.consult();
      return;
    }
    if (pair.access === pairs.current?.pair.access || !pairs.accepts(pair)) return;
    pairs.use(pair, true);
    // A renewal waiting out the store's outage looks at the pair another holder brought now.
    this.wait?.wake();
    this.waiter?.stored(pair);
  }

  /** A pair read from the store as this holder can use it; null for none, or one it cannot use. */
  private fromStore(read: unknown): TokenPair | null {
    return typeof read === 'symbol' ? null : (this.usable(read as TokenPair | null | undefined) ?? null);
  }

  /**
   * A pair the plugin can use, with its JWT's expiry when the store kept none; undefined for anything else, and for a
   * pair the scheme cannot use (under DPoP, one without its key: one login with a new key, never a refresh with the
   * wrong key).
   */
  private usable(pair: TokenPair | null | undefined): TokenPair | undefined {
    if (!pair || typeof pair.access !== 'string' || !this.parts.options.scheme.usable(pair)) return undefined;
    return withJwtExpiry(pair);
  }

  /**
   * A turn that begins its calls once the turns before it have ended, so that writes land in order. When the store
   * has just been seen not to answer, the turn calls it not at all, not even for the lock.
   */
  private async open(signal?: AbortSignal): Promise<StoreTurn> {
    const { checked, options, pairs } = this.parts;
    const silent = this.silentAtLoad;
    this.silentAtLoad = undefined;
    let answered = silent === undefined;
    const lock =
      silent !== undefined
        ? checked.locks
          ? missed(silent)
          : NO_LOCK
        : await takeLock({
            checked,
            calls: this.calls,
            timeoutMs: options.storeTimeoutMs,
            signal,
            unanswered: () => (answered = false),
            settling: (late) => this.after(late),
          });
    const parts = {
      calls: this.calls,
      store: checked.store,
      fromStore: (read: unknown) => this.fromStore(read),
      pairs,
      record: this.record,
    };
    const turn = new StoreTurn(parts, lock, answered);
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
