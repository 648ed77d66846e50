import { TokenAuthError } from './errors.js';
import { Emitter } from './events.js';
import type { TokenAuthEvents, TokenAuthStats, TokenCallReport } from './handle.js';
import type { TokenOperation, TokenPair } from './store-contract.js';

/**
 * Every event the plugin emits and every count `stats()` gives, from one place: a new event is added here. No payload
 * carries a secret: the errors are masked where they are made, and a URL is masked by the caller.
 */
export class Reports {
  private readonly emitter = new Emitter<TokenAuthEvents>();
  private readonly counts: Omit<TokenAuthStats, 'budget'> = {
    logins: 0,
    refreshes: 0,
    replays: 0,
    failures: 0,
    waiting: 0,
  };
  /** The origins a `warning` was said for. */
  private readonly warned = new Set<string>();

  /** `budgetLeft` reads the calls the account's budget still allows, for `stats()`. */
  constructor(private readonly budgetLeft: () => TokenAuthStats['budget']) {}

  on<E extends keyof TokenAuthEvents>(event: E, listener: (payload: TokenAuthEvents[E]) => void): () => void {
    return this.emitter.on(event, listener);
  }

  stats(): TokenAuthStats {
    return { ...this.counts, budget: this.budgetLeft() };
  }

  login(call: TokenCallReport): void {
    this.counts.logins += 1;
    this.emitter.emit('login', { ...call });
  }

  refresh(call: TokenCallReport, rotated: boolean): void {
    this.counts.refreshes += 1;
    this.emitter.emit('refresh', { ...call, rotated });
  }

  /** A caller starts waiting for a renewal; the function returned says it stopped (the renewal ended, or it quit). */
  waiter(): () => void {
    this.counts.waiting += 1;
    return () => {
      this.counts.waiting -= 1;
    };
  }

  /** A pair another holder stored (or that was stored at start) is in use, with no call. */
  load(pair: TokenPair): void {
    this.emitter.emit('load', { expiresAt: pair.expiresAt });
  }

  /**
   * A refused request goes again. Its URL is masked when first read: masking compiles a pattern of every secret's
   * spellings, which a replay must not wait for when nobody reads the URL.
   */
  replay(method: string, maskedURL: () => string): void {
    this.counts.replays += 1;
    let url: string | undefined;
    this.emitter.emit('replay', {
      method,
      get url(): string {
        return (url ??= maskedURL());
      },
    });
  }

  /** Counts and announces a failed login or token call, with what it did; returns the error the waiters get. */
  failure(operation: TokenOperation | 'logout', error: unknown, call: TokenCallReport): unknown {
    if (error instanceof TokenAuthError) {
      this.counts.failures += 1;
      this.emitter.emit('failure', { operation, code: error.code, error, ...call });
    }
    return error;
  }

  /** Counts and announces a failed store operation, which only this event reports. */
  storeFailure(error: unknown): void {
    if (error instanceof TokenAuthError) {
      this.counts.failures += 1;
      this.emitter.emit('failure', { operation: 'store', code: error.code, error });
    }
  }

  logout(): void {
    this.emitter.emit('logout', {});
  }

  /** A request outside `origins`, which went without the token, was refused: said once per origin. */
  refusedOutside(origin: string, origins: string): void {
    if (this.warned.has(origin)) return;
    this.warned.add(origin);
    const message =
      `${origin} refused a request that went without the access token: that origin is not in \`origins\` (${origins}). ` +
      `If it should get the token, list it: \`origins: [..., '${origin}']\` (without \`origins\`, only the origins of ` +
      "`authBaseURL` and of the instance's `baseURL` get it). Said once per origin.";
    this.warn({ code: 'ORIGIN_NOT_IN_ORIGINS', message, origin });
  }

  private warn(warning: TokenAuthEvents['warning']): void {
    if (this.emitter.has('warning')) this.emitter.emit('warning', warning);
    // eslint-disable-next-line no-console -- the one thing said unasked: a likely misconfiguration, once
    else console.warn(`axios-token-keeper: ${warning.message}`);
  }
}
