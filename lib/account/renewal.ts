import type { InternalAxiosRequestConfig } from 'axios';
import { abortable } from '../support/abort.js';
import type { AccountState, PairInUse } from './pairs.js';
import { credentialsFor } from '../token-calls/credentials.js';
import { hasCode, signedOut, TokenAuthError } from '../contract/errors.js';
import type { RenewalReason, TokenCallReport } from '../contract/handle.js';
import type { ResolvedOptions } from '../options/defaults.js';
import { pairFromAnswer } from '../token-calls/parse.js';
import type { SecretList } from '../support/redact.js';
import type { AccountReports } from './reports.js';
import type { SharedRecord } from './shared-record.js';
import type { TimedOut } from '../support/abort.js';
import { settle } from '../support/deadline.js';
import { leaseLapsedTooOften, StoreOutageWait, storeUnavailable } from './store/outage.js';
import { StoreTurn, TurnLost } from './store/turn.js';
import type { StoreLink } from './store/link.js';
import type { TokenPair } from '../contract/store.js';
import type { CallGate, CallOutcome, TokenClient } from '../token-calls/client.js';
import type { Credentials, ParsedTokens } from '../contract/calls.js';

/**
 * Where the renewals of one account stand. What moves them, in one table (a request "needs a pair" when none is in
 * use or the one in use is known to be expired; a "refusal" is a 401 of the pair in use that the replay rules let
 * renew, see replay.ts):
 *
 * | from       | what happens                                   | to                                              |
 * | ---------- | ---------------------------------------------- | ----------------------------------------------- |
 * | idle       | a request needs a pair; a refusal; the user's  | renewing (reason `no-token`, `expired`,         |
 * | or failed  | `login()` or `refresh()`                       | `rejected` or `manual`)                         |
 * | renewing   | a request needs a pair; a refusal              | renewing: it waits for the same renewal (one    |
 * |            |                                                | more of its `waiters`)                          |
 * | renewing   | the renewal brings a pair (its own, or one     | idle, the pair in use (generation + 1)          |
 * |            | another holder stored)                         |                                                 |
 * | renewing   | the renewal fails                              | failed, with its error (`failures` + 1)         |
 * | failed     | a late refusal of a request sent before it     | failed: the request shares that error           |
 * | any        | `logout()`                                     | the pair dropped, `epoch` + 1: renewals under   |
 * |            |                                                | way end with LOGGED_OUT                         |
 *
 * One renewal, under the store's lock ({@link RenewalMachine.run}): waits for the lock, or takes the pair another
 * holder stored meanwhile → reads the store, and takes a newer valid pair found there → else refreshes (with the
 * refresh token, or the cookie) or logs in (none held, or `login()`) → a refused refresh token: takes the pair another
 * holder stored meanwhile, else drops the dead pair and logs in → keeps the new pair and has it written after the
 * waiting requests have it. A login waits out the account's login pause; every call spends the account's budget.
 */
export type RenewalState =
  | { readonly name: 'idle' }
  | {
      readonly name: 'renewing';
      readonly reason: RenewalReason;
      readonly renewal: Promise<PairInUse>;
      /** The callers that waited for it so far, which its calls report. */
      readonly waiters: Waiters;
    }
  | { readonly name: 'failed'; readonly error: unknown };

/** How many callers waited for one renewal: requests, `accessToken()`, `login()` and `refresh()` calls. */
interface Waiters {
  count: number;
  /** Those of them still waiting that wait until it ends (no abort, no timeout): counted off together as it ends. */
  untilEnd: number;
}

/** `auto` follows the client rule; `login` and `refresh` are the user's explicit calls. */
export type Mode = 'auto' | 'login' | 'refresh';

/**
 * What one renewal runs under: the logout epoch it started in, its turn at the store (under the lock, if any), the
 * credentials `auth.login()` was given for it alone, and its waiters.
 */
interface Scope {
  readonly epoch: number;
  readonly turn: StoreTurn;
  readonly credentials?: Credentials | undefined;
  readonly waiters: Waiters;
}

const ignore = (): void => {};

/**
 * How many turns in a row a renewal takes after one was lost (the lock's lease lapsed before a call could go, or the
 * store stopped answering under the lock).
 */
const TURNS_TRIED = 3;

/**
 * The renewals of one account: the state machine above. A renewal is one shared promise: the first caller starts it,
 * everyone else awaits it, and everyone gets its outcome. `changed` hears of each move of the machine.
 */
export class RenewalMachine {
  private state: RenewalState = { name: 'idle' };
  private epochCount = 0;
  private failureCount = 0;
  /** The renewal under way waits for a store that is down: since when (by `clock`), and the store's error. */
  private storeDown: { since: number; cause: unknown } | undefined;
  /** The wait of the renewal under way for a store that is down, if any: a logout or a pair that arrives cuts it. */
  private outageWait: StoreOutageWait | undefined;
  /** The try at the store the renewal under way is making, while it does not know yet whether the store is down. */
  private opening: Promise<unknown> | undefined;
  /**
   * For the waiters of a renewal due to the expiry margin: resolves with the pair in use once the store is found down,
   * while that pair has not expired. Only the generation of a token waits for the store.
   */
  private heldWhenDown: { promise: Promise<PairInUse>; resolve: (inUse: PairInUse) => void } | undefined;

  constructor(
    private readonly name: string | undefined,
    private readonly options: ResolvedOptions,
    private readonly client: TokenClient,
    private readonly account: AccountState,
    private readonly link: StoreLink,
    private readonly record: SharedRecord,
    private readonly reports: AccountReports,
    private readonly secrets: SecretList,
    private readonly changed: (failure?: unknown) => void,
  ) {}

  /** The renewal under way, if any. */
  get renewal(): Promise<PairInUse> | undefined {
    return this.state.name === 'renewing' ? this.state.renewal : undefined;
  }

  /** The logout epoch: requests sent in an earlier one must not renew. */
  get epoch(): number {
    return this.epochCount;
  }

  /** How many renewals failed so far: a request's ticket notes it as it leaves. */
  get failures(): number {
    return this.failureCount;
  }

  /** Since when (by `clock`) the renewal under way waits for a store that is down; undefined when it does not. */
  get storeDownSince(): number | undefined {
    return this.storeDown?.since;
  }

  /**
   * The pair a request may still carry while the renewal under way waits for a store that is down: the pair in use,
   * when the renewal was due to its expiry margin (not to a refusal) and the token has not expired yet. Only the
   * generation of a token waits for the store.
   */
  heldThroughOutage(): PairInUse | undefined {
    const state = this.state;
    const inUse = this.account.current;
    if (state.name !== 'renewing' || !this.storeDown || state.reason !== 'expired' || !inUse) return undefined;
    const { expiresAt } = inUse.pair;
    return expiresAt !== undefined && expiresAt > this.options.clock() ? inUse : undefined;
  }

  /** The error a late refusal shares: the last renewal's, when it failed after `failures` of them had. */
  failedSince(failures: number): { error: unknown } | undefined {
    return this.state.name === 'failed' && failures !== this.failureCount ? this.state : undefined;
  }

  /** `auth.logout()`: renewals under way end with LOGGED_OUT, and what they bring is dropped. */
  signOut(): void {
    this.epochCount += 1;
    this.outageWait?.cut();
  }

  /** A pair another holder stored was taken into use: a renewal waiting out the store's outage looks at it now. */
  pairArrived(): void {
    this.outageWait?.cut();
  }

  /** Starts a renewal for `reason`, or joins the one under way. */
  renew(reason: RenewalReason, mode: Mode = 'auto', credentials?: Credentials): Promise<PairInUse> {
    if (this.state.name === 'renewing') return this.state.renewal;
    const waiters: Waiters = { count: 0, untilEnd: 0 };
    const replacing = this.account.current?.pair;
    const start = { epoch: this.epochCount, credentials, waiters };
    // Begun once the state says `renewing`, so that what the renewal tells (a store known to be down) comes after it.
    const renewal = Promise.resolve().then(() => this.run(reason, mode, replacing, start));
    this.state = { name: 'renewing', reason, renewal, waiters };
    this.changed();
    // Waiters may all have been aborted: the shared promise must not become an unhandled rejection.
    renewal.then(
      () => {
        this.reports.stoppedWaiting(waiters.untilEnd);
        this.settle(renewal, { name: 'idle' });
      },
      (error: unknown) => {
        this.reports.stoppedWaiting(waiters.untilEnd);
        this.failureCount += 1;
        this.settle(renewal, { name: 'failed', error });
      },
    );
    return renewal;
  }

  /**
   * Waits for `renewal` (the one under way) as one of its waiters, counted in `stats().waiting` until it ends or
   * `config`'s request is aborted or out of time.
   */
  wait(renewal: Promise<PairInUse>, config?: InternalAxiosRequestConfig): Promise<PairInUse> {
    const state = this.state;
    const waiters = state.name === 'renewing' && state.renewal === renewal ? state.waiters : undefined;
    if (waiters) waiters.count += 1;
    // Due to the expiry margin only: the pair in use goes on if the store turns out to be down.
    const source =
      waiters && state.name === 'renewing' && state.reason === 'expired'
        ? Promise.race([renewal, this.heldDown()])
        : renewal;
    // A request whose `timeout` passes while the store is down says so, with the store's error.
    const waited = config ? abortable(source, config, { clock: this.options.clock, timedOut: this.outWaited }) : source;
    // Thousands of requests may wait at once: one that waits until the renewal ends is the renewal itself, counted off
    // with the others as it ends, with nothing of its own to hold. One that may stop sooner counts itself off.
    this.reports.startedWaiting();
    if (waiters && waited === renewal) {
      waiters.untilEnd += 1;
      return renewal;
    }
    return waited.finally(this.reports.stoppedOne);
  }

  /** Resolves once no renewal is under way. */
  async idle(): Promise<void> {
    while (this.renewal) await this.renewal.catch(ignore);
  }

  /** Uses a pair obtained elsewhere (`setTokens`), and has it written in `turn`, as a renewal would. */
  adopt(pair: TokenPair, turn: StoreTurn): PairInUse {
    return this.keep(pair, { epoch: this.epochCount, turn, waiters: { count: 0, untilEnd: 0 } });
  }

  /** The pair a `setTokens` argument stands for, its expiry read as an answer's unless it says `expiresAt`. */
  pairFrom(parsed: ParsedTokens, previousRefresh: string | undefined): TokenPair {
    const { clock, accessTokenLifetimeMs: lifetimeMs, marginFor } = this.options;
    return pairFromAnswer(parsed, previousRefresh, { now: clock(), lifetimeMs, marginFor });
  }

  /** See {@link heldWhenDown}. */
  private heldDown(): Promise<PairInUse> {
    if (!this.heldWhenDown) {
      let resolve: (inUse: PairInUse) => void = ignore;
      const promise = new Promise<PairInUse>((settled) => (resolve = settled));
      this.heldWhenDown = { promise, resolve };
      const held = this.heldThroughOutage();
      if (held) resolve(held);
    }
    return this.heldWhenDown.promise;
  }

  /**
   * What a request says whose `timeout` passed while it waited for the renewal under way: when the renewal waits for a
   * store that is down, or finds it so with the try it is making (given at most `storeTimeoutMs` more),
   * STORE_UNAVAILABLE with the store's error; otherwise nothing, and axios' own timeout error.
   */
  private readonly outWaited: TimedOut = async (config) => {
    const opening = this.opening;
    if (!this.storeDown && opening)
      await settle(opening, { ms: this.options.storeTimeoutMs, signal: config.signal ?? undefined });
    const down = this.storeDown;
    return down && storeUnavailable(down.cause, `the request's \`timeout\` (${config.timeout} ms) passed first`);
  };

  private settle(renewal: Promise<PairInUse>, next: RenewalState): void {
    if (this.state.name !== 'renewing' || this.state.renewal !== renewal) return;
    this.state = next;
    this.storeDown = undefined;
    this.heldWhenDown = undefined;
    this.changed(next.name === 'failed' ? next.error : undefined);
  }

  /** One renewal: see the paragraph under the table of {@link RenewalState}. */
  private async run(
    reason: RenewalReason,
    mode: Mode,
    replacing: TokenPair | undefined,
    start: Omit<Scope, 'turn'>,
  ): Promise<PairInUse> {
    // A known login pause, and only a login would do: if the record still says so, and the store holds no pair this
    // holder missed (a store that tells nobody), fail with it, with no turn at the lock (for a fleet, N turns).
    if (mode === 'auto' && this.mustLogIn(replacing) && this.account.cooldown.pending()) {
      const halt = await this.halted(replacing);
      if (halt) {
        const stored = await this.link.peek();
        if (stored && this.account.accepts(stored, { replacing, renewing: true }))
          return this.take(stored, start.epoch);
        throw halt;
      }
    }
    for (let turns = 1; ; turns += 1) {
      const turn = await this.turnWithWord(mode, replacing, start.epoch);
      // Another holder's pair arrived while this one waited for the lock.
      if (!(turn instanceof StoreTurn)) return this.take(turn.pair, start.epoch);
      const scope: Scope = { ...start, turn };
      try {
        return await this.record.within(turn, () => this.renewIn(reason, mode, replacing, scope));
      } catch (error) {
        // The turn was lost before a call could go: the lock's lease lapsed (this holder was frozen, or stalled), and
        // another holder may have renewed and spent the refresh token this one read; or the store stopped answering
        // under the lock. Nothing was sent: a turn again, which waits for the store's word and reads it anew.
        if (!(error instanceof TurnLost)) throw error;
        if (turns >= TURNS_TRIED)
          throw error.lapsed
            ? leaseLapsedTooOften(TURNS_TRIED)
            : storeUnavailable(error.cause, `it stopped answering under its lock, in each of ${TURNS_TRIED} turns`);
      } finally {
        // The waiting requests have their pair: the writes and the release go on without them.
        void turn.end();
      }
    }
  }

  /**
   * A turn at the store with its word: its lock taken (or a store without one); or the pair another holder stored
   * meanwhile, in use now. A store that is down (the lock missed) is asked again, with back-off, until it answers or
   * the outage wait, counted from the first try, is over ({@link StoreOutageWait}); then `'wait'` fails the renewal
   * with STORE_UNAVAILABLE, having sent nothing, and `'go-alone'` gives the turn with the lock missed, which renews
   * alone (at once, for a holder that already went alone in this outage: its own refresh token is nobody else's).
   */
  private async turnWithWord(
    mode: Mode,
    replacing: TokenPair | undefined,
    epoch: number,
  ): Promise<StoreTurn | PairInUse> {
    const open = (): Promise<StoreTurn | PairInUse> =>
      (this.opening =
        mode === 'auto' ? this.link.turnForRenewal(replacing, () => this.halted(replacing)) : this.link.turn());
    const { whenStoreDown, storeOutageWaitMs } = this.options;
    const wait = (this.outageWait = new StoreOutageWait(whenStoreDown, storeOutageWaitMs));
    try {
      // Known to be down: the renewal waits for it from the start (getState() says so, a request out of time says why).
      const known = this.link.outage;
      if (known) this.storeFoundDown(known.cause);
      for (;;) {
        const turn = await open();
        this.opening = undefined;
        if (!(turn instanceof StoreTurn) || !turn.lockMissed) return this.storeAnswered(turn);
        this.storeFoundDown(turn.missedBecause);
        const alone = whenStoreDown === 'go-alone' && this.link.outage?.said.has('alone');
        if (wait.over || alone) {
          if (whenStoreDown === 'go-alone') return turn;
          void turn.end();
          throw storeUnavailable(
            turn.missedBecause,
            `it did not answer within \`storeOutageWaitMs\` (${storeOutageWaitMs} ms)`,
          );
        }
        void turn.end();
        await wait.pause();
        this.checkEpoch(epoch);
        // A pair another holder stored reached this one meanwhile (pub/sub, a file event).
        const arrived = mode === 'auto' ? this.account.current : null;
        if (arrived && arrived.pair.access !== replacing?.access && !this.account.expired(arrived))
          return this.storeAnswered(arrived);
      }
    } finally {
      this.opening = undefined;
      this.outageWait = undefined;
      wait.stop();
    }
  }

  /** The renewal under way found the store down: said once per outage, and shown by `getState()`. */
  private storeFoundDown(cause: unknown): void {
    const outage = this.link.outage;
    if (outage && !outage.said.has('down')) {
      outage.said.add('down');
      this.reports.storeDown(this.options.whenStoreDown, this.options.storeOutageWaitMs);
    }
    if (this.storeDown) return;
    this.storeDown = { since: this.options.clock(), cause };
    const held = this.heldThroughOutage();
    if (held) this.heldWhenDown?.resolve(held);
    this.changed();
  }

  /** The store gave its word (its lock, or another holder's pair). */
  private storeAnswered<T extends StoreTurn | PairInUse>(turn: T): T {
    if (this.storeDown) {
      this.storeDown = undefined;
      this.changed();
    }
    return turn;
  }

  /**
   * The login pause that stops a renewal of the client rule replacing `replacing`, when only a login would do, by the
   * account's record as the store has it now (read without the lock).
   */
  private async halted(replacing: TokenPair | undefined): Promise<TokenAuthError | undefined> {
    await this.record.consult();
    return this.mustLogIn(replacing) ? this.account.cooldown.pending() : undefined;
  }

  /** Renewing `replacing` can only log in: it has no refresh token (nor a cookie's) to send, or one found refused. */
  private mustLogIn(replacing: TokenPair | undefined): boolean {
    if (replacing?.refresh !== undefined) return this.account.isRefusedRefresh(replacing.refresh);
    return !this.cookieMayRefresh;
  }

  /** The refresh token is the browser's, in a cookie, and the token call has not refused it. */
  private get cookieMayRefresh(): boolean {
    return this.options.refreshTokenInCookie && !this.account.cookieRefreshRefused;
  }

  /** The renewal's work in its turn at the store, with the account's guards as the store has them. */
  private async renewIn(
    reason: RenewalReason,
    mode: Mode,
    replacing: TokenPair | undefined,
    scope: Scope,
  ): Promise<PairInUse> {
    const { turn, epoch } = scope;
    // Signed out, here or (as the record read for this turn says) by another holder: only the user signs in again.
    if (mode === 'auto' && this.account.signedOut) throw signedOut();
    const stored = await this.link.read(turn);
    // The store stopped answering under the lock (it was paused right after it granted it): what it holds is not
    // known, so nothing is generated on it. A store that answers with an error is read as holding no pair.
    if (turn.lockTaken && turn.storeSilent) throw new TurnLost({ cause: this.link.outage?.cause });
    // Another holder of the store renewed while this one waited for the lock: use its pair, call nobody.
    if (mode === 'auto' && stored && this.account.accepts(stored, { replacing, renewing: true }))
      return this.take(stored, epoch);
    // The store's lock could not be taken: whoever holds it may be spending the refresh token the holders share right
    // now, and a rotated refresh token sent twice can cost the whole family. A pair of this holder's own instead.
    if (turn.lockMissed && mode !== 'login') return await this.goAlone(reason, mode, scope);
    const basis = stored ?? replacing;
    // The store holds no pair (or only one this holder gave up), though the one this holder renews came through it:
    // the store lost it (a restart without persistence, a failover that dropped the last write) or dropped it as
    // dead. Whoever wrote it last may have spent its refresh token already: a login rather than a token spent twice.
    if (mode !== 'login' && !stored && replacing && !this.account.current?.alone && this.link.shares)
      return await this.loginWith('store-lost', mode, scope);
    // A refresh token the token call refused (for any holder of the store) is not sent again: the pair is dead.
    if (mode === 'auto' && basis?.refresh !== undefined && this.account.isRefusedRefresh(basis.refresh)) {
      await this.discard(basis, stored, scope);
      return await this.loginWith('refresh-rejected', mode, scope);
    }
    // A refresh token in a cookie is the browser's to send: the token call goes whether or not one is held here.
    const canRefresh = basis?.refresh !== undefined || this.cookieMayRefresh;
    if (mode === 'login' || !canRefresh) return await this.loginWith(reason, mode, scope);
    try {
      return await this.refreshWith(basis?.refresh, reason, scope);
    } catch (error) {
      if (!hasCode(error, 'REFRESH_REJECTED')) throw error;
      if (basis?.refresh === undefined) this.account.cookieRefreshRefused = true;
      else this.account.refreshRefused(basis.refresh);
      // Rotated refresh tokens work once: another holder may have spent this one and stored its successor, which
      // this holder may have heard of meanwhile even where the store cannot be read (it failed this renewal).
      const again = (await this.link.read(turn)) ?? this.account.current?.pair ?? null;
      if (again && this.account.accepts(again, { replacing: basis, deadRefresh: basis?.refresh, renewing: true }))
        return this.take(again, epoch);
      // Otherwise the pair is dead: its access token was refused or is expiring, its refresh token is refused.
      // Forget it, so that if the login fails too, later requests do not send it again while they wait.
      await this.discard(basis, again, scope);
      return await this.loginWith('refresh-rejected', mode, scope);
    }
  }

  /**
   * Renews without the store: with the refresh token of a pair this holder got alone before (nobody else holds it),
   * else with one login. Said once per outage.
   */
  private async goAlone(reason: RenewalReason, mode: Mode, scope: Scope): Promise<PairInUse> {
    const outage = this.link.outage;
    if (!outage?.said.has('alone')) this.reports.wentAlone();
    outage?.said.add('alone');
    const own = this.account.current;
    const refresh = own?.alone ? own.pair.refresh : undefined;
    if (refresh !== undefined && !this.account.isRefusedRefresh(refresh)) {
      try {
        return await this.refreshWith(refresh, reason, scope);
      } catch (error) {
        if (!hasCode(error, 'REFRESH_REJECTED')) throw error;
        this.account.refreshRefused(refresh);
      }
    }
    return await this.loginWith(reason, mode, scope);
  }

  /** Uses a pair another holder wrote to the store, unless logout() came in between. */
  private take(pair: TokenPair, epoch: number): PairInUse {
    this.checkEpoch(epoch);
    const current = this.account.current;
    return pair.access === current?.pair.access ? current : this.account.use(pair, true);
  }

  private checkEpoch(epoch: number): void {
    if (epoch !== this.epochCount) {
      throw new TokenAuthError(
        'LOGGED_OUT',
        '`auth.logout()` was called while this request waited for tokens; the tokens obtained meanwhile were dropped.',
      );
    }
  }

  private async loginWith(reason: RenewalReason, mode: Mode, scope: Scope): Promise<PairInUse> {
    const paused = mode === 'login' ? undefined : this.account.cooldown.pending();
    if (paused) throw paused;
    // Credentials a person just typed: neither the budget nor the login pause is theirs (see TokenAuth.login).
    const typed = scope.credentials !== undefined;
    const outcome: CallOutcome = { attempts: 0, status: undefined };
    let credentials: Credentials;
    const asked = this.options.clock();
    try {
      credentials = await credentialsFor(this.options.credentials, scope.credentials, {
        account: this.name,
        basic: this.options.loginRequest === undefined,
        redact: (error) => this.secrets.copy(error),
      });
    } catch (error) {
      throw this.reports.failure('login', error, this.callReport(reason, outcome, asked, scope));
    }
    const started = this.options.clock();
    let parsed: ParsedTokens;
    try {
      parsed = await this.client.login(credentials, {
        account: this.name,
        gate: this.gate(scope, { budget: !typed }),
        outcome,
      });
    } catch (error) {
      if (error instanceof TokenAuthError && !typed) this.account.cooldown.rejected(error);
      throw this.reports.failure('login', error, this.callReport(reason, outcome, started, scope));
    }
    this.account.cooldown.succeeded();
    // A login that succeeded counts, even if a logout since drops what it brought.
    this.reports.login(this.callReport(reason, outcome, started, scope));
    return this.keep(this.pairFrom(parsed, undefined), scope);
  }

  private async refreshWith(refreshToken: string | undefined, reason: RenewalReason, scope: Scope): Promise<PairInUse> {
    const outcome: CallOutcome = { attempts: 0, status: undefined };
    const started = this.options.clock();
    let parsed: ParsedTokens;
    try {
      parsed = await this.client.refresh(refreshToken, {
        account: this.name,
        gate: this.gate(scope, { budget: true }),
        outcome,
      });
    } catch (error) {
      throw this.reports.failure('refresh', error, this.callReport(reason, outcome, started, scope));
    }
    const rotated = parsed.refresh !== undefined && parsed.refresh !== refreshToken && refreshToken !== undefined;
    this.reports.refresh(this.callReport(reason, outcome, started, scope), rotated);
    return this.keep(this.pairFrom(parsed, refreshToken), scope);
  }

  /**
   * What each attempt of a call of the renewal in `scope` passes as it leaves: the lease of the turn's lock, checked
   * first (a holder that thawed after its lease lapsed sends nothing), then the account's budget, unless `budget` is
   * false (a sign-in a person typed).
   */
  private gate(scope: Scope, { budget }: { budget: boolean }): CallGate {
    const { account } = this;
    return {
      pass(operation) {
        scope.turn.confirmLease();
        if (budget) account.spend(operation);
      },
    };
  }

  /** What a call of the renewal in `scope` did, `started` by the clock, for its event. */
  private callReport(reason: RenewalReason, outcome: CallOutcome, started: number, scope: Scope): TokenCallReport {
    const { attempts, status } = outcome;
    return { reason, durationMs: this.options.clock() - started, attempts, status, waiting: scope.waiters.count };
  }

  /**
   * Uses a pair this holder obtained, and has it written to the store off the waiting requests' path; one obtained
   * while the store's lock could not be taken stays this holder's alone: written without the lock, it could replace
   * the pair of the holder that has it.
   */
  private keep(pair: TokenPair, scope: Scope): PairInUse {
    this.checkEpoch(scope.epoch);
    this.account.cookieRefreshRefused = false;
    const alone = scope.turn.lockMissed;
    const inUse = this.account.use(pair, false, alone);
    if (!alone) this.link.write(scope.turn, pair, () => scope.epoch === this.epochCount);
    return inUse;
  }

  private async discard(dead: TokenPair | undefined, stored: TokenPair | null, scope: Scope): Promise<void> {
    if (!dead) return;
    if (this.account.current?.pair.access === dead.access) this.account.drop();
    if (stored?.access === dead.access) await scope.turn.clear();
  }
}
