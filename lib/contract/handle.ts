// The public contract of what `attachTokenAuth` returns: the handle, its events and its stats.
import type { TokenAuthError, TokenAuthErrorCode } from './errors.js';
import type { Credentials, ParsedTokens } from './calls.js';
import type { TokenOperation, TokenPair } from './store.js';

/** Why a login or refresh ran. */
export type RenewalReason =
  /** Nothing was stored yet. */
  | 'no-token'
  /** The stored access token is known to be expired (proactive renewal). */
  | 'expired'
  /** A request came back with the token refused (401). */
  | 'rejected'
  /** The token call refused the refresh token, so the plugin logged in. */
  | 'refresh-rejected'
  /**
   * The shared store had lost the pair being renewed (a restart without persistence, a failover that dropped the last
   * write), whose refresh token the holder that wrote it last may have spent: the plugin logged in rather than send it.
   */
  | 'store-lost'
  /** Called through `auth.login()` or `auth.refresh()`. */
  | 'manual';

/** What the `login`, `refresh` and `failure` events say of one login or token call. */
export interface TokenCallReport {
  /** Why it ran. */
  reason: RenewalReason;
  /** How long the call took, retries included, by the `clock` option. */
  durationMs: number;
  /**
   * How many times the call left for the token service: 1, more after retries, 0 when it never left (the budget
   * refused it, or the credentials could not be had).
   */
  attempts: number;
  /**
   * HTTP status of the answer that ended the call (200 for one that succeeded, or whose body held no token), or
   * undefined when the call ended without one: a timeout, a network error, a call or retry the budget refused.
   */
  status: number | undefined;
  /**
   * How many callers waited for the renewal this call was part of, by the time the call ended: requests,
   * `accessToken()`, `login()` and `refresh()` calls. A renewal that logs in after a refused refresh makes two calls.
   */
  waiting: number;
}

/** Which account an event is about: its name, absent for the default account. */
export interface AccountNamed {
  /** The named account the event is about (the request config's `account`); absent for the default account. */
  account?: string;
}

/** Events of {@link TokenAuth.on}, of every account. No payload carries a secret. */
export interface TokenAuthEvents {
  /** A login succeeded. */
  login: TokenCallReport & AccountNamed;
  /** A token call succeeded; `rotated` when it brought a new refresh token. */
  refresh: TokenCallReport &
    AccountNamed & {
      /** The answer carried a new refresh token, which replaced the stored one. */
      rotated: boolean;
    };
  /** Tokens another holder of the store wrote (or that were there at start) were picked up, with no call. */
  load: AccountNamed & {
    /** When the loaded access token expires, in epoch milliseconds, when known. */
    expiresAt: number | undefined;
  };
  /** A request whose token was refused is sent again with the current token. */
  replay: AccountNamed & {
    /** The request's method, upper case. */
    method: string;
    /** The request's URL as configured, with any token in it masked. */
    url: string;
  };
  /**
   * A login, token call, logout call or store operation failed; a failed call also says what a
   * {@link TokenCallReport} says.
   */
  failure:
    | (TokenCallReport &
        AccountNamed & {
          /** What failed. */
          operation: TokenOperation | 'logout';
          /** The error's code, for a `switch`. */
          code: TokenAuthErrorCode;
          /** The error the waiting requests got. */
          error: TokenAuthError;
        })
    | (AccountNamed & {
        /** What failed. */
        operation: 'store';
        /** The error's code, for a `switch`. */
        code: TokenAuthErrorCode;
        /** The error, reported only here: the plugin goes on with the tokens it holds. */
        error: TokenAuthError;
      });
  /** `auth.logout()` dropped the tokens. */
  logout: AccountNamed;
  /**
   * Something is likely misconfigured, or the plugin went on in a way worth knowing; each is said once (per origin,
   * per outage). Without a listener of `warning`, the message goes to `console.warn`.
   */
  warning:
    | {
        /** What it is, for a `switch`. */
        code: 'ORIGIN_NOT_IN_ORIGINS';
        /** What happened and what to do. */
        message: string;
        /** The origin it is about. */
        origin: string;
      }
    | (AccountNamed & {
        /** What it is, for a `switch`. */
        code: 'STORE_UNAVAILABLE' | 'STORE_LOCK_MISSED';
        /** What happened and what to do. */
        message: string;
      });
}

/**
 * Codes of the `warning` event.
 * - `ORIGIN_NOT_IN_ORIGINS`: a request went without the access token, since its origin is not in `origins`, and was
 *   refused as the `isTokenRejected` option says (401): said once per origin.
 * - `STORE_UNAVAILABLE`: a renewal fell due while the store was down (its lock got no answer or failed, or another
 *   holder kept it too long); the renewal waits for the store as `whenStoreDown` says. Said once per outage, per
 *   account.
 * - `STORE_LOCK_MISSED`: with `whenStoreDown: 'go-alone'`, the store stayed down for the renewal's whole wait: this
 *   holder got a pair of its own (one login) rather than send the refresh token the holders share; it goes back to
 *   the store's pair once the store answers. Said once per outage, per account.
 */
export type TokenAuthWarningCode = TokenAuthEvents['warning']['code'];

/** Counters since attach, and two readings of now: the callers waiting for a renewal and the budget left. */
export interface TokenAuthStats {
  /** Successful logins. */
  logins: number;
  /** Successful token calls. */
  refreshes: number;
  /** Requests sent again after their token was refused. */
  replays: number;
  /** Failed logins, token calls and store operations (one per shared attempt, retries included). */
  failures: number;
  /** Callers waiting for a renewal now: requests, `accessToken()`, `login()` and `refresh()` calls. */
  waiting: number;
  /**
   * Login and token calls `tokenBudget` still allows in its window now, or undefined with `tokenBudget: false`. With
   * a store that keeps the account's record, the calls spent are the account's as this holder last read them.
   */
  budget: Record<TokenOperation, number> | undefined;
}

/**
 * Where the sign-in stands, for a UI:
 * - `signed-out`: no tokens held and none being fetched; the sign-in form.
 * - `signing-in`: none held, one being fetched: a login, a token call from a cookie at start-up (`auth.refresh()`), or
 *   the first read of the store.
 * - `signed-in`: tokens held (renewed when due, without a state of their own until then).
 * - `renewing`: tokens held, and new ones being fetched.
 */
export type TokenAuthStatus = 'signed-out' | 'signing-in' | 'signed-in' | 'renewing';

/** What {@link TokenAuth.getState} returns: a snapshot, the same object until something changes. */
export interface TokenAuthState {
  /** Where the sign-in stands: see {@link TokenAuthStatus}. */
  readonly status: TokenAuthStatus;
  /**
   * Why the last sign-in or renewal failed (a rejected password, an unreachable service), until another starts or
   * tokens come; absent otherwise. A logout is no failure.
   */
  readonly error?: TokenAuthError;
  /**
   * While a renewal waits for a store that is down (see `whenStoreDown`): since when, in epoch milliseconds by the
   * `clock` option. Absent otherwise.
   */
  readonly storeDownSince?: number;
}

/** What {@link attachTokenAuth} returns. */
export interface TokenAuth extends TokenAuthAccount {
  /** Removes the plugin's interceptor; the instance is as before, and may be attached again. */
  eject(): void;
  /**
   * The handle of account `name` (requests name theirs with the request config's `account`): the members below act on
   * that account alone, as the top-level ones act on the default account. Account names are any non-empty strings of
   * at most 256 characters (tenant ids, e-mail addresses). Throws a TypeError for another name, or when the `store`
   * keeps one account only (it has no `forAccount`).
   *
   * @example
   * await auth.account('tenant-42').login();
   * await api.get('/orders', { account: 'tenant-42' });
   */
  account(name: string): TokenAuthAccount;
  /** Listens to an event, of every account; returns the function that stops listening. */
  on<E extends keyof TokenAuthEvents>(event: E, listener: (payload: TokenAuthEvents[E]) => void): () => void;
}

/** What acts on one account: the top-level members of {@link TokenAuth} (the default account), or `auth.account(name)`. */
export interface TokenAuthAccount {
  /**
   * A valid access token, for what does not go through axios (a WebSocket, an `EventSource`, a `fetch`, a signed
   * URL): waits for a renewal under way, renews a token known to be expired, logs in when none is held, with the
   * same single flight, budget and cooldown as requests. Treat it as a secret.
   *
   * @example
   * const socket = new WebSocket(`wss://api.example.com/events?token=${encodeURIComponent(await auth.accessToken())}`);
   */
  accessToken(): Promise<string>;
  /** The pair held, as it is (expired or not), or null. Treat it as a secret. */
  getTokens(): Promise<TokenPair | null>;
  /**
   * Logs in now, even during the cooldown after a rejected login: with `credentials` when given (a sign-in form's,
   * used for this login only and not kept), else with the `credentials` option. A sign-in with `credentials` a person
   * typed is never refused by `tokenBudget`, nor does its rejection pause anything: those guard the calls the plugin
   * makes by itself, and repeated wrong passwords are the provider's to judge.
   */
  login(credentials?: Credentials): Promise<void>;
  /**
   * Holds a pair obtained elsewhere (a sign-in page, an OAuth redirect) and writes it to the store, so that tabs and
   * processes sharing it use it too. Its expiry is `expiresAt` when given (a pair from `getTokens()`), else read as an
   * answer's: `expiresIn` in seconds, else a JWT's `exp`, else `accessTokenLifetimeMs`.
   */
  setTokens(tokens: ParsedTokens | TokenPair): Promise<void>;
  /** Renews the access token now through the refresh token (or a login when there is none or it is refused). */
  refresh(): Promise<void>;
  /**
   * Signs out: drops the tokens from memory and the store, and from then on no token is fetched by itself, here or in
   * any holder of the store that keeps the account's record (tabs, processes), cookie mode included, until
   * `login()`, `setTokens()` or `refresh()`: a request fails with `LOGGED_OUT`. With the `logoutRequest` option, the
   * server is told once (to clear a cookie, revoke the refresh token); when that call fails, the tokens are still
   * dropped here and the promise rejects with its error.
   */
  logout(): Promise<void>;
  /**
   * Where the sign-in stands: the same object until something changes, so that React's
   * `useSyncExternalStore(auth.subscribe, auth.getState)` works as it is. Both are bound: pass them as they are.
   *
   * @example
   * const { status, error } = useSyncExternalStore(auth.subscribe, auth.getState);
   * if (status === 'signed-out') return <SignIn error={error} />;
   */
  // `this: void` says they are bound, so that typescript-eslint's unbound-method lets the example above through.
  getState(this: void): TokenAuthState;
  /** Calls `listener` after each change of {@link TokenAuth.getState}, in any tab of a shared store; returns the function that stops it. */
  subscribe(this: void, listener: () => void): () => void;
  /**
   * Resolves once the pair of the last renewal is written to the store and its lock released. A renewal hands the
   * new pair to the waiting requests as soon as the service answers and writes it after: await this before
   * `process.exit()`, so that the next run finds the pair instead of logging in again. `login()`, `refresh()` and
   * `setTokens()` resolve after the write already.
   *
   * @example
   * await main();
   * await auth.flush();
   * process.exit(0);
   */
  flush(): Promise<void>;
  /** This account's counters since attach, the callers waiting and the budget left: a copy, for metrics and health checks. */
  stats(): TokenAuthStats;
}
