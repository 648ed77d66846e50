// The store from the plugin's side, in one room: the first load, the subscription to what other holders (tabs,
// processes, hosts) store, every call bounded by `storeTimeoutMs` and reported when it fails, and the turns each
// renewal (or call of the user's) takes at the store under its lock, one after another (each a StoreTurn,
// store-turn.ts).
import type { AccountState, PairInUse } from '../pairs.js';
import type { TimedOut } from '../../support/abort.js';
import { ABORTED, settle, TIMED_OUT, UNANSWERED, unanswered } from '../../support/deadline.js';
import { storeUnavailable } from './outage.js';
import { hasCode, TokenAuthError } from '../../contract/errors.js';
import { accountRecordIn } from '../../stores/account-record.js';
import type { SecretList } from '../../support/redact.js';
import type { AccountRecord, TokenPair, TokenStore, TokenStoreLock } from '../../contract/store.js';
import { completed, FAILED, fromStore, missed, NO_LOCK, noop, SILENT, StoreTurn } from './turn.js';
import type { HeldLock } from './turn.js';

/**
 * This holder's link to the user's store. A store failure must not fail requests while the plugin holds tokens in
 * memory: every call that fails is reported through `onFailure` (as `STORE_FAILED`, secrets masked) and answers as if
 * the store were empty, or had written. Nor may a store that stops answering (a paused Redis, a hung mount) hold
 * requests: past `timeoutMs` a call counts as failed, and is left to finish on its own. So does each try at the lock,
 * for a store that bounds its tries by the `tryTimeoutMs` it is given (a lock that is merely busy is waited for, up to
 * the store's `lockTimeoutMs`).
 */
export class StoreLink {
  private loading: Promise<void> | undefined;
  private loadedOnce = false;
  /** See {@link StoreLink.startEmpty}. */
  private own = false;
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
  /** The messages of the missing keys said so far: each is said once. */
  private readonly keysMissing = new Set<string>();
  /** See {@link StoreLink.outage}. */
  private down: Outage | undefined;

  /**
   * `keepsAccount`: the store keeps the account's record, which its holders share (see {@link keepsAccount} in
   * account-record.ts).
   */
  constructor(
    private readonly store: TokenStore,
    readonly keepsAccount: boolean,
    private readonly timeoutMs: number,
    private readonly account: AccountState,
    private readonly secrets: SecretList,
    private readonly onFailure: (error: TokenAuthError) => void,
  ) {
    this.unsubscribe =
      store.subscribe?.((pair) => {
        // The store told of a pair: it answers again, if it was down.
        this.down = undefined;
        const checked = pair === null ? null : completed(pair);
        if (checked !== undefined) this.stored(checked);
      }) ?? noop;
    this.unsubscribeAccount = (keepsAccount && store.subscribeAccount?.(() => this.waiter?.halting())) || noop;
  }

  /**
   * The account's record as the store has it now, read without the lock, to consult (not to change) the guards; one
   * read for the callers that ask at once. Undefined when there is none, or the store keeps none.
   */
  readAccount(): Promise<AccountRecord | undefined> {
    if (!this.keepsAccount) return Promise.resolve(undefined);
    return (this.accountReading ??= this.call(() => this.store.getAccount?.(), { read: true })
      // FAILED, as anything that is not a record, is none.
      .then(accountRecordIn)
      .finally(() => (this.accountReading = undefined)));
  }

  /**
   * The stored pair, read without the lock, to see whether another holder stored one this holder has not heard of;
   * one read for the callers that ask at once. Null when there is none, or it is one this holder gave up.
   */
  peek(): Promise<TokenPair | null> {
    return (this.pairReading ??= this.call(() => this.store.get(), { read: true })
      .then((read) => {
        const pair = fromStore(read);
        return pair && !this.account.givenUp(pair) ? pair : null;
      })
      .finally(() => (this.pairReading = undefined)));
  }

  /**
   * The store is down: a call failed (or got no answer) and none has succeeded since, nor has the store told of a pair.
   * The first failure of an outage is reported; the calls that fail after it are not, one by one.
   */
  get outage(): Outage | undefined {
    return this.down;
  }

  /**
   * What a request says whose `timeout` passed while it waited for the account's record (a refusal about to renew):
   * when the store is down, or turns out to be by the end of the read under way (bounded by `storeTimeoutMs`),
   * STORE_UNAVAILABLE with the store's error; otherwise nothing, and axios' own timeout error.
   */
  readonly readTimedOut: TimedOut = async (config) => {
    const reading = this.accountReading;
    if (!this.down && reading) await settle(reading, { ms: this.timeoutMs, signal: config.signal });
    const down = this.down;
    return down && storeUnavailable(down.cause, `the request's \`timeout\` (${config.timeout} ms) passed first`);
  };

  /** The stored pair has been read once: until then, a request goes through `load()`. */
  get loaded(): boolean {
    return this.loadedOnce;
  }

  /** The store is a new one that nobody else holds (the default memory store): there is nothing to read. */
  startEmpty(): void {
    this.loadedOnce = true;
    this.loading = Promise.resolve();
    this.own = true;
  }

  /** Other holders may share the store: what it holds may change, or be lost, under this one. */
  get shares(): boolean {
    return !this.own;
  }

  /** Reads the stored pair once, for the first requests. */
  load(): Promise<void> {
    return (this.loading ??= (async () => {
      let read;
      try {
        read = await this.call(() => this.store.get(), {
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
      if (pair && !this.account.current) this.account.use(pair, true);
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
    const waiting = new AbortController();
    let stop: Error | undefined;
    const waiter = {
      stored: (pair: TokenPair): void => {
        if (this.account.accepts(pair, { replacing, renewing: true })) waiting.abort();
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
    const current = this.account.current;
    return current && !this.account.expired(current) ? current : this.open();
  }

  /** The stored pair, unless it is a stale copy of one this holder gave up (a replica behind, a write replayed). */
  async read(turn: StoreTurn): Promise<TokenPair | null> {
    const pair = await turn.get();
    return pair && !this.account.givenUp(pair) ? pair : null;
  }

  /**
   * Has `pair`, just obtained and in use, written in `turn`. When the lock lapsed while this holder renewed (it
   * stalled past the lease) and a later holder has written since, that holder's pair is the one the others use: ours
   * stays valid for the requests that have it, but one pair per account is the point of sharing, so the requests that
   * follow carry the later one, unless `stillWanted` says a logout came meanwhile. The fence vouches for that pair
   * even if this holder gave it up for the one it was writing.
   */
  write(turn: StoreTurn, pair: TokenPair, stillWanted: () => boolean): void {
    turn.write(pair, (later) => {
      if (!stillWanted() || later.access === this.account.current?.pair.access) return;
      if (this.account.accepts(later, { renewing: true, vouched: true })) this.account.use(later, true);
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
    if (pair === null) return this.account.drop(true);
    if (pair.access === this.account.current?.pair.access || !this.account.accepts(pair)) return;
    this.account.use(pair, true);
    this.waiter?.stored(pair);
  }

  /**
   * A turn that begins its calls once the turns before it have ended, so that writes land in order. When the store
   * has just been seen not to answer, the turn calls it not at all, not even for the lock.
   */
  private async open(signal?: AbortSignal): Promise<StoreTurn> {
    const silent = this.silentAtLoad;
    this.silentAtLoad = undefined;
    let answered = silent === undefined;
    const lock =
      silent !== undefined
        ? this.store.lock
          ? missed(silent)
          : NO_LOCK
        : await this.lock(signal, () => (answered = false));
    const turn = new StoreTurn((operation, read) => this.call(() => operation(this.store), { read }), lock, answered);
    const previous = this.settling;
    turn.follow(previous);
    this.settling = Promise.all([previous, turn.ended]).then(() => undefined);
    return turn;
  }

  /**
   * The store's lock, or one that holds nothing when the store has none or could not grant it (then with the store's
   * error). Once `signal` aborts (the lock is no longer needed), the wait ends at once with no lock, and a lock granted
   * late is released, and `flush()` waits for that release too (a bounded one). Its release reports a failure like
   * any call.
   */
  private async lock(signal: AbortSignal | undefined, unanswered: () => void): Promise<HeldLock> {
    const store = this.store;
    if (!store.lock || signal?.aborted) return NO_LOCK;
    const locking = Promise.resolve().then(() => store.lock?.({ signal, tryTimeoutMs: this.timeoutMs }));
    let cause: unknown;
    // A store that stops waiting when the signal aborts rejects then: that is no failure, and is not waited for.
    const granted = await this.call(() => settle(locking, { signal }), {
      bounded: false,
      failed: (error, masked) => {
        cause = masked;
        if (isUnanswered(error)) unanswered();
      },
    });
    // Every symbol is no lock: FAILED, SILENT, ABORTED or TIMED_OUT.
    if (typeof granted === 'symbol' || !granted || signal?.aborted) {
      // Granted after the wait was given up: nobody would release it. A process that flushes and exits leaves no lock.
      const lateRelease = locking.then((late) => late && this.release(late), noop);
      const previous = this.settling;
      this.settling = Promise.all([previous, settle(lateRelease, { ms: this.timeoutMs })]).then(noop);
      // A wait that a newer pair ended needs no lock; any other end is a lock missed.
      return granted === ABORTED || signal?.aborted ? NO_LOCK : missed(cause);
    }
    return {
      fence: granted.fence,
      leaseLeftMs: granted.leaseLeftMs && (() => granted.leaseLeftMs!()),
      release: () => this.release(granted),
    };
  }

  private async release(lock: TokenStoreLock): Promise<void> {
    await this.call(() => lock.release());
  }

  /**
   * The answer of `operation`; FAILED once it failed, SILENT when it got no answer (when `bounded`, within `timeoutMs`; or
   * a store's try at its lock, bounded by the store); undefined when
   * `operation` is a `read` and the store answered that what it holds cannot be used (see below). `failed` hears of a
   * failure, with the error as reported (masked). The first failure of an outage is reported; see {@link outage}.
   */
  private async call<T>(
    operation: () => T | Promise<T>,
    {
      bounded = true,
      read = false,
      failed = noop,
    }: { bounded?: boolean; read?: boolean; failed?: (error: unknown, masked: unknown) => void } = {},
  ): Promise<T | undefined | typeof FAILED | typeof SILENT> {
    const call = Promise.resolve().then(operation);
    try {
      const answer = bounded ? await settle(call, { ms: this.timeoutMs }) : await call;
      if (answer === TIMED_OUT)
        throw unanswered(`it did not answer within ${Math.round(this.timeoutMs)} ms, \`storeTimeoutMs\``);
      this.down = undefined;
      return answer as Awaited<T>;
    } catch (error) {
      // A record sealed with a key this holder lacks: nothing here can be done with it, and a login would seal a pair
      // that the holders with the key could not open in turn. The request fails, saying which key (once, as a failure).
      if (hasCode(error, 'STORE_KEY_MISSING')) {
        if (!this.keysMissing.has(error.message)) this.onFailure(error);
        this.keysMissing.add(error.message);
        throw error;
      }
      // The store answered, and says what it holds cannot be used (a sealed pair that failed authentication): as a
      // store failure, the turn would write nothing and every holder would log in for itself; read as nothing, the
      // first holder under the lock logs in once and overwrites it, and the others take its pair.
      if (read && hasCode(error, 'STORE_FAILED')) {
        this.onFailure(this.secrets.copy(error));
        return undefined;
      }
      const reason = this.secrets.mask(error instanceof Error ? error.message : String(error));
      const cause = error instanceof Error ? this.secrets.copy(error) : undefined;
      const first = this.down === undefined;
      if (first) this.down = { cause, said: new Set() };
      else this.down!.cause = cause;
      failed(error, cause);
      if (first)
        this.onFailure(
          new TokenAuthError(
            'STORE_FAILED',
            `The token store failed (${reason}); going on with the tokens held in memory.`,
            { cause },
          ),
        );
      return isUnanswered(error) ? SILENT : FAILED;
    }
  }
}

/**
 * An outage of the store as this holder sees it: the store's last error (masked), and the warnings said of it so far,
 * each said once per outage.
 */
export interface Outage {
  cause: unknown;
  readonly said: Set<'down' | 'alone'>;
}

/** A failure that was a store not answering. */
function isUnanswered(error: unknown): boolean {
  return error instanceof Error && error.name === UNANSWERED;
}
