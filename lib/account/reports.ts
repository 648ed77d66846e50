import { TokenAuthError } from '../contract/errors.js';
import { Emitter } from '../support/emitter.js';
import type { TokenAuthEvents, TokenAuthStats, TokenCallReport } from '../contract/handle.js';
import type { TokenOperation, TokenPair } from '../contract/store.js';

/** What `stats()` counts for one account. */
export type Counts = Omit<TokenAuthStats, 'budget'>;

/**
 * Every event the plugin emits, from one place: a new event is added here. `Reports` is the attachment's (its
 * listeners, its warnings); each account reports through its {@link AccountReports}, which counts what `stats()` shows
 * and names the account in its events. No payload carries a secret: the errors are masked where they are made, and a
 * URL is masked by the caller.
 */
export class Reports {
  private readonly emitter = new Emitter<TokenAuthEvents>();
  /** The origins a `warning` was said for. */
  private readonly warned = new Set<string>();

  on<E extends keyof TokenAuthEvents>(event: E, listener: (payload: TokenAuthEvents[E]) => void): () => void {
    return this.emitter.on(event, listener);
  }

  /** Emits `payload` for `account` (named in it unless it is the default one). */
  emit<E extends keyof TokenAuthEvents>(event: E, payload: TokenAuthEvents[E], account: string | undefined): void {
    this.emitter.emit(event, account === undefined ? payload : { ...payload, account });
  }

  /** A request outside `origins`, which went without the token, was refused: said once per origin. */
  refusedOutside(origin: string, origins: string): void {
    if (this.warned.has(origin)) return;
    this.warned.add(origin);
    const message =
      `${origin} refused a request that went without the access token: that origin is not in \`origins\` (${origins}). ` +
      `If it should get the token, list it: \`origins: [..., '${origin}']\` (without \`origins\`, only the origins of ` +
      "`authBaseURL` and of the instance's `baseURL` get it). Said once per origin.";
    this.warn({ code: 'ORIGIN_NOT_IN_ORIGINS', message, origin }, undefined);
  }

  /** Says `warning` to the listeners of `warning`, else on `console.warn`: the one thing said unasked. */
  warn(warning: TokenAuthEvents['warning'], account: string | undefined): void {
    if (this.emitter.has('warning')) this.emit('warning', warning, account);
    // eslint-disable-next-line no-console -- the one thing said unasked: what a user must know, once
    else console.warn(`axios-token-keeper: ${warning.message}`);
  }
}

/** One account's events, and the counts `stats()` gives of it. */
export class AccountReports {
  readonly counts: Counts = { logins: 0, refreshes: 0, replays: 0, failures: 0, waiting: 0 };

  constructor(
    private readonly reports: Reports,
    private readonly account: string | undefined,
  ) {}

  login(call: TokenCallReport): void {
    this.counts.logins += 1;
    this.reports.emit('login', { ...call }, this.account);
  }

  refresh(call: TokenCallReport, rotated: boolean): void {
    this.counts.refreshes += 1;
    this.reports.emit('refresh', { ...call, rotated }, this.account);
  }

  /** A caller starts waiting for a renewal: {@link stoppedWaiting} counts it off. */
  startedWaiting(): void {
    this.counts.waiting += 1;
  }

  /** `callers` that waited for a renewal stopped: it ended, or they quit (aborted, out of time). */
  stoppedWaiting(callers = 1): void {
    this.counts.waiting -= callers;
  }

  /** One caller stopped waiting: {@link stoppedWaiting} as one function for them all, so that none holds a closure. */
  readonly stoppedOne = (): void => this.stoppedWaiting();

  /** A pair another holder stored (or that was stored at start) is in use, with no call. */
  load(pair: TokenPair): void {
    this.reports.emit('load', { expiresAt: pair.expiresAt }, this.account);
  }

  /**
   * A refused request goes again. Its URL is masked when first read: masking compiles a pattern of every secret's
   * spellings, which a replay must not wait for when nobody reads the URL.
   */
  replay(method: string, maskedURL: () => string): void {
    this.counts.replays += 1;
    let url: string | undefined;
    const payload: TokenAuthEvents['replay'] = {
      method,
      get url(): string {
        return (url ??= maskedURL());
      },
    };
    // The getter must survive: the payload is not copied to name the account.
    if (this.account !== undefined) payload.account = this.account;
    this.reports.emit('replay', payload, undefined);
  }

  /** Counts and announces a failed login, token or logout call, with what it did; returns the error the waiters get. */
  failure(operation: TokenOperation | 'logout', error: unknown, call: TokenCallReport): unknown {
    if (error instanceof TokenAuthError) {
      this.counts.failures += 1;
      this.reports.emit('failure', { operation, code: error.code, error, ...call }, this.account);
    }
    return error;
  }

  /** Counts and announces a failed store operation, which only this event reports. */
  storeFailure(error: unknown): void {
    if (error instanceof TokenAuthError) {
      this.counts.failures += 1;
      this.reports.emit('failure', { operation: 'store', code: error.code, error }, this.account);
    }
  }

  logout(): void {
    this.reports.emit('logout', {}, this.account);
  }

  /** Says `warning` of this account: see {@link Reports.warn}. */
  warn(warning: TokenAuthEvents['warning']): void {
    this.reports.warn(warning, this.account);
  }

  /** The account in a message: ` of account "name"`, or nothing for the default one. */
  get of(): string {
    return this.account === undefined ? '' : ` of account "${this.account}"`;
  }
}
