// The emulator's public contract: its options, the faults it can inject, and what it records (counters, calls).
import type { TokenFormat } from './tokens.js';

/** The emulator's kinds of call: the login, the token call, the logout, and any other path (a protected resource). */
export type EmulatorRoute = 'login' | 'token' | 'logout' | 'data';

/**
 * What the next answer of a route is replaced by: an HTTP answer of your choosing, or a failure of the connection.
 * `hang` never answers; `drop` closes the connection before answering; `reset` sends the headers and half a body,
 * then closes; `malformed` is a 200 whose body is not JSON; `no-access-token` a 200 without a token; `huge` a
 * 200 with a body of several megabytes; `redirect` a 302 to another address.
 */
export type EmulatorFault =
  | {
      /** The HTTP status to answer. */
      status: number;
      /** The body, sent as JSON. */
      body?: unknown;
      /** Extra headers, such as `Retry-After`. */
      headers?: Record<string, string>;
    }
  | {
      /** Where the 302 points. */
      redirect: string;
    }
  | 'hang'
  | 'drop'
  | 'reset'
  | 'malformed'
  | 'no-access-token'
  | 'huge';

/** Options of `startEmulator` and `TokenServiceEmulator`. All are optional. */
export interface EmulatorOptions {
  /**
   * The address to listen on.
   * @default '127.0.0.1'
   */
  host?: string;
  /**
   * The port to listen on; read the address back from `url`.
   * @default 0, a free port
   */
  port?: number;
  /** Usernames and passwords that may log in. @default { demo: 'demo-password' } */
  users?: Record<string, string>;
  /**
   * Lifetime of an access token; the service's is 45 minutes. Make it short to see expiries in a test.
   * @default 2_700_000 (45 minutes)
   */
  accessTtlMs?: number;
  /**
   * Lifetime of a refresh token; the service says only "much longer than the access token".
   * @default 2_592_000_000 (30 days)
   */
  refreshTtlMs?: number;
  /** A token call returns a new refresh token and kills the one it was given. @default true */
  rotateRefreshTokens?: boolean;
  /**
   * `'jwt'` issues HS256 JWTs with `exp`, which the plugin reads as the expiry.
   * @default 'opaque'
   */
  tokenFormat?: TokenFormat;
  /** Milliseconds before each answer, per route: a number or a function of the request. @default 0 */
  latency?: number | Partial<Record<EmulatorRoute, number | ((request: { method: string; path: string }) => number)>>;
  /**
   * Paths whose data calls always answer 401, whatever the token (a permission, not an expiry).
   * @default []
   */
  alwaysUnauthorized?: string[];
  /**
   * Keep the refresh token in an HttpOnly cookie, as dj-rest-auth's `JWT_AUTH_HTTPONLY` does: the login and a token
   * call that rotates set it (`refresh_token`, `Path=/auth/api/v1/accounts`, `SameSite=Lax`) and leave it out of
   * their JSON; the token call and the logout read it when their body has no `refresh_token`; the logout clears it.
   * @default false
   */
  refreshCookie?: boolean;
  /**
   * Answer CORS preflights and allow any origin, credentials included (the origin echoed, never `*`), and the headers
   * a client sends or a preflight asks for, for tests in a browser.
   * @default false
   */
  cors?: boolean;
  /**
   * DPoP (RFC 9449): the login and the token call need a `DPoP` proof, the tokens they issue are bound to the proof's
   * key (the token answers say `token_type: "DPoP"`), a refresh token is renewed only with a proof by its key, and
   * data calls take `Authorization: DPoP <access>` with a proof by the token's key that carries its hash (`ath`).
   * `{ requireNonce: true }` also asks every proof for the nonce that each answer's `DPoP-Nonce` header gives.
   * Refusals: a login or token call answers 400 `{ error, detail }` (`use_dpop_nonce`, `invalid_dpop_proof`, or
   * `invalid_grant` for a refresh token bound to another key); a data call answers 401 with
   * `WWW-Authenticate: DPoP error="…"`. See `rotateDpopNonce()` and `dpopCounters`.
   * @default false
   */
  dpop?: boolean | EmulatorDpopOptions;
  /** Keep a log of the calls in `calls`. Turn off for long runs. @default true */
  log?: boolean;
  /**
   * The time in epoch milliseconds; share one with the plugin's `clock` to move time in tests.
   * @default Date.now
   */
  clock?: () => number;
}

/** The `dpop` option's settings. */
export interface EmulatorDpopOptions {
  /**
   * Every proof must carry the emulator's current nonce, which every answer gives in its `DPoP-Nonce` header; a
   * proof without it, or with an old one, is answered `use_dpop_nonce`.
   * @default false
   */
  requireNonce?: boolean;
}

/**
 * What the DPoP check of a call came to, in DPoP mode: `accepted`; `nonce` (the proof lacks the current nonce);
 * `invalid` (no proof, a proof that fails a check, or a data call's token sent without the DPoP scheme); `wrong-key`
 * (a good proof by another key than the one the token is bound to).
 */
export type EmulatorDpopOutcome = 'accepted' | 'nonce' | 'invalid' | 'wrong-key';

/** The DPoP check of one call, as the call log keeps it: never a key's private part, never a token. */
export interface EmulatorDpopCheck {
  /** What it came to, counted in `dpopCounters` (`wrong-key` as `wrongKey`). */
  outcome: EmulatorDpopOutcome;
  /** The RFC 7638 thumbprint of the proof's key, once its signature holds. */
  jkt: string | undefined;
  /** Whether the proof carried a `nonce` claim. */
  nonce: boolean;
  /** Whether the proof carried an `ath` claim (an access token's hash). */
  ath: boolean;
  /** The error the refusal names (`use_dpop_nonce`, `invalid_dpop_proof`, `invalid_token`, `invalid_grant`). */
  error?: string;
  /** Why it was refused, as the answer says. */
  detail?: string;
}

/** One call the emulator received, with the credential it carried, so tests can check where secrets went. */
export interface EmulatorCall {
  /** Which kind of call it was. */
  route: EmulatorRoute;
  /** The HTTP method. */
  method: string;
  /** The path with its query string. */
  path: string;
  /** The Authorization header as received. */
  authorization: string | undefined;
  /** The Cookie header as received: for checking where a refresh cookie went, and where it did not. */
  cookie: string | undefined;
  /**
   * A data call's: the user its Bearer token was issued to, as found when the call was answered (after `latency`),
   * faults included; undefined for a token unknown or expired, and on the other routes.
   */
  user: string | undefined;
  /** The request body as text. */
  body: string;
  /** The `X-Request-Id` header, if any: for checking that a replay went out as the first send did. */
  requestId: string | undefined;
  /** When it arrived, by the emulator's `clock`. */
  at: number;
  /**
   * In DPoP mode, what the check of its proof came to, on the login, the token call and data calls; none for an
   * injected fault, which answers before any check.
   */
  dpop?: EmulatorDpopCheck;
}

/** What the emulator has served since it started. */
export interface EmulatorCounters {
  /** Successful logins: the token pairs generated with credentials. */
  logins: number;
  /** Successful token calls: the access tokens generated with a refresh token. */
  refreshes: number;
  /**
   * Login and token calls answered 4xx (wrong credentials, dead refresh token, a refresh token bound to another DPoP
   * key); a DPoP proof refused for its nonce or as invalid counts in `dpopCounters` alone.
   */
  rejected: number;
  /** Data calls answered 401. */
  unauthorized: number;
  /** Calls to any path other than the login, the token call and the logout. */
  dataCalls: number;
  /** Every login and token call received, faults included. */
  tokenCalls: number;
  /** Distinct access tokens presented after they expired: the expiries clients had to deal with. */
  expiries: number;
  /** Injected faults served. */
  faults: number;
  /** Logout calls answered, whether or not the refresh token they carried was still alive. */
  logouts: number;
}

/**
 * What the DPoP checks came to (`dpopCounters`), in DPoP mode: each login, token and data call that reaches its route
 * (not an injected fault) counts once, in the counter of its {@link EmulatorDpopOutcome}.
 */
export interface EmulatorDpopCounters {
  /** Proofs that passed every check, by the key of the token they came with (a data call's token may still be dead). */
  accepted: number;
  /** Proofs refused for want of the current nonce: answered `use_dpop_nonce`. */
  nonce: number;
  /** Calls without a proof, with a proof that fails a check, or (data calls) a token without the DPoP scheme. */
  invalid: number;
  /** Good proofs by another key than the one the refresh or access token is bound to. */
  wrongKey: number;
}
