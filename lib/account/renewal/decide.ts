// Every decision of the renewal, in one pure function: from the facts at one moment of a request's or a renewal's life
// to the step it takes. The rules of each moment are a table, read top down; the first row that holds decides. The
// rooms that act (keeper.ts, machine.ts, run.ts) gather the facts, ask `decide`, and do the step; none decides itself.
// Where the renewals stand, and what moves them, is the MOVES table below, which the machine runs.

/** A request needs a pair (none ready to carry), once the renewal under way, if any, has ended and the store was read. */
export interface NeedFacts {
  readonly at: 'need';
  /** The pair in use: none, valid, expired (within its margin), or refused by the service while valid. */
  readonly pair: 'none' | 'valid' | 'expired' | 'refused';
  /** Signed out (`auth.logout()`, here or by another holder) and not signed in since. */
  readonly signedOut: boolean;
}

/** A request was refused with its ticket's pair, the waits for the record and the renewal under way over. */
export interface RefusalFacts {
  readonly at: 'refusal';
  /** A logout came after the request left: its refusal must not sign the user back in. */
  readonly loggedOut: boolean;
  /** A renewal brought a valid pair since the request left (a late 401). */
  readonly newer: boolean;
  /** Renewing may cure a refusal on this endpoint now (see guards/refusals.ts). */
  readonly mayRenew: boolean;
  /** A renewal failed since the request left: its refusal shares that outcome. */
  readonly failedSince: boolean;
}

/** A renewal starts, before it asks the store for its word. */
export interface StartFacts {
  readonly at: 'start';
  /** It follows the client rule (not the user's `login()` or `refresh()`). */
  readonly auto: boolean;
  /** Only a login would renew the pair it replaces: no refresh token to send, or one refused before. */
  readonly onlyLogin: boolean;
  /** The login pause this holder knows of refuses a login of the client rule. */
  readonly paused: boolean;
  /** The account's record was read (without the lock) since it started: `paused` is the fleet's. */
  readonly consulted: boolean;
  /** The stored pair, read without the lock: not read yet, none this renewal accepts, or one it accepts. */
  readonly stored: 'unread' | 'none' | 'accepted';
}

/** One try at the store's word (its lock) ended. */
export interface WordFacts {
  readonly at: 'word';
  /**
   * What the try got: a turn under the lock (or a store without one); the pair another holder stored meanwhile, still
   * valid; such a pair, gone again since (a logout elsewhere); or the lock missed (the store is down, or another holder
   * kept the lock past its `lockTimeoutMs`).
   */
  readonly got: 'turn' | 'arrived' | 'gone' | 'missed';
  /** `whenStoreDown`. */
  readonly policy: 'wait' | 'go-alone';
  /** The outage wait (`storeOutageWaitMs`, counted from the first try) is over. */
  readonly waitOver: boolean;
  /** This holder went alone already in this outage: its own refresh token is nobody else's. */
  readonly aloneThisOutage: boolean;
}

/** A pause between two tries at a store found down ended. */
export interface PauseFacts {
  readonly at: 'pause';
  /** A logout came meanwhile. */
  readonly loggedOut: boolean;
  /** A pair another holder stored reached this holder meanwhile, valid, and not the one the renewal replaces. */
  readonly arrived: boolean;
}

/** The renewal has its turn at the store, and has read the stored pair. */
export interface TurnFacts {
  readonly at: 'turn';
  /** The client rule (`auto`), or the user's `login()` or `refresh()`. */
  readonly mode: 'auto' | 'login' | 'refresh';
  /** The store stopped answering under its lock (what it holds is not known). */
  readonly silentUnderLock: boolean;
  /** Signed out, here or by the record read for this turn. */
  readonly signedOut: boolean;
  /** A pair another holder stored, valid, not the one the renewal replaces. */
  readonly storedAccepted: boolean;
  /** The store's lock missed, its wait over (`whenStoreDown: 'go-alone'`). */
  readonly lockMissed: boolean;
  /** The store holds no pair, though the one renewed came through it: lost, or dropped as dead. */
  readonly storeLost: boolean;
  /** The refresh token it would send was refused before, for any holder of the store. */
  readonly refusedBefore: boolean;
  /** It has something to refresh with (that its scheme can use): a refresh token, or a cookie not refused. */
  readonly canRefresh: boolean;
}

/** The renewal goes without the store's lock (`whenStoreDown: 'go-alone'`). */
export interface AloneFacts {
  readonly at: 'alone';
  /** The pair in use was this holder's alone (obtained without the lock), with a refresh token not refused. */
  readonly ownRefreshable: boolean;
}

/** The token call refused the refresh token the renewal sent. */
export interface RefreshRefusedFacts {
  readonly at: 'refresh-refused';
  /** It went without the store's lock: nothing of the store's may be taken. */
  readonly alone: boolean;
  /** A pair another holder stored (or this holder heard of) since, which carries another refresh token. */
  readonly newerAccepted: boolean;
  /**
   * The lease of the turn's lock may have lapsed, or another holder holds it now (two tabs that claimed a lease in
   * `localStorage` at once): the holder that spent the refresh token may not have stored its successor yet.
   */
  readonly leaseLost: boolean;
}

/** A login is about to ask for the credentials. */
export interface LoginFacts {
  readonly at: 'login';
  /** The login pause refuses it (never a person's typed sign-in). */
  readonly paused: boolean;
}

/** The turn was lost before a call could go: its lock's lease lapsed, or the store stopped answering under it. */
export interface TurnLostFacts {
  readonly at: 'turn-lost';
  /** The turns taken so far. */
  readonly turns: number;
  /** The lease lapsed (not the store's silence). */
  readonly lapsed: boolean;
}

/** The facts of every moment a decision is taken at. */
export type Facts =
  | NeedFacts
  | RefusalFacts
  | StartFacts
  | WordFacts
  | PauseFacts
  | TurnFacts
  | AloneFacts
  | RefreshRefusedFacts
  | LoginFacts
  | TurnLostFacts;

/** The steps each moment may take. */
export interface Steps {
  /** Carry the pair in use; fail as signed out; or renew, for the reason given. */
  need: 'use' | 'signed-out' | 'renew-no-token' | 'renew-expired' | 'renew-rejected';
  /** As keeper.ts' `Standing`. */
  refusal: 'logged-out' | 'newer' | 'no-cure' | 'failed' | 'renew';
  /** Read the record, or the stored pair, before deciding; take the stored pair; fail with the pause; or take a turn. */
  start: 'consult' | 'peek' | 'take-stored' | 'fail-paused' | 'take-turn';
  /** Renew in the turn; take the pair that arrived; try at once again; go alone; fail as unavailable; pause. */
  word: 'use-turn' | 'take-arrived' | 'try-again' | 'go-alone' | 'fail-unavailable' | 'pause';
  pause: 'logged-out' | 'take-arrived' | 'try-again';
  turn:
    | 'turn-lost'
    | 'signed-out'
    | 'take-stored'
    | 'go-alone'
    | 'log-in-store-lost'
    | 'drop-and-log-in'
    | 'log-in'
    | 'refresh';
  alone: 'refresh-own' | 'log-in';
  'refresh-refused': 'log-in' | 'take-stored' | 'turn-lost' | 'drop-and-log-in';
  login: 'fail-paused' | 'call';
  'turn-lost': 'take-turn-again' | 'fail-lapsed' | 'fail-unavailable';
}

/** A moment's rules: the first row whose test holds gives the step. The last row always holds. */
type Rules<M extends Facts['at']> = ReadonlyArray<
  readonly [holds: (facts: Extract<Facts, { at: M }>) => boolean, step: Steps[M]]
>;

const always = (): boolean => true;

/** How many turns a renewal takes in a row after one was lost before a call could go. */
export const TURNS_TRIED = 3;

/** Every rule of the renewal. */
export const RULES: { readonly [M in Facts['at']]: Rules<M> } = {
  need: [
    [(f) => f.pair === 'valid', 'use'],
    [(f) => f.signedOut, 'signed-out'],
    [(f) => f.pair === 'none', 'renew-no-token'],
    // A pair the service refused is not sent again while its renewal fails: the request waits for the next one.
    [(f) => f.pair === 'refused', 'renew-rejected'],
    [always, 'renew-expired'],
  ],
  refusal: [
    [(f) => f.loggedOut, 'logged-out'],
    [(f) => f.newer, 'newer'],
    // As any holder of a shared store found it: a permission, not an expiry, or refusals in general, not yet again.
    [(f) => !f.mayRenew, 'no-cure'],
    [(f) => f.failedSince, 'failed'],
    [always, 'renew'],
  ],
  start: [
    // A known login pause, and only a login would do: if the record still says so, and the store holds no pair this
    // holder missed (a store that tells nobody), fail with it, with no turn at the lock (for a fleet, N turns).
    [(f) => !f.auto || !f.onlyLogin || !f.paused, 'take-turn'],
    [(f) => !f.consulted, 'consult'],
    [(f) => f.stored === 'unread', 'peek'],
    [(f) => f.stored === 'accepted', 'take-stored'],
    [always, 'fail-paused'],
  ],
  word: [
    [(f) => f.got === 'turn', 'use-turn'],
    [(f) => f.got === 'arrived', 'take-arrived'],
    // The pair that ended the wait for the lock went again since: wait for the lock after all.
    [(f) => f.got === 'gone', 'try-again'],
    // The lock missed: ask the store again until the outage wait is over, then `whenStoreDown` says.
    [(f) => f.policy === 'go-alone' && (f.waitOver || f.aloneThisOutage), 'go-alone'],
    [(f) => f.waitOver, 'fail-unavailable'],
    [always, 'pause'],
  ],
  pause: [
    [(f) => f.loggedOut, 'logged-out'],
    [(f) => f.arrived, 'take-arrived'],
    [always, 'try-again'],
  ],
  turn: [
    // Nothing is generated on what a silent store may hold: the turn again.
    [(f) => f.silentUnderLock, 'turn-lost'],
    [(f) => f.mode === 'auto' && f.signedOut, 'signed-out'],
    [(f) => f.mode === 'auto' && f.storedAccepted, 'take-stored'],
    [(f) => f.lockMissed && f.mode !== 'login', 'go-alone'],
    // Never a refresh token someone may have spent.
    [(f) => f.mode !== 'login' && f.storeLost, 'log-in-store-lost'],
    [(f) => f.mode === 'auto' && f.refusedBefore, 'drop-and-log-in'],
    [(f) => f.mode === 'login' || !f.canRefresh, 'log-in'],
    [always, 'refresh'],
  ],
  alone: [
    // Its own refresh token is nobody else's; the store's may be the lock holder's to spend.
    [(f) => f.ownRefreshable, 'refresh-own'],
    [always, 'log-in'],
  ],
  'refresh-refused': [
    [(f) => f.alone, 'log-in'],
    // Rotated refresh tokens work once: another holder may have spent this one and stored its successor.
    [(f) => f.newerAccepted, 'take-stored'],
    // Nothing is dropped on the word of a lease that may be another's: the turn again, for that holder's pair.
    [(f) => f.leaseLost, 'turn-lost'],
    // Otherwise the pair is dead: dropped, so that if the login fails too, no request sends it again.
    [always, 'drop-and-log-in'],
  ],
  login: [
    [(f) => f.paused, 'fail-paused'],
    [always, 'call'],
  ],
  'turn-lost': [
    [(f) => f.turns < TURNS_TRIED, 'take-turn-again'],
    [(f) => f.lapsed, 'fail-lapsed'],
    [always, 'fail-unavailable'],
  ],
};

/** The step the renewal takes at the moment `facts` describe: the first rule of that moment that holds. */
export function decide<F extends Facts>(facts: F): Steps[F['at']] {
  const rules = RULES[facts.at] as unknown as Rules<F['at']>;
  return rules.find(([holds]) => holds(facts as never))![1];
}

// ---- Where the renewals of an account stand.

/** A state of an account's renewals. */
export type RenewalStateName = 'idle' | 'renewing' | 'failed';

/** What moves them. */
export type RenewalEvent = 'renew' | 'succeed' | 'fail';

/**
 * What moves the renewals of an account, from each state. `renew`: a request needs a pair (none in use, or one known to
 * be expired), a refusal the replay rules let renew, or the user's `login()` or `refresh()`; from `renewing` it joins
 * the renewal under way (one more of its waiters). `succeed`: the renewal brought a pair (its own, or another holder's),
 * in use now (generation + 1). `fail`: the renewal failed (failures + 1); a late refusal of a request sent before it
 * shares its error. A logout is no move: it drops the pair and moves the logout epoch on, and a renewal under way fails
 * with LOGGED_OUT as it ends.
 */
export const MOVES: { readonly [S in RenewalStateName]: { readonly [E in RenewalEvent]?: RenewalStateName } } = {
  idle: { renew: 'renewing' },
  renewing: { renew: 'renewing', succeed: 'idle', fail: 'failed' },
  failed: { renew: 'renewing' },
};

/** The state `event` moves `from` to; throws for a move the table does not have (a bug, never a user's doing). */
export function move(from: RenewalStateName, event: RenewalEvent): RenewalStateName {
  const to = MOVES[from][event];
  if (to === undefined) throw new Error(`axios-token-keeper: no renewal moves from ${from} on ${event}`);
  return to;
}
