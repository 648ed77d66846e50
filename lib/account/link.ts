// How an account reaches the place its pair is kept, in one interface: the core's own for an account nobody else holds
// (solo.ts: the pair in memory, turns one at a time under async-mutex), and the coordination layer's for a store other
// holders share (lib/coordination/: its lock, the account's record, the outage wait, the lease check), loaded by
// `import()` only where such a store is linked. The core reaches the layer through this interface alone.
import type { TimedOut } from '../support/abort.js';
import type { TokenPair } from '../contract/store.js';
import type { ResolvedOptions } from '../options/defaults.js';
import type { SecretList } from '../support/redact.js';
import type { CheckedStore } from './checked-store.js';
import type { Guards } from './guards/guards.js';
import type { PairInUse, Pairs } from './pairs.js';
import type { AccountReports } from './reports.js';
import type { SignInState } from './sign-in-state.js';

/**
 * The account's store from one account's side: the first load, the account's record read without the lock, and the
 * turns each renewal (or call of the user's) takes at the store, one after another.
 */
export interface StoreLink {
  /** The stored pair has been read once: until then, a request goes through `load()`. */
  readonly loaded: boolean;
  /** Other holders may share the store: what it holds may change, or be lost, under this one. */
  readonly shares: boolean;
  /** The store keeps the account's record, which its holders share. */
  readonly keepsRecord: boolean;
  /** The store is down as this holder sees it (a call failed and none has succeeded since), if it is. */
  readonly outage: Outage | undefined;
  /** Reads the stored pair once, for the first requests. */
  load(): Promise<void>;
  /** Brings the guards up to the account's record as the store has it now, read without the lock: to consult them. */
  consult(): Promise<void>;
  /** The stored pair, read without the lock; null when there is none (or one this holder gave up). */
  peek(): Promise<TokenPair | null>;
  /** A turn at the store, under its lock, for what the user asked for (a login, `setTokens`, a logout). */
  turn(): Promise<Turn>;
  /**
   * A renewal's wait for its turn at the store: its lock, or the pair another holder stored meanwhile, through an
   * outage for as long as `whenStoreDown` lets it wait.
   */
  turnWait(request: TurnRequest): TurnWait;
  /** A renewal goes without the store's lock (`whenStoreDown: 'go-alone'`): said once per outage (a `warning`). */
  goesAlone(): void;
  /**
   * What a request says whose `timeout` passed while it waited for the account's record: STORE_UNAVAILABLE when the
   * store is down (or turns out to be by the end of the read under way), else axios' own timeout error.
   */
  readonly readTimedOut: TimedOut;
  /** Resolves once every turn so far has written what it had to and released its lock. */
  settled(): Promise<void>;
  close(): void;
}

/** What a renewal waits for its turn for. */
export interface TurnRequest {
  /** The client rule (`auto`), or the user's `login()` or `refresh()`. */
  readonly mode: 'auto' | 'login' | 'refresh';
  /** The pair it replaces. */
  readonly replacing: TokenPair | undefined;
  /** The logout epoch it started in. */
  readonly epoch: number;
  /**
   * Whether a login pause another holder writes meanwhile stops the renewal, when only a login would do: its error
   * ends the wait, and is thrown. Asked when the store tells of such a pause.
   */
  readonly halted: () => Promise<Error | undefined>;
}

/**
 * One renewal's wait for its turns at the store, and what it says meanwhile to the requests that wait for the renewal
 * (the store found down, the pair they may carry through it).
 */
export interface TurnWait {
  /**
   * The next turn (its lock taken; or missed, for a renewal that goes alone), or `arrived`: a pair another holder stored
   * meanwhile that the renewal accepts, in use now. Throws STORE_UNAVAILABLE when the wait is over under `'wait'`, and
   * LOGGED_OUT after a logout.
   */
  next(): Promise<Turn | { readonly arrived: PairInUse }>;
  /**
   * A turn was lost with `error` before a call could go ({@link TurnLost}) in the `turns`-th turn: true to take a turn
   * again; else it throws (the error a caller gets: STORE_UNAVAILABLE, or `error` itself when it is no lost turn).
   */
  lost(error: unknown, turns: number): boolean;
  /** The pair in use while it waits for a store that is down, when that pair has not expired: it may be sent. */
  heldThroughOutage(): PairInUse | undefined;
  /** Resolves with that pair once the store is found down (never, until then). */
  held(): Promise<PairInUse>;
  /** What a request out of time while it waits says: STORE_UNAVAILABLE when the store is down, else axios' own. */
  readonly timedOut: TimedOut;
  /** Ends a pause between tries at a store that is down: a logout, to look at now. */
  wake(): void;
}

/**
 * One turn at the store: what a renewal (or a call of the user's) does there under the store's lock, or with the lock
 * missed, in order, every call bounded. The renewal reads and writes through it; the layer runs nothing of the
 * renewal's.
 */
export interface Turn {
  /** The store has a lock and this turn could not take it: the turn must not spend what the holders share. */
  readonly lockMissed: boolean;
  /** Why the lock was missed: the store's error (masked), when {@link lockMissed}. */
  readonly missedBecause: unknown;
  /** The store's lock is this turn's. */
  readonly lockTaken: boolean;
  /** A call of this turn got no answer within `storeTimeoutMs`: the store stopped answering. */
  readonly storeSilent: boolean;
  /** Throws {@link TurnLost} when the lock's lease may have lapsed: asked right before each login or token call leaves. */
  confirmLease(): void;
  /** The lock's lease may have lapsed, or is another holder's now. */
  readonly leaseLost: boolean;
  /** The stored pair, unless it is a stale copy of one this holder gave up. */
  read(): Promise<TokenPair | null>;
  /** Reads the account's record into the guards, as the store has it under the lock. */
  openRecord(): Promise<void>;
  /** Writes the guards back as the account's record, if they changed since {@link openRecord} (the lock released after). */
  closeRecord(): void;
  /** Has `pair`, just obtained and in use, written; a later holder's pair, if the fence refuses it, goes into use. */
  write(pair: TokenPair, stillWanted: () => boolean): void;
  /** Clears the stored pair, and resolves once it is done. */
  clear(): Promise<void>;
  /** Releases the lock after the writes; resolves once it is released. */
  end(): Promise<void>;
}

/** An outage of the store as this holder sees it: the store's last error (masked). */
export interface Outage {
  readonly cause: unknown;
}

/**
 * A turn lost before a login or token call went: the lease of its lock lapsed (`lapsed`: the holder was frozen, or
 * stalled, and another holder may have spent the refresh token this one read), or the store stopped answering under
 * the lock (what it holds is not known). The renewal takes its turn again; it never reaches a caller.
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

/** The parts of an account a link to a shared store serves: the store's holders change them. */
export interface LinkParts {
  readonly options: Pick<
    ResolvedOptions,
    'clock' | 'storeTimeoutMs' | 'whenStoreDown' | 'storeOutageWaitMs' | 'scheme'
  >;
  readonly pairs: Pairs;
  readonly guards: Guards;
  readonly secrets: SecretList;
  readonly reports: AccountReports;
  readonly signIn: SignInState;
}

/**
 * The link of an account to a shared store, as the coordination layer gives it: told of what the store's subscriptions
 * hear (the account subscribes at attach, before the layer has loaded: see lazy-link.ts).
 */
export interface SharedStoreLink extends StoreLink {
  /** The store told of a pair another holder stored (null: it cleared the pair), through its `subscribe`. */
  heard(pair: TokenPair | null): void;
  /** The store told, through its `subscribeAccount`, that another holder wrote a login pause into the record. */
  heardRecord(): void;
}

/** What the coordination layer gives: the link of an account to a shared store. Loaded by `import()` (attach.ts). */
export type SharedLinkMaker = (store: CheckedStore, parts: LinkParts) => SharedStoreLink;
