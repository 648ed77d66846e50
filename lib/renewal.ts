import type { InternalAxiosRequestConfig } from 'axios';
import { Account } from './account.js';
import { keepsAccount } from './account-record.js';
import type { PairInUse } from './account.js';
import { abortable, throwIfCanceled } from './abort.js';
import { credentialsFor } from './credentials.js';
import { hasCode, isTokenAuthError, TokenAuthError } from './errors.js';
import type { ResolvedOptions } from './options.js';
import { pairFromAnswer } from './parse.js';
import type { SecretList } from './redact.js';
import type { Reports } from './reports.js';
import { SignInState } from './sign-in-state.js';
import { StoreLink, StoreTurn } from './store-link.js';
import { MemoryTokenStore } from './stores/memory.js';
import type { CallOutcome, TokenClient } from './token-client.js';
import type { RenewalReason, TokenAuthState, TokenCallReport } from './handle.js';
import type { Credentials, ParsedTokens } from './types.js';
import type { TokenPair } from './store-contract.js';

/**
 * Where the renewals of one attachment stand. What moves them, in one table (a request "needs a pair" when none is in
 * use or the one in use is known to be expired; a "refusal" is a 401 of the pair in use that the replay rules let
 * renew, see replay.ts):
 *
 * | from       | what happens                                   | to                                              |
 * | ---------- | ---------------------------------------------- | ----------------------------------------------- |
 * | idle       | a request needs a pair; a refusal; the user's  | renewing (reason `no-token`, `expired`,         |
 * |            | `login()` or `refresh()`                       | `rejected` or `manual`)                         |
 * | renewing   | a request needs a pair; a refusal              | renewing: it waits for the same renewal (one    |
 * |            |                                                | more of its `waiters`)                          |
 * | renewing   | the renewal brings a pair (its own, or one     | idle, the pair in use (generation + 1)          |
 * |            | another holder stored)                         |                                                 |
 * | renewing   | the renewal fails                              | failed (`failedRenewals` + 1, the error kept)   |
 * | failed     | a late refusal of a request sent before it     | failed: the request shares that error           |
 * | failed     | a request needs a pair; a refusal since        | renewing                                        |
 * | any        | `logout()`                                     | the pair dropped, `epoch` + 1: renewals under   |
 * |            |                                                | way end with LOGGED_OUT                         |
 *
 * One renewal, under the store's lock ({@link Renewals.run}): waits for the lock, or takes the pair another holder
 * stored meanwhile → reads the store, and takes a newer valid pair found there → else refreshes (with the refresh
 * token, or the cookie) or logs in (none held, or `login()`) → a refused refresh token: takes the pair another holder
 * stored meanwhile, else drops the dead pair and logs in → keeps the new pair and has it written after the waiting
 * requests have it. A login waits out the account's login pause; every call spends the account's budget.
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
}

/** `auto` follows the client rule; `login` and `refresh` are the user's explicit calls. */
type Mode = 'auto' | 'login' | 'refresh';

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
 * The renewals of one attachment: the state machine above. A renewal is one shared promise: the first caller starts
 * it, everyone else awaits it, and everyone gets its outcome. What it consults sits beside it: the account (the pair
 * in use and the guards), the link to the store, and the token client.
 */
export class Renewals {
  readonly account: Account;
  /** What a UI renders: signed out, signing in, signed in, renewing. */
  readonly signIn = new SignInState(() => ({
    held: this.account.current !== null,
    busy: this.state.name === 'renewing' || !this.link.loaded,
  }));
  private readonly link: StoreLink;
  private state: RenewalState = { name: 'idle' };
  /** Bumped by logout(): a renewal that started before it must not bring the old account back. */
  private epochCount = 0;
  /** Renewals that failed so far: what tells a late refusal (of a request sent before the last failure) apart. */
  private failedCount = 0;
  /** The error of the last renewal that failed, which such a late refusal shares. */
  private lastFailure: unknown;
  /** Turns of this holder's at the store that are reading and changing the account's record. */
  private turnsOpen = 0;

  constructor(
    private readonly options: ResolvedOptions,
    private readonly client: TokenClient,
    private readonly reports: Reports,
    private readonly secrets: SecretList,
  ) {
    const shared = keepsAccount(options.store);
    // A pair can come back (a store event, then a write refused by the fence): it was loaded once.
    this.account = new Account(
      options,
      (pair, fromStore) => {
        if (pair && !secrets.remember(pair) && fromStore) reports.load(pair);
        // A pair another holder (a tab) brought ends a failure here too; a drop may be its logout. A renewal of this
        // holder's tells the state once, as it ends, not as it takes its pair.
        if (pair) this.signIn.failed(undefined, false);
        if (this.state.name !== 'renewing') this.signIn.update();
      },
      shared,
    );
    this.link = new StoreLink(
      options.store ?? new MemoryTokenStore(),
      shared,
      options.storeTimeoutMs,
      this.account,
      secrets,
      (e) => reports.storeFailure(e),
    );
    if (!options.store) this.link.startEmpty();
    this.signIn.update();
  }

  /**
   * Brings the account's guards up to what the store has now, to consult them (a refusal about to renew): without the
   * lock, since nothing is changed on the strength of it.
   */
  async consultAccount(): Promise<void> {
    // A turn of this holder's under way has read the record under the lock and is changing it: an older copy read
    // without the lock must not undo that (a call it spent would be forgotten, and the budget overrun).
    if (this.turnsOpen > 0) return;
    const record = await this.link.readAccount();
    if (record && this.turnsOpen === 0) this.account.restore(record);
  }

  /**
   * Changes the account's guards in the store's record, under the lock: the record is read, `change` applied to it,
   * and written back, so that what another holder wrote meanwhile is kept. Without a shared record, `change` alone.
   */
  async changeAccount(change: () => void): Promise<void> {
    if (!this.account.shared) return change();
    const turn = await this.link.turn();
    try {
      await this.withAccount(turn, change);
    } finally {
      await turn.end();
    }
  }

  /** Runs `work` on the account as `turn`'s store has it, and writes what `work` changed back in the same turn. */
  private async withAccount<T>(turn: StoreTurn, work: () => T | Promise<T>): Promise<T> {
    if (!this.account.shared) return work();
    this.turnsOpen += 1;
    try {
      const stored = await turn.getAccount();
      if (stored) this.account.restore(stored);
      const before = JSON.stringify(this.account.record());
      try {
        return await work();
      } finally {
        const after = this.account.record();
        if (JSON.stringify(after) !== before) turn.setAccount(after);
      }
    } finally {
      this.turnsOpen -= 1;
    }
  }

  /** Where the sign-in stands; the first call reads the store, as a UI's first render needs. */
  signInState(): TokenAuthState {
    if (!this.link.loaded) void this.link.load().then(() => this.signIn.update());
    return this.signIn.get();
  }

  /** The renewal under way, if any. */
  get renewal(): Promise<PairInUse> | undefined {
    return this.state.name === 'renewing' ? this.state.renewal : undefined;
  }

  /** The logout epoch: requests sent in an earlier one must not renew. */
  get epoch(): number {
    return this.epochCount;
  }

  /** How many renewals failed so far, and the error of the last, which late refusals share. */
  get failedRenewals(): { count: number; last: unknown } {
    return { count: this.failedCount, last: this.lastFailure };
  }

  /**
   * The pair a request should carry: waits for a renewal under way, logs in when none is in use, renews one known to
   * be expired. A request aborted meanwhile stops waiting; the renewal goes on for the others.
   */
  async grant(config?: InternalAxiosRequestConfig): Promise<PairInUse> {
    if (config) throwIfCanceled(config);
    if (this.renewal) await this.wait(this.renewal, config);
    if (!this.link.loaded) await this.link.load();
    const inUse = this.account.current;
    if (inUse && !this.account.expired(inUse)) return inUse;
    if (this.account.signedOut) throw signedOut();
    return this.wait(this.renew(inUse ? 'expired' : 'no-token'), config);
  }

  /**
   * Waits for `renewal` (the one under way, which `renew()` or `renewal` gave) as one of its waiters, counted in
   * `stats().waiting` until it ends or `config`'s request is aborted.
   */
  wait(renewal: Promise<PairInUse>, config?: InternalAxiosRequestConfig): Promise<PairInUse> {
    if (this.state.name === 'renewing' && this.state.renewal === renewal) this.state.waiters.count += 1;
    const stopped = this.reports.waiter();
    return (config ? abortable(renewal, config) : renewal).finally(stopped);
  }

  /** A valid access token for use outside axios, by the same rule and single flight as a request. */
  async accessToken(): Promise<string> {
    return (await this.grant()).pair.access;
  }

  /**
   * The pair a request may carry right away, without waiting for anything: the hot path. Undefined sends the request
   * through `grant`, which also rejects a request already canceled.
   */
  ready(config: InternalAxiosRequestConfig): PairInUse | undefined {
    const inUse = this.account.current;
    if (!inUse || this.state.name === 'renewing' || !this.link.loaded) return undefined;
    if (config.signal?.aborted || config.cancelToken?.reason) return undefined;
    return this.account.expired(inUse) ? undefined : inUse;
  }

  /** `granted`, or a newer valid pair a renewal finished meanwhile (in the microtasks since `granted` was given). */
  freshest(granted: PairInUse): PairInUse {
    return this.account.newerThan(granted.generation) ?? granted;
  }

  async login(credentials?: Credentials): Promise<void> {
    // Without a renewal to wait for, it starts at once: `getState()` says `signing-in` as soon as this returns.
    if (this.renewal) await this.idle();
    if (credentials) this.account.refusals.forget();
    await this.wait(this.renew('manual', 'login', credentials));
    await this.link.settled();
  }

  /** Uses a pair obtained elsewhere, and writes it to the store under its lock, as a renewal would. */
  async setTokens(tokens: ParsedTokens | TokenPair): Promise<void> {
    if (typeof tokens?.access !== 'string' || tokens.access === '')
      throw new TypeError('auth.setTokens: pass { access, refresh?, expiresIn? } with a non-empty `access` token.');
    await this.idle();
    const turn = await this.link.turn();
    try {
      const { expiresAt } = tokens as TokenPair;
      const pair =
        expiresAt === undefined
          ? this.pairFrom(tokens, undefined)
          : { ...this.pairFrom({ access: tokens.access }, tokens.refresh), expiresAt };
      await this.withAccount(turn, () => this.keep(pair, { epoch: this.epochCount, turn, waiters: { count: 0 } }));
    } finally {
      await turn.end();
    }
  }

  async refresh(): Promise<void> {
    // As login(): a restore at start-up is `signing-in` before the first render, with no flash of a sign-in form.
    if (this.renewal) await this.idle();
    await this.wait(this.renew('manual', 'refresh'));
    await this.link.settled();
  }

  async logout(): Promise<void> {
    const held = this.account.current?.pair ?? null;
    const signOut = (): void => {
      this.account.signOut();
      this.account.refusals.forget();
    };
    signOut();
    this.epochCount += 1;
    this.signIn.failed(undefined);
    // Under the store's lock: a renewal that another holder (tab, process) is running ends first, so that its pair
    // cannot land after the logout and log every holder back in. This holder's own renewal ends with LOGGED_OUT; the
    // turn's clear comes after the writes of the turns before it. The record says every holder is signed out; the
    // next login may be another account, whose refusals are its own: every holder forgets them.
    const turn = await this.link.turn();
    await this.withAccount(turn, signOut);
    await turn.clear();
    await turn.end();
    this.reports.logout();
    await this.tellLogout(held);
  }

  /** Tells the server of the logout through `logoutRequest`, once; a failure is reported and thrown, after it. */
  private async tellLogout(pair: TokenPair | null): Promise<void> {
    const outcome: CallOutcome = { attempts: 0, status: undefined };
    const started = this.options.clock();
    try {
      await this.client.logout(pair, outcome);
    } catch (error) {
      const call = { reason: 'manual' as const, waiting: 0, durationMs: this.options.clock() - started, ...outcome };
      const told = isTokenAuthError(error)
        ? new TokenAuthError(
            error.code,
            `${error.message} The tokens were dropped here, but the server may still hold the session (a cookie, the ` +
              'refresh token): call `auth.logout()` again to tell it.',
            { cause: error.cause, ...(error.status === undefined ? {} : { status: error.status }) },
          )
        : error;
      throw this.reports.failure('logout', told, call);
    }
  }

  async tokens(): Promise<TokenPair | null> {
    await this.link.load();
    return this.account.current && { ...this.account.current.pair };
  }

  /** Resolves once the renewal under way, if any, has ended, and the last renewal's writes are done. */
  async flush(): Promise<void> {
    await this.idle();
    await this.link.settled();
  }

  close(): void {
    this.link.close();
  }

  /** Starts a renewal for `reason`, or joins the one under way. */
  renew(reason: RenewalReason, mode: Mode = 'auto', credentials?: Credentials): Promise<PairInUse> {
    if (this.state.name === 'renewing') return this.state.renewal;
    const waiters: Waiters = { count: 0 };
    const renewal = this.run(reason, mode, this.account.current?.pair, {
      epoch: this.epochCount,
      credentials,
      waiters,
    });
    this.state = { name: 'renewing', reason, renewal, waiters };
    this.signIn.update();
    // Waiters may all have been aborted: the shared promise must not become an unhandled rejection.
    renewal.then(
      () => this.settle(renewal, { name: 'idle' }),
      (error: unknown) => {
        this.failedCount += 1;
        this.lastFailure = error;
        this.settle(renewal, { name: 'failed', error });
      },
    );
    return renewal;
  }

  private settle(renewal: Promise<PairInUse>, next: RenewalState): void {
    if (this.state.name !== 'renewing' || this.state.renewal !== renewal) return;
    this.state = next;
    // A renewal that a logout ended failed for no reason a UI should show.
    const error = next.name === 'failed' && isTokenAuthError(next.error) ? next.error : undefined;
    if (error && error.code !== 'LOGGED_OUT') this.signIn.failed(error);
    else this.signIn.update();
  }

  /** Resolves once no renewal is under way. */
  private async idle(): Promise<void> {
    while (this.renewal) await this.renewal.catch(ignore);
  }

  /** One renewal: see the paragraph under the table of {@link RenewalState}. */
  private async run(
    reason: RenewalReason,
    mode: Mode,
    refused: TokenPair | undefined,
    start: Omit<Scope, 'turn'>,
  ): Promise<PairInUse> {
    const turn = mode === 'auto' ? await this.link.turnForRenewal(refused) : await this.link.turn();
    // Another holder's pair arrived while this one waited for the lock.
    if (!(turn instanceof StoreTurn)) return this.takeStored(turn.pair, start.epoch);
    const scope: Scope = { ...start, turn };
    try {
      return await this.withAccount(turn, () => this.renewIn(reason, mode, refused, scope));
    } finally {
      // The waiting requests have their pair: the writes and the release go on without them.
      void turn.end();
    }
  }

  /** The renewal's work in its turn at the store, with the account's guards as the store has them. */
  private async renewIn(
    reason: RenewalReason,
    mode: Mode,
    refused: TokenPair | undefined,
    scope: Scope,
  ): Promise<PairInUse> {
    const { turn, epoch } = scope;
    // Signed out, here or (as the record read for this turn says) by another holder: only the user signs in again.
    if (mode === 'auto' && this.account.signedOut) throw signedOut();
    const stored = await this.link.read(turn);
    // Another holder of the store renewed while this one waited for the lock: use its pair, call nobody.
    if (mode === 'auto' && stored && stored.access !== refused?.access && !this.account.expired(stored))
      return this.takeStored(stored, epoch);
    const basis = stored ?? refused;
    // A refresh token the token call refused (for any holder of the store) is not sent again: the pair is dead.
    if (mode === 'auto' && basis?.refresh !== undefined && this.account.isRefusedRefresh(basis.refresh)) {
      await this.discard(basis, stored, scope);
      return await this.loginWith('refresh-rejected', mode, scope);
    }
    // A refresh token in a cookie is the browser's to send: the token call goes whether or not one is held here.
    const canRefresh =
      basis?.refresh !== undefined || (this.options.refreshTokenInCookie && !this.account.cookieRefreshRefused);
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
      if (again && again.access !== basis?.access && again.refresh !== basis?.refresh && !this.account.expired(again))
        return this.takeStored(again, epoch);
      // Otherwise the pair is dead: its access token was refused or is expiring, its refresh token is refused.
      // Forget it, so that if the login fails too, later requests do not send it again while they wait.
      await this.discard(basis, again, scope);
      return await this.loginWith('refresh-rejected', mode, scope);
    }
  }

  /** Uses a pair another holder wrote to the store, unless logout() came in between. */
  private takeStored(pair: TokenPair, epoch: number): PairInUse {
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
        basic: this.options.loginRequest === undefined,
        redact: (error) => this.secrets.copy(error),
      });
    } catch (error) {
      throw this.reports.failure('login', error, this.callReport(reason, outcome, asked, scope));
    }
    const started = this.options.clock();
    let parsed: ParsedTokens;
    try {
      parsed = await this.client.login(credentials, outcome, !typed);
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
      parsed = await this.client.refresh(refreshToken, outcome);
    } catch (error) {
      throw this.reports.failure('refresh', error, this.callReport(reason, outcome, started, scope));
    }
    const rotated = parsed.refresh !== undefined && parsed.refresh !== refreshToken && refreshToken !== undefined;
    this.reports.refresh(this.callReport(reason, outcome, started, scope), rotated);
    return this.keep(this.pairFrom(parsed, refreshToken), scope);
  }

  /** What a call of the renewal in `scope` did, `started` by the clock, for its event. */
  private callReport(reason: RenewalReason, outcome: CallOutcome, started: number, scope: Scope): TokenCallReport {
    const { attempts, status } = outcome;
    return { reason, durationMs: this.options.clock() - started, attempts, status, waiting: scope.waiters.count };
  }

  private pairFrom(parsed: ParsedTokens, previousRefresh: string | undefined): TokenPair {
    const { clock, accessTokenLifetimeMs: lifetimeMs, marginFor } = this.options;
    return pairFromAnswer(parsed, previousRefresh, { now: clock(), lifetimeMs, marginFor });
  }

  /** Uses a pair this holder obtained, and has it written to the store off the waiting requests' path. */
  private keep(pair: TokenPair, scope: Scope): PairInUse {
    this.checkEpoch(scope.epoch);
    this.account.cookieRefreshRefused = false;
    const inUse = this.account.use(pair, false);
    this.link.write(scope.turn, pair, () => scope.epoch === this.epochCount);
    return inUse;
  }

  private async discard(dead: TokenPair | undefined, stored: TokenPair | null, scope: Scope): Promise<void> {
    if (!dead) return;
    if (this.account.current?.pair.access === dead.access) this.account.drop();
    if (stored?.access === dead.access) await scope.turn.clear();
  }
}

/** Why nothing renews by itself after `auth.logout()`. */
function signedOut(): TokenAuthError {
  return new TokenAuthError(
    'LOGGED_OUT',
    'Signed out: `auth.logout()` was called (by this holder or another sharing the store), so no token is fetched by ' +
      'itself until `auth.login()`, `auth.setTokens()` or `auth.refresh()`.',
  );
}
