// One account's client, built in one place: what this holder knows of the account (its pair and guards), its link to
// the store, the record it shares there, its renewals, its reports and its sign-in state; the questions the replays
// ask it; and the members of the handle that act on one account.
import type { InternalAxiosRequestConfig } from 'axios';
import { abortable, throwIfCanceled } from '../support/abort.js';
import { AccountState } from './pairs.js';
import type { PairInUse } from './pairs.js';
import { keepsAccount } from '../stores/account-record.js';
import { isTokenAuthError, signedOut, TokenAuthError } from '../contract/errors.js';
import type { TokenAuthAccount, TokenAuthState, TokenAuthStats } from '../contract/handle.js';
import type { ResolvedOptions } from '../options/defaults.js';
import { SecretList } from '../support/redact.js';
import { AccountReports } from './reports.js';
import type { Reports } from './reports.js';
import { RenewalMachine } from './renewal.js';
import { SharedRecord } from './shared-record.js';
import { SignInState } from './sign-in-state.js';
import { StoreLink } from './store/link.js';
import type { TokenPair, TokenStore } from '../contract/store.js';
import type { CallOutcome, TokenClient } from '../token-calls/client.js';
import type { Credentials, ParsedTokens } from '../contract/calls.js';

/** What the accounts of one attachment share, made once at attach. */
export interface Attachment {
  readonly options: ResolvedOptions;
  readonly client: TokenClient;
  readonly reports: Reports;
}

/**
 * What a request carried: which pair, how many renewals had failed when it left, and in which logout epoch. No secret
 * in it.
 */
export interface Ticket {
  readonly account: Account;
  readonly generation: number;
  readonly failures: number;
  readonly epoch: number;
  /**
   * How many times the request went again before this send (0: its first). A replay's refusal goes to the caller, or
   * once more with a pair others' renewals brought.
   */
  readonly replays: number;
  /** The pair was taken from another holder (the store), not obtained by a token call of this holder's. */
  readonly taken: boolean;
}

/**
 * One account (the default one, `name` undefined, or a named one) as this holder keeps it: every account is its own
 * client, with its own pair, guards, single renewal and store.
 */
export class Account implements TokenAuthAccount {
  /** The secrets this account's pairs hold, masked wherever its errors surface. */
  readonly secrets = new SecretList();
  readonly reports: AccountReports;
  readonly account: AccountState;
  readonly renewals: RenewalMachine;
  readonly signIn: SignInState;
  /** Requests of this account sent and not yet settled (counted for named accounts, which may be dropped). */
  inFlight = 0;
  /** When this account was last asked for, by the attachment's count of requests: the least recent goes first. */
  lastUsed = 0;
  private readonly link: StoreLink;
  private readonly record: SharedRecord;
  private readonly client: TokenClient;
  private readonly clock: () => number;

  /**
   * `store` is this account's (the attachment's, or its `forAccount(name)`); `ownStore` when nobody else holds it (a
   * new memory store): there is nothing to read, nor a record to share.
   */
  constructor(
    readonly name: string | undefined,
    { options, client, reports }: Attachment,
    store: TokenStore,
    ownStore: boolean,
  ) {
    const shared = !ownStore && keepsAccount(store);
    this.client = client;
    this.clock = options.clock;
    this.reports = new AccountReports(reports, name);
    this.account = new AccountState(options, shared);
    this.link = new StoreLink(store, shared, options.storeTimeoutMs, this.account, this.secrets, (error) =>
      this.reports.storeFailure(error),
    );
    if (ownStore) this.link.startEmpty();
    this.record = new SharedRecord(this.account, this.link);
    this.renewals = new RenewalMachine(
      name,
      options,
      client,
      this.account,
      this.link,
      this.record,
      this.reports,
      this.secrets,
      (failure) => this.moved(failure),
    );
    this.signIn = new SignInState(() => ({
      held: this.account.current !== null,
      busy: this.renewals.renewal !== undefined || !this.link.loaded,
      storeDownSince: this.renewals.storeDownSince,
    }));
    this.account.listen((pair, fromStore) => this.used(pair, fromStore));
    this.signIn.update();
  }

  // ---- The hot path: the pair a request carries.

  /**
   * The pair a request may carry right away, without waiting for anything. Undefined sends the request through
   * `grant`, which also rejects a request already canceled.
   */
  ready(config: InternalAxiosRequestConfig): PairInUse | undefined {
    const inUse = this.account.current;
    if (!inUse || this.renewals.renewal || !this.link.loaded) return undefined;
    if (config.signal?.aborted || config.cancelToken?.reason) return undefined;
    return this.account.expired(inUse) ? undefined : inUse;
  }

  /**
   * The pair a request should carry: waits for a renewal under way, logs in when none is in use, renews one known to
   * be expired. A request aborted (or out of time) meanwhile stops waiting; the renewal goes on for the others.
   */
  async grant(config?: InternalAxiosRequestConfig): Promise<PairInUse> {
    if (config) throwIfCanceled(config);
    const renewal = this.renewals.renewal;
    if (renewal) {
      // Only the generation of a token waits for a store that is down: a token that has not expired goes on.
      const held = this.renewals.heldThroughOutage();
      if (held) return held;
      await this.renewals.wait(renewal, config);
    }
    if (!this.link.loaded) await this.link.load();
    const inUse = this.account.current;
    if (inUse && !this.account.expired(inUse)) return inUse;
    if (this.account.signedOut) throw signedOut();
    return this.renewals.wait(this.renewals.renew(inUse ? 'expired' : 'no-token'), config);
  }

  /** `granted`, or a newer valid pair a renewal finished meanwhile (in the microtasks since `granted` was given). */
  freshest(granted: PairInUse): PairInUse {
    return this.account.newerThan(granted.generation) ?? granted;
  }

  // ---- What the replays ask of the account after a refusal (replay.ts decides).

  /** The ticket of a request that leaves now with `inUse`. */
  ticket(inUse: PairInUse, replays: number): Ticket {
    const { renewals } = this;
    const { generation, taken } = inUse;
    return { account: this, generation, failures: renewals.failures, epoch: renewals.epoch, replays, taken };
  }

  /** Brings the guards up to what any holder of a shared store found (a refusal about to renew). */
  consult(config: InternalAxiosRequestConfig): Promise<unknown> {
    // The wait itself, as waitForRenewal's: a request waiting here holds no suspended function of its own.
    return this.account.shared
      ? abortable(this.record.consult(), config, { clock: this.clock, timedOut: this.link.readTimedOut })
      : Promise.resolve();
  }

  /**
   * Waits for the renewal under way, if any, as one of its waiters: it rejects as the renewal (or the wait) fails. The
   * wait itself, not a function awaiting it: thousands of requests may wait at once, each holding what it waits with.
   */
  waitForRenewal(config: InternalAxiosRequestConfig): Promise<unknown> {
    const renewal = this.renewals.renewal;
    return renewal ? this.renewals.wait(renewal, config) : Promise.resolve();
  }

  /** A logout came after `ticket`'s request left: its refusal must not sign the user back in. */
  loggedOutSince(ticket: Ticket): boolean {
    return ticket.epoch !== this.renewals.epoch;
  }

  /** The valid pair a renewal brought since `ticket`'s request left, if any. */
  renewedSince(ticket: Ticket): PairInUse | null {
    return this.account.newerThan(ticket.generation);
  }

  /** Whether a renewal for a refusal on `endpoint` may cure it now (not a permission, not during the back-off). */
  mayRenewFor(endpoint: string): boolean {
    return this.account.refusals.mayRenewFor(endpoint);
  }

  /** The error of a renewal that failed after `ticket`'s request left: its late refusal shares it. */
  failedSince(ticket: Ticket): { error: unknown } | undefined {
    return this.renewals.failedSince(ticket.failures);
  }

  /** Renews for a refusal (or joins the renewal under way), as one of its waiters. */
  renewForRefusal(config: InternalAxiosRequestConfig): Promise<PairInUse> {
    return this.renewals.wait(this.renewals.renew('rejected'), config);
  }

  /** `config`'s request, refused, goes again: its URL masked when the event's listener reads it. */
  replaying(config: InternalAxiosRequestConfig): void {
    this.reports.replay((config.method ?? 'get').toUpperCase(), () => this.secrets.mask(config.url ?? ''));
  }

  /** `ticket`'s replay, sent with the current pair, was refused on `endpoint` too: renewing did not cure it. */
  async uncured(ticket: Ticket, endpoint: string): Promise<void> {
    if (this.account.current?.generation !== ticket.generation) return;
    await this.record.change(() => this.account.refusals.uncured(ticket.generation, endpoint));
  }

  /** A replay that carried `ticket`'s pair was accepted: a renewal cured a refusal, so renewals cure again. */
  cured(ticket: Ticket): void {
    const { account } = this;
    // Every holder hears of a cure, but only of one that changed something: most accepted replays do not.
    if (account.refusals.cured(ticket.generation) && account.shared)
      this.record.change(() => account.refusals.cured(ticket.generation)).catch(() => undefined);
  }

  /** The pair a renewal for a refused stream on `endpoint` brought, if any. */
  streamRenewedWith(endpoint: string): number | undefined {
    return this.account.refusals.streamRenewedWith(endpoint);
  }

  /** A stream refused on `endpoint` started the renewal that brought `inUse`. */
  streamRenewed(endpoint: string, inUse: PairInUse): void {
    this.account.refusals.streamRenewed(endpoint, inUse.generation);
  }

  /** Nothing of this account is under way: no request, renewal, waiter or listener. It may be dropped. */
  get idle(): boolean {
    return this.inFlight === 0 && !this.renewals.renewal && this.reports.counts.waiting === 0 && !this.signIn.heard;
  }

  close(): void {
    this.link.close();
  }

  // ---- The handle's members that act on this account.

  /** A valid access token for use outside axios, by the same rule and single flight as a request. */
  async accessToken(): Promise<string> {
    return (await this.grant()).pair.access;
  }

  async getTokens(): Promise<TokenPair | null> {
    await this.link.load();
    return this.account.current && { ...this.account.current.pair };
  }

  async login(credentials?: Credentials): Promise<void> {
    // Without a renewal to wait for, it starts at once: `getState()` says `signing-in` as soon as this returns.
    if (this.renewals.renewal) await this.renewals.idle();
    if (credentials) this.account.refusals.forget();
    await this.renewals.wait(this.renewals.renew('manual', 'login', credentials));
    await this.link.settled();
  }

  /** Uses a pair obtained elsewhere, and writes it to the store under its lock, as a renewal would. */
  async setTokens(tokens: ParsedTokens | TokenPair): Promise<void> {
    if (typeof tokens?.access !== 'string' || tokens.access === '')
      throw new TypeError('auth.setTokens: pass { access, refresh?, expiresIn? } with a non-empty `access` token.');
    await this.renewals.idle();
    const turn = await this.link.turn();
    try {
      const { expiresAt } = tokens as TokenPair;
      const pair =
        expiresAt === undefined
          ? this.renewals.pairFrom(tokens, undefined)
          : { ...this.renewals.pairFrom({ access: tokens.access }, tokens.refresh), expiresAt };
      await this.record.within(turn, () => this.renewals.adopt(pair, turn));
    } finally {
      await turn.end();
    }
  }

  async refresh(): Promise<void> {
    // As login(): a restore at start-up is `signing-in` before the first render, with no flash of a sign-in form.
    if (this.renewals.renewal) await this.renewals.idle();
    await this.renewals.wait(this.renewals.renew('manual', 'refresh'));
    await this.link.settled();
  }

  async logout(): Promise<void> {
    const held = this.account.current?.pair ?? null;
    const signOut = (): void => {
      this.account.signOut();
      this.account.refusals.forget();
    };
    signOut();
    this.renewals.signOut();
    this.signIn.failed(undefined);
    // Under the store's lock: a renewal that another holder (tab, process) is running ends first, so that its pair
    // cannot land after the logout and log every holder back in. This holder's own renewal ends with LOGGED_OUT; the
    // turn's clear comes after the writes of the turns before it. The record says every holder is signed out; the
    // next login may be another account, whose refusals are its own: every holder forgets them.
    const turn = await this.link.turn();
    await this.record.within(turn, signOut);
    await turn.clear();
    await turn.end();
    this.reports.logout();
    await this.tellLogout(held);
  }

  /** Resolves once the renewal under way, if any, has ended, and the last renewal's writes are done. */
  async flush(): Promise<void> {
    await this.renewals.idle();
    await this.link.settled();
  }

  stats(): TokenAuthStats {
    return { ...this.reports.counts, budget: this.account.budgetLeft() };
  }

  /** Where the sign-in stands; the first call reads the store, as a UI's first render needs. */
  getState(): TokenAuthState {
    if (!this.link.loaded) void this.link.load().then(() => this.signIn.update());
    return this.signIn.get();
  }

  subscribe(listener: () => void): () => void {
    return this.signIn.subscribe(listener);
  }

  // ---- What the parts tell the account.

  /** The renewal machine moved: a renewal started or ended, `failure` when it failed. */
  private moved(failure?: unknown): void {
    // A renewal that a logout ended failed for no reason a UI should show.
    if (isTokenAuthError(failure) && failure.code !== 'LOGGED_OUT') this.signIn.failed(failure);
    else this.signIn.update();
  }

  /** A pair was taken into use (`fromStore`: another holder's), or dropped (null). */
  private used(pair: TokenPair | null, fromStore: boolean): void {
    if (pair && !this.secrets.remember(pair) && fromStore) this.reports.load(pair);
    if (pair && fromStore) this.renewals.pairArrived();
    // A pair another holder (a tab) brought ends a failure here too; a drop may be its logout. A renewal of this
    // holder's tells the state once, as it ends, not as it takes its pair.
    if (pair) this.signIn.failed(undefined, false);
    if (!this.renewals.renewal) this.signIn.update();
    // Dropped by another holder: perhaps its logout, which the record says; read now, a request that follows fails at
    // once rather than after a turn at the lock.
    if (!pair && fromStore && this.account.shared) void this.record.consult();
  }

  /** Tells the server of the logout through `logoutRequest`, once; a failure is reported and thrown, after it. */
  private async tellLogout(pair: TokenPair | null): Promise<void> {
    const outcome: CallOutcome = { attempts: 0, status: undefined };
    const started = this.clock();
    try {
      await this.client.logout(pair, { account: this.name, outcome });
    } catch (error) {
      const call = { reason: 'manual' as const, waiting: 0, durationMs: this.clock() - started, ...outcome };
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
}
