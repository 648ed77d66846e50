import type { InternalAxiosRequestConfig } from 'axios';
import { abortable, succeeds, throwIfCanceled } from './abort.js';
import { credentialsFor } from './credentials.js';
import { hasCode, TokenAuthError } from './errors.js';
import type { Emitter } from './events.js';
import { GuardedStore, StoreSession } from './guarded-store.js';
import { SharedPair } from './shared-pair.js';
import { HeldPair } from './held-pair.js';
import type { Held } from './held-pair.js';
import type { ResolvedOptions } from './options.js';
import { pairFromAnswer } from './parse.js';
import { LoginCooldown, RefusalPolicy } from './policies.js';
import type { SecretList } from './redact.js';
import { MemoryTokenStore } from './stores/memory.js';
import type { TokenClient } from './token-client.js';
import type { Credentials, ParsedTokens, RenewalReason, TokenAuthEvents, TokenAuthStats, TokenPair } from './types.js';

/**
 * What a request carried: which pair, how many renewals had failed when it left, and in which logout epoch. No secret
 * in it.
 */
export interface Ticket {
  readonly generation: number;
  readonly failures: number;
  readonly epoch: number;
  /** The request is a replay: its 401 goes to the caller. */
  readonly replay: boolean;
}

/** `auto` follows the client rule; `login` and `refresh` are the user's explicit calls. */
type Mode = 'auto' | 'login' | 'refresh';

/**
 * What one renewal runs under: the logout epoch it started in, the store as it uses it (under the lock, if any), and
 * the credentials `auth.login()` was given for it alone.
 */
interface Scope {
  readonly epoch: number;
  readonly session: StoreSession;
  readonly credentials?: Credentials | undefined;
}

type Operation = TokenAuthEvents['failure']['operation'];

const noop = (): void => {};

/**
 * Holds the tokens and decides when to log in or renew: the state machine of the client rule. A renewal is one
 * shared promise: the first caller starts it, everyone else awaits it, and everyone gets its outcome. What it
 * consults and calls sits beside it: the store behind a guard, the token client, the login cooldown, the memory
 * of endpoints a renewal does not cure, and the secrets to mask.
 */
export class TokenKeeper {
  private readonly counts: TokenAuthStats = { logins: 0, refreshes: 0, replays: 0, failures: 0 };
  private readonly store: GuardedStore;
  private readonly cooldown: LoginCooldown;
  private readonly refusals: RefusalPolicy;
  private readonly pairs: HeldPair;
  private readonly shared: SharedPair;
  private inflight: Promise<Held> | null = null;
  /** Bumped by logout(): a renewal that started before it must not bring the old account back. */
  private epoch = 0;
  /** The token call refused the cookie while no refresh token was held: no more such calls until a pair comes. */
  private cookieRefused = false;
  /** Renewals that failed so far, and the error of the last: what the late 401s of their requests share. */
  private failures = 0;
  private lastFailure: unknown;

  constructor(
    private readonly options: ResolvedOptions,
    private readonly client: TokenClient,
    private readonly events: Emitter<TokenAuthEvents>,
    private readonly secrets: SecretList,
  ) {
    this.store = new GuardedStore(options.store ?? new MemoryTokenStore(), options.storeTimeoutMs, secrets, (error) =>
      this.report('store', error),
    );
    this.pairs = new HeldPair(secrets, events, options.clock, options.marginFor);
    this.cooldown = new LoginCooldown(options.loginCooldownMs, options.clock);
    this.refusals = new RefusalPolicy(options.accessTokenLifetimeMs, options.clock);
    this.shared = new SharedPair(this.store, this.pairs);
  }

  /**
   * The pair a request should carry: waits for a renewal under way, logs in when none is held, renews one known to
   * be expired. A request aborted meanwhile stops waiting; the renewal goes on for the others.
   */
  async grant(config?: InternalAxiosRequestConfig): Promise<Held> {
    const waitFor = <T>(promise: Promise<T>): Promise<T> => (config ? abortable(promise, config) : promise);
    if (config) throwIfCanceled(config);
    if (this.inflight) await waitFor(this.inflight);
    if (!this.shared.loaded) await this.shared.load();
    const held = this.pairs.current;
    if (held && !this.pairs.expired(held)) return held;
    return waitFor(this.renew(held ? 'expired' : 'no-token'));
  }

  /** A valid access token for use outside axios, by the same rule and single flight as a request. */
  async accessToken(): Promise<string> {
    return (await this.grant()).pair.access;
  }

  /**
   * The pair a request may carry right away, without waiting for anything: the hot path. Undefined sends the request
   * through `grant`, which also rejects a request already canceled.
   */
  usable(config: InternalAxiosRequestConfig): Held | undefined {
    const held = this.pairs.current;
    if (!held || this.inflight || !this.shared.loaded || config.signal?.aborted || config.cancelToken?.reason)
      return undefined;
    return this.pairs.expired(held) ? undefined : held;
  }

  /** `granted`, or a newer valid pair a renewal finished meanwhile (in the microtasks since `granted` was given). */
  freshest(granted: Held): Held {
    return this.pairs.newerThan(granted.generation) ?? granted;
  }

  /** The ticket of a request that leaves now with `held`. */
  ticket(held: Held, replay: boolean): Ticket {
    return { generation: held.generation, failures: this.failures, epoch: this.epoch, replay };
  }

  /**
   * The pair to replay a request with, after the pair it carried was refused; null when the refusal must reach the
   * caller as it is.
   */
  async afterRejection(ticket: Ticket, endpoint: string, config: InternalAxiosRequestConfig): Promise<Held | null> {
    if (this.inflight) await abortable(this.inflight, config);
    // Sent before a logout: its refusal must not log the user back in.
    if (ticket.epoch !== this.epoch) return null;
    // Refused for a pair that has since been replaced (a late 401): the current pair needs no renewal.
    const newer = this.pairs.newerThan(ticket.generation);
    if (newer) return newer;
    // Renewing would cure nothing: a permission of this endpoint, or, while refusals are general, not yet again.
    if (!this.refusals.mayRenewFor(endpoint)) return null;
    // A renewal failed after this request left: its late 401 shares that outcome, as it would have shared a success.
    if (ticket.failures !== this.failures) throw this.lastFailure;
    return abortable(this.renew('rejected'), config);
  }

  /**
   * The pair to send a refused replay with once more: one that a renewal under way or finished since the replay left
   * brought. Never renews, so replays cannot loop: each one more needs a renewal that other requests caused. Null
   * when the replay was refused with the current pair: then renewing for `endpoint` would not help either.
   */
  async afterReplayRejection(
    ticket: Ticket,
    endpoint: string,
    config: InternalAxiosRequestConfig,
  ): Promise<Held | null> {
    // A wait that ended in an abort or a failed renewal says nothing about whether renewing cures this endpoint.
    if (this.inflight && !(await succeeds(abortable(this.inflight, config)))) return null;
    const newer = this.pairs.newerThan(ticket.generation);
    if (!newer && this.pairs.current?.generation === ticket.generation)
      this.refusals.uncured(ticket.generation, endpoint);
    return newer;
  }

  /**
   * After a refused request whose body cannot be sent again: renews as for any refusal, for the requests that follow.
   * The next such request refused on the same endpoint with the renewed pair plays the replay's part: renewing did not
   * cure that endpoint.
   */
  async afterStreamRejection(ticket: Ticket, endpoint: string, config: InternalAxiosRequestConfig): Promise<void> {
    if (this.refusals.streamRenewedWith(endpoint) === ticket.generation) {
      await this.afterReplayRejection(ticket, endpoint, config);
      return;
    }
    const held = await this.afterRejection(ticket, endpoint, config);
    if (held) this.refusals.streamRenewed(endpoint, held.generation);
  }

  /** A replay that carried `ticket`'s pair was accepted: a renewal cured a refusal, so renewals cure again. */
  cured(ticket: Ticket): void {
    this.refusals.cured(ticket.generation);
  }

  noteReplay(): void {
    this.counts.replays += 1;
  }

  stats(): TokenAuthStats {
    return { ...this.counts };
  }

  async login(credentials?: Credentials): Promise<void> {
    while (this.inflight) await this.inflight.catch(noop);
    if (credentials) this.refusals.forget();
    await this.renew('manual', 'login', credentials);
    await this.shared.settled();
  }

  /** Holds a pair obtained elsewhere, and writes it to the store under its lock, as a renewal would. */
  async setTokens(tokens: ParsedTokens | TokenPair): Promise<void> {
    if (typeof tokens?.access !== 'string' || tokens.access === '')
      throw new TypeError('auth.setTokens: pass { access, refresh?, expiresIn? } with a non-empty `access` token.');
    while (this.inflight) await this.inflight.catch(noop);
    const session = await this.shared.session();
    try {
      const { expiresAt } = tokens as TokenPair;
      const pair =
        expiresAt === undefined
          ? this.pairFrom(tokens, undefined)
          : { ...this.pairFrom({ access: tokens.access }, tokens.refresh), expiresAt };
      this.keep(pair, { epoch: this.epoch, session });
    } finally {
      await session.end();
    }
  }

  async refresh(): Promise<void> {
    while (this.inflight) await this.inflight.catch(noop);
    await this.renew('manual', 'refresh');
    await this.shared.settled();
  }

  async logout(): Promise<void> {
    this.pairs.drop();
    this.epoch += 1;
    this.refusals.forget();
    // Under the store's lock: a renewal that another holder (tab, process) is running ends first, so that its pair
    // cannot land after the logout and log every holder back in. This holder's own renewal ends with LOGGED_OUT;
    // the session's clear comes after the writes of the sessions before it.
    const session = await this.shared.session();
    await session.clear();
    await session.end();
    this.events.emit('logout', {});
  }

  async tokens(): Promise<TokenPair | null> {
    await this.shared.load();
    return this.pairs.current && { ...this.pairs.current.pair };
  }

  /** Resolves once the renewal under way, if any, has ended, and the last renewal's writes are done. */
  async flush(): Promise<void> {
    while (this.inflight) await this.inflight.catch(noop);
    await this.shared.settled();
  }

  close(): void {
    this.shared.close();
  }

  private renew(reason: RenewalReason, mode: Mode = 'auto', credentials?: Credentials): Promise<Held> {
    if (this.inflight) return this.inflight;
    const renewal = this.runRenewal(reason, mode, this.pairs.current?.pair, this.epoch, credentials);
    this.inflight = renewal;
    // Waiters may all have been aborted: the shared promise must not become an unhandled rejection.
    renewal
      .catch((error: unknown) => {
        this.failures += 1;
        this.lastFailure = error;
      })
      .finally(() => {
        if (this.inflight === renewal) this.inflight = null;
      });
    return renewal;
  }

  private async runRenewal(
    reason: RenewalReason,
    mode: Mode,
    refused: TokenPair | undefined,
    epoch: number,
    credentials: Credentials | undefined,
  ): Promise<Held> {
    const session = mode === 'auto' ? await this.shared.renewalSession(refused) : await this.shared.session();
    // Another holder's pair arrived while this one waited for the lock.
    if (!(session instanceof StoreSession)) return this.adopt(session.pair, epoch);
    const scope: Scope = { epoch, session, credentials };
    try {
      const stored = await this.shared.read(session);
      // Another holder of the store renewed while this one waited for the lock: use its pair, call nobody.
      if (mode === 'auto' && stored && stored.access !== refused?.access && !this.pairs.expired(stored))
        return this.adopt(stored, epoch);
      const basis = stored ?? refused;
      // A refresh token in a cookie is the browser's to send: the token call goes whether or not one is held here.
      const canRefresh = basis?.refresh !== undefined || (this.options.refreshTokenInCookie && !this.cookieRefused);
      if (mode === 'login' || !canRefresh) return await this.loginWith(reason, mode, scope);
      try {
        return await this.refreshWith(basis?.refresh, reason, scope);
      } catch (error) {
        if (!hasCode(error, 'REFRESH_REJECTED')) throw error;
        if (basis?.refresh === undefined) this.cookieRefused = true;
        // Rotated refresh tokens work once: another holder may have spent this one and stored its successor, which
        // this holder may have heard of meanwhile even where the store cannot be read (it failed this renewal).
        const again = (await this.shared.read(session)) ?? this.pairs.current?.pair ?? null;
        if (again && again.access !== basis?.access && again.refresh !== basis?.refresh && !this.pairs.expired(again))
          return this.adopt(again, epoch);
        // Otherwise the pair is dead: its access token was refused or is expiring, its refresh token is refused.
        // Forget it, so that if the login fails too, later requests do not send it again while they wait.
        await this.discard(basis, again, scope);
        return await this.loginWith('refresh-rejected', mode, scope);
      }
    } finally {
      // The waiting requests have their pair: the write and the release go on without them.
      void session.end();
    }
  }

  /** Takes a pair another holder wrote to the store, unless logout() came in between. */
  private adopt(pair: TokenPair, epoch: number): Held {
    this.checkEpoch(epoch);
    return pair.access === this.pairs.current?.pair.access ? this.pairs.current : this.pairs.hold(pair, true);
  }

  private checkEpoch(epoch: number): void {
    if (epoch !== this.epoch) {
      throw new TokenAuthError(
        'LOGGED_OUT',
        '`auth.logout()` was called while this request waited for tokens; the tokens obtained meanwhile were dropped.',
      );
    }
  }

  private async loginWith(reason: RenewalReason, mode: Mode, scope: Scope): Promise<Held> {
    const cooling = mode === 'login' ? undefined : this.cooldown.pending();
    if (cooling) throw cooling;
    let credentials: Credentials;
    try {
      credentials = await credentialsFor(this.options.credentials, scope.credentials, {
        basic: this.options.loginRequest === undefined,
        redact: (error) => this.secrets.copy(error),
      });
    } catch (error) {
      throw this.report('login', error);
    }
    const started = this.options.clock();
    let parsed: ParsedTokens;
    try {
      parsed = await this.client.login(credentials);
    } catch (error) {
      if (error instanceof TokenAuthError) this.cooldown.rejected(error);
      throw this.report('login', error);
    }
    this.cooldown.succeeded();
    this.counts.logins += 1;
    const held = this.keep(this.pairFrom(parsed, undefined), scope);
    this.events.emit('login', { reason, durationMs: this.options.clock() - started });
    return held;
  }

  private async refreshWith(refreshToken: string | undefined, reason: RenewalReason, scope: Scope): Promise<Held> {
    const started = this.options.clock();
    let parsed: ParsedTokens;
    try {
      parsed = await this.client.refresh(refreshToken);
    } catch (error) {
      throw this.report('refresh', error);
    }
    this.counts.refreshes += 1;
    const held = this.keep(this.pairFrom(parsed, refreshToken), scope);
    const rotated = parsed.refresh !== undefined && parsed.refresh !== refreshToken && refreshToken !== undefined;
    this.events.emit('refresh', { reason, rotated, durationMs: this.options.clock() - started });
    return held;
  }

  private pairFrom(parsed: ParsedTokens, previousRefresh: string | undefined): TokenPair {
    const { clock, accessTokenLifetimeMs: lifetimeMs, marginFor } = this.options;
    return pairFromAnswer(parsed, previousRefresh, { now: clock(), lifetimeMs, marginFor });
  }

  /** Holds a pair this holder obtained, and has it written to the store off the waiting requests' path. */
  private keep(pair: TokenPair, scope: Scope): Held {
    this.checkEpoch(scope.epoch);
    this.cookieRefused = false;
    const held = this.pairs.hold(pair, false);
    this.shared.write(scope.session, pair, () => scope.epoch === this.epoch);
    return held;
  }

  private async discard(dead: TokenPair | undefined, stored: TokenPair | null, scope: Scope): Promise<void> {
    if (!dead) return;
    if (this.pairs.current?.pair.access === dead.access) this.pairs.drop();
    if (stored?.access === dead.access) await scope.session.clear();
  }

  /** Counts and announces a failure the waiting requests (or, for the store, only the `failure` event) get. */
  private report(operation: Operation, error: unknown): unknown {
    if (error instanceof TokenAuthError) {
      this.counts.failures += 1;
      this.events.emit('failure', { operation, code: error.code, error });
    }
    return error;
  }
}
