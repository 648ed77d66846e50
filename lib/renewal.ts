import type { AxiosError, InternalAxiosRequestConfig } from 'axios';
import { abortable, throwIfCanceled } from './abort.js';
import { hasCode, TokenAuthError } from './errors.js';
import type { Emitter } from './events.js';
import { jwtExpiry } from './parse.js';
import type { ParsedTokens } from './parse.js';
import type { ResolvedOptions } from './options.js';
import { redactAxiosError, redactedCopy, redactText } from './redact.js';
import type { TokenClient } from './token-client.js';
import type { Credentials, RenewalReason, TokenAuthEvents, TokenAuthStats, TokenPair } from './types.js';

/**
 * The pair this holder uses now. `generation` numbers the pairs it has held, so that a request can tell whether
 * the pair it carried is still the current one without keeping the token itself.
 */
export interface Held {
  readonly pair: TokenPair;
  readonly generation: number;
}

/** What a request carried: which pair, and how many renewals had failed when it left. No secret in it. */
export interface Ticket {
  readonly generation: number;
  readonly failures: number;
  /** The request is a replay: its 401 goes to the caller. */
  readonly replay: boolean;
}

/** `auto` follows the client rule; `login` and `refresh` are the user's explicit calls. */
type Mode = 'auto' | 'login' | 'refresh';

/** One renewal: the logout epoch it started in, and the fence of the store lock it holds, if any. */
interface Run {
  readonly epoch: number;
  readonly fence: number | undefined;
}

/** Secrets remembered for redaction: the last few pairs, for errors of requests that outlived their token. */
const REMEMBERED_SECRETS = 16;
/** Endpoints remembered as not cured by a renewal; the oldest go first. */
const UNCURED_ENDPOINTS = 256;

const noop = (): void => {};

/**
 * Holds the tokens and decides when to log in or renew. A renewal is one shared promise: the first caller starts
 * it, everyone else awaits it, and everyone gets its outcome.
 */
export class TokenKeeper {
  private readonly counts: TokenAuthStats = { logins: 0, refreshes: 0, replays: 0, failures: 0 };
  private held: Held | null = null;
  private generation = 0;
  private loading: Promise<void> | undefined;
  private loaded = false;
  private inflight: Promise<Held> | null = null;
  /**
   * Endpoints whose replay was refused with a fresh pair: a renewal did not cure their 401 (a permission, not an
   * expiry), so for a token lifetime their 401s go to the caller and cost no token call. Kept by time, not by pair:
   * holders sharing a store change the pair under each other, and must not take turns renewing for such a 401.
   */
  private readonly uncured = new Map<string, number>();
  /** Bumped by logout(): a renewal that started before it must not bring the old account back. */
  private epoch = 0;
  private loginBlock: { until: number; error: TokenAuthError; rejections: number } | null = null;
  /** Renewals that failed so far, and the error of the last: what the late 401s of their requests share. */
  private failures = 0;
  private lastFailure: unknown;
  private readonly secrets: string[] = [];
  private readonly unsubscribe: (() => void) | undefined;

  constructor(
    private readonly options: ResolvedOptions,
    private readonly client: TokenClient,
    private readonly events: Emitter<TokenAuthEvents>,
  ) {
    this.unsubscribe = options.store.subscribe?.((pair) => this.onStoreChange(pair));
  }

  /** The pair a request should carry: waits for a renewal under way, logs in when none is held, renews one known to be expired. */
  async grant(config: InternalAxiosRequestConfig): Promise<Held> {
    throwIfCanceled(config);
    if (this.inflight) await abortable(this.inflight, config);
    if (!this.loaded) await (this.loading ??= this.load());
    const held = this.held;
    if (held && !this.expired(held.pair)) return held;
    return abortable(this.renew(held ? 'expired' : 'no-token'), config);
  }

  /**
   * The pair a request may carry right away, without waiting for anything: the hot path. Undefined sends the request
   * through `grant`, which also rejects a request already canceled.
   */
  usable(config: InternalAxiosRequestConfig): Held | undefined {
    const held = this.held;
    if (!held || this.inflight || !this.loaded || config.signal?.aborted || config.cancelToken?.reason)
      return undefined;
    return this.expired(held.pair) ? undefined : held;
  }

  /** `granted`, or a newer valid pair a renewal finished meanwhile (in the microtasks since `granted` was given). */
  freshest(granted: Held): Held {
    const held = this.held;
    return held && held.generation > granted.generation && !this.expired(held.pair) ? held : granted;
  }

  /** The ticket of a request that leaves now with `held`. */
  ticket(held: Held, replay: boolean): Ticket {
    return { generation: held.generation, failures: this.failures, replay };
  }

  /**
   * The pair to replay a request with, after the pair it carried was refused; null when the refusal must reach the
   * caller as it is.
   */
  async afterRejection(ticket: Ticket, endpoint: string, config: InternalAxiosRequestConfig): Promise<Held | null> {
    if (this.inflight) await abortable(this.inflight, config);
    // Refused for a pair that has since been replaced (a late 401): the current pair needs no renewal.
    const newer = this.newerThan(ticket);
    if (newer) return newer;
    if ((this.uncured.get(endpoint) ?? -Infinity) > this.options.clock()) return null;
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
    if (this.inflight) await abortable(this.inflight, config).catch(noop);
    const newer = this.newerThan(ticket);
    if (!newer) this.markUncured(ticket, endpoint);
    return newer;
  }

  /** The current pair, if valid and newer than the one `ticket` carried. */
  private newerThan(ticket: Ticket): Held | null {
    const held = this.held;
    return held && held.generation > ticket.generation && !this.expired(held.pair) ? held : null;
  }

  private markUncured(ticket: Ticket, endpoint: string): void {
    if (this.held?.generation !== ticket.generation) return;
    const now = this.options.clock();
    for (const [known, until] of this.uncured)
      if (until <= now || this.uncured.size >= UNCURED_ENDPOINTS) this.uncured.delete(known);
    this.uncured.set(endpoint, now + Math.min(this.options.accessTokenLifetimeMs, 24 * 3_600_000));
  }

  noteReplay(): void {
    this.counts.replays += 1;
  }

  stats(): TokenAuthStats {
    return { ...this.counts };
  }

  async login(): Promise<void> {
    while (this.inflight) await this.inflight.catch(noop);
    await this.renew('manual', 'login');
  }

  async refresh(): Promise<void> {
    while (this.inflight) await this.inflight.catch(noop);
    await this.renew('manual', 'refresh');
  }

  async logout(): Promise<void> {
    this.held = null;
    this.generation += 1;
    this.epoch += 1;
    // The next login may be another account, whose permissions are its own.
    this.uncured.clear();
    // Under the store's lock: a renewal that another holder (tab, process) is running ends first, so that its pair
    // cannot land after the logout and log every holder back in. This holder's own renewal ends with LOGGED_OUT.
    const lock = await this.storeCall(() => this.options.store.lock?.(), false);
    try {
      await this.storeCall(() => this.options.store.clear(lock?.fence));
    } finally {
      if (lock) void this.storeCall(() => lock.release());
    }
    this.events.emit('logout', {});
  }

  async tokens(): Promise<TokenPair | null> {
    await (this.loading ??= this.load());
    return this.held && { ...this.held.pair };
  }

  /** Masks the tokens this holder has used in an error of a request that carried one. */
  redact<E extends AxiosError>(error: E): E {
    return redactAxiosError(error, this.secrets);
  }

  mask(text: string): string {
    return redactText(text, this.secrets);
  }

  close(): void {
    this.unsubscribe?.();
  }

  private renew(reason: RenewalReason, mode: Mode = 'auto'): Promise<Held> {
    if (this.inflight) return this.inflight;
    const run = this.runRenewal(reason, mode, this.held?.pair, this.epoch);
    this.inflight = run;
    // Waiters may all have been aborted: the shared promise must not become an unhandled rejection.
    run
      .catch((error: unknown) => {
        this.failures += 1;
        this.lastFailure = error;
      })
      .finally(() => {
        if (this.inflight === run) this.inflight = null;
      });
    return run;
  }

  private async runRenewal(
    reason: RenewalReason,
    mode: Mode,
    failed: TokenPair | undefined,
    epoch: number,
  ): Promise<Held> {
    // The store bounds its own wait for the lock (`lockTimeoutMs`): a holder that is merely slow is waited for.
    const lock = await this.storeCall(() => this.options.store.lock?.(), false);
    const run: Run = { epoch, fence: lock?.fence };
    try {
      const stored = await this.read();
      // Another holder of the store renewed while this one waited for the lock: use its pair, call nobody.
      if (mode === 'auto' && stored && stored.access !== failed?.access && !this.expired(stored))
        return this.adopt(stored, epoch);
      const basis = stored ?? failed;
      if (mode === 'login' || !basis?.refresh) return await this.loginWith(reason, mode, run);
      try {
        return await this.refreshWith(basis.refresh, reason, run);
      } catch (error) {
        if (!hasCode(error, 'REFRESH_REJECTED')) throw error;
        // Rotated refresh tokens work once: another holder may have spent this one and stored its successor.
        const again = await this.read();
        if (again && again.refresh !== basis.refresh && !this.expired(again)) return this.adopt(again, epoch);
        // Otherwise the pair is dead: its access token was refused or is expiring, its refresh token is refused.
        // Forget it, so that if the login fails too, later requests do not send it again while they wait.
        await this.discard(basis, again, run);
        return await this.loginWith('refresh-rejected', mode, run);
      }
    } finally {
      // The waiting requests have their pair: they do not wait for the release too.
      if (lock) void this.storeCall(() => lock.release());
    }
  }

  /** Takes a pair another holder wrote to the store, unless logout() came in between. */
  private adopt(pair: TokenPair, epoch: number): Held {
    this.checkEpoch(epoch);
    return pair.access === this.held?.pair.access ? this.held : this.hold(pair, true);
  }

  private checkEpoch(epoch: number): void {
    if (epoch !== this.epoch) {
      throw new TokenAuthError(
        'LOGGED_OUT',
        '`auth.logout()` was called while this request waited for tokens; the tokens obtained meanwhile were dropped.',
      );
    }
  }

  private async loginWith(reason: RenewalReason, mode: Mode, run: Run): Promise<Held> {
    const block = this.loginBlock;
    if (block && mode !== 'login' && this.options.clock() < block.until) throw block.error;
    const credentials = await this.credentials();
    const started = this.options.clock();
    let parsed: ParsedTokens;
    try {
      parsed = await this.client.login(credentials);
    } catch (error) {
      if (hasCode(error, 'LOGIN_REJECTED')) {
        // Each rejection in a row doubles the wait, up to 16 times: the same credentials will not turn good soon.
        const rejections = (this.loginBlock?.rejections ?? 0) + 1;
        const cooldown = this.options.loginCooldownMs * 2 ** Math.min(rejections - 1, 4);
        this.loginBlock = { until: this.options.clock() + cooldown, error, rejections };
      }
      throw this.failed('login', error);
    }
    this.loginBlock = null;
    this.counts.logins += 1;
    const held = await this.take(this.pairFrom(parsed, undefined), run);
    this.events.emit('login', { reason, durationMs: this.options.clock() - started });
    return held;
  }

  private async refreshWith(refreshToken: string, reason: RenewalReason, run: Run): Promise<Held> {
    const started = this.options.clock();
    let parsed: ParsedTokens;
    try {
      parsed = await this.client.refresh(refreshToken);
    } catch (error) {
      throw this.failed('refresh', error);
    }
    this.counts.refreshes += 1;
    const held = await this.take(this.pairFrom(parsed, refreshToken), run);
    const rotated = parsed.refresh !== undefined && parsed.refresh !== refreshToken;
    this.events.emit('refresh', { reason, rotated, durationMs: this.options.clock() - started });
    return held;
  }

  private async credentials(): Promise<Credentials> {
    const source = this.options.credentials;
    let value: Credentials | null | undefined;
    try {
      value = typeof source === 'function' ? await source() : source;
    } catch (error) {
      const cause = error instanceof Error ? redactedCopy(error, this.secrets) : undefined;
      throw this.failed(
        'login',
        new TokenAuthError(
          'NO_CREDENTIALS',
          'The `credentials` function threw, so the plugin cannot log in; see `cause`.',
          { cause },
        ),
      );
    }
    if (typeof value?.username !== 'string' || typeof value.password !== 'string') {
      throw this.failed(
        'login',
        new TokenAuthError(
          'NO_CREDENTIALS',
          'The `credentials` function gave no { username, password }, so the plugin cannot log in.',
        ),
      );
    }
    if (value.username.includes(':')) {
      throw this.failed(
        'login',
        new TokenAuthError(
          'NO_CREDENTIALS',
          'The username contains ":", which HTTP Basic cannot carry (RFC 7617); the password may contain it.',
        ),
      );
    }
    return value;
  }

  /** Turns an answer into the pair to store, with the expiry it states, or else the configured lifetime. */
  private pairFrom(parsed: ParsedTokens, previousRefresh: string | undefined): TokenPair {
    const now = this.options.clock();
    const told = parsed.expiresIn !== undefined ? now + parsed.expiresIn * 1000 : jwtExpiry(parsed.access);
    // An expiry already within the margin on arrival means skewed clocks, a broken answer or a very short token:
    // renewing before sending would cost a token call per request, so such a token is renewed on its 401 only.
    const expiresAt =
      told === undefined
        ? now + this.options.accessTokenLifetimeMs
        : told - this.options.expiryMarginMs > now
          ? told
          : undefined;
    const pair: TokenPair = { access: parsed.access };
    const refresh = parsed.refresh ?? previousRefresh;
    if (refresh !== undefined) pair.refresh = refresh;
    if (expiresAt !== undefined && Number.isFinite(expiresAt)) pair.expiresAt = expiresAt;
    return pair;
  }

  private async take(pair: TokenPair, run: Run): Promise<Held> {
    this.checkEpoch(run.epoch);
    const held = this.hold(pair, false);
    const written = await this.storeCall(() => this.options.store.set(pair, run.fence));
    if (written !== false) return held;
    // The lock lapsed while this holder renewed (it stalled past the lease) and a later holder has written since:
    // its pair is the one the others use. Ours stays valid, but one pair per account is the point of sharing.
    const stored = await this.read();
    return stored && !this.expired(stored) ? this.adopt(stored, run.epoch) : held;
  }

  private hold(pair: TokenPair, fromStore: boolean): Held {
    this.generation += 1;
    const held: Held = { pair, generation: this.generation };
    this.held = held;
    // A pair can come back (a store event, then a write refused by the fence): it was adopted once.
    const known = this.secrets.includes(pair.access);
    for (const secret of [pair.access, pair.refresh])
      if (secret && !this.secrets.includes(secret)) this.secrets.push(secret);
    this.secrets.splice(0, Math.max(0, this.secrets.length - REMEMBERED_SECRETS));
    if (fromStore && !known) this.events.emit('adopt', { expiresAt: pair.expiresAt });
    return held;
  }

  private async discard(dead: TokenPair, stored: TokenPair | null, run: Run): Promise<void> {
    if (this.held?.pair.access === dead.access) {
      this.held = null;
      this.generation += 1;
    }
    if (stored?.access === dead.access) await this.storeCall(() => this.options.store.clear(run.fence));
  }

  private onStoreChange(pair: TokenPair | null): void {
    if (pair === null) {
      if (this.held) {
        this.held = null;
        this.generation += 1;
      }
    } else if (pair.access !== this.held?.pair.access) {
      this.hold(pair, true);
    }
  }

  private async load(): Promise<void> {
    const pair = await this.read();
    if (pair && !this.held) this.hold(pair, true);
    this.loaded = true;
  }

  private async read(): Promise<TokenPair | null> {
    const pair = await this.storeCall(() => this.options.store.get());
    return pair && typeof pair.access === 'string' ? pair : null;
  }

  private expired(pair: TokenPair): boolean {
    return pair.expiresAt !== undefined && this.options.clock() >= pair.expiresAt - this.options.expiryMarginMs;
  }

  /**
   * Store failures must not fail requests while this holder has tokens in memory: they are reported, not thrown.
   * Nor may a store that stops answering (a paused Redis, a hung mount) hold requests: past `tokenTimeoutMs` the
   * call counts as failed, and is left to finish on its own.
   */
  private async storeCall<T>(operation: () => T | Promise<T>, bounded = true): Promise<T | undefined> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    try {
      const call = Promise.resolve().then(operation);
      if (!bounded) return await call;
      call.catch(noop);
      const limit = this.options.tokenTimeoutMs;
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`it did not answer within ${limit} ms, \`tokenTimeoutMs\``)), limit);
      });
      return await Promise.race([call, timeout]);
    } catch (error) {
      const reason = redactText(error instanceof Error ? error.message : String(error), this.secrets);
      const cause = error instanceof Error ? redactedCopy(error, this.secrets) : undefined;
      this.failed(
        'store',
        new TokenAuthError(
          'STORE_FAILED',
          `The token store failed (${reason}); going on with the tokens held in memory.`,
          { cause },
        ),
      );
      return undefined;
    } finally {
      clearTimeout(timer);
    }
  }

  private failed(operation: 'login' | 'refresh' | 'store', error: unknown): unknown {
    if (error instanceof TokenAuthError) {
      this.counts.failures += 1;
      this.events.emit('failure', { operation, code: error.code, error });
    }
    return error;
  }
}
