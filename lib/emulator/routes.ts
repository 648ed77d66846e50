// What the emulated token service answers on each route: the login, the token call, the logout and a data call. The
// HTTP side (listening, faults, latency, the call log) is server.ts's; the memory of tokens is tokens.ts's; DPoP's
// checks are dpop-gate.ts's, and a route that asks them returns what they came to, for the call log.
import type { ServerResponse } from 'node:http';
import { DpopGate, refuseDataCall, refuseTokenCall } from './dpop-gate.js';
import { cookieValue, parseJSON, sendJSON } from './http.js';
import type { ServiceRequest } from './http.js';
import { TokenLedger } from './tokens.js';
import type {
  EmulatorCounters,
  EmulatorDpopCheck,
  EmulatorDpopCounters,
  EmulatorOptions,
  EmulatorRoute,
} from './types.js';

const ACCOUNTS = '/auth/api/v1/accounts';
const LOGIN = `${ACCOUNTS}/login`;
const TOKEN = `${ACCOUNTS}/token`;
const LOGOUT = `${ACCOUNTS}/logout`;
const REFRESH_COOKIE = 'refresh_token';

/** Which route a request is for: any path that is not one of the accounts' calls is a protected resource. */
export function routeOf(method: string, path: string): EmulatorRoute {
  if (method === 'POST' && path === LOGIN) return 'login';
  if (method === 'POST' && path === TOKEN) return 'token';
  if (method === 'POST' && path === LOGOUT) return 'logout';
  return 'data';
}

const TOKEN_NOT_VALID = { detail: 'Given token not valid for any token type', code: 'token_not_valid' };

/** The token of an Authorization header of `scheme`. */
function tokenOf(request: ServiceRequest, scheme: 'Bearer' | 'DPoP'): string | undefined {
  const prefix = `${scheme} `;
  return request.authorization?.startsWith(prefix) ? request.authorization.slice(prefix.length) : undefined;
}

/** The refresh token a token call or a logout carries in its JSON body: `refresh_token`, or SimpleJWT's `refresh`. */
function bodyRefreshToken(request: ServiceRequest): string | undefined {
  const parsed = parseJSON(request.body) as { refresh_token?: unknown; refresh?: unknown } | string;
  const refresh = typeof parsed === 'object' && parsed !== null ? (parsed.refresh_token ?? parsed.refresh) : undefined;
  return typeof refresh === 'string' ? refresh : undefined;
}

/**
 * The path lets the browser send the cookie to the accounts' calls only; SameSite=Lax still sends it from a page on
 * another port of the same host. No `Secure`: the emulator serves plain http.
 */
const COOKIE_ATTRIBUTES = `HttpOnly; Path=${ACCOUNTS}; SameSite=Lax`;

function keepRefreshCookie(refresh: string): Record<string, string> {
  return { 'Set-Cookie': `${REFRESH_COOKIE}=${refresh}; ${COOKIE_ATTRIBUTES}` };
}

const CLEAR_REFRESH_COOKIE = { 'Set-Cookie': `${REFRESH_COOKIE}=; ${COOKIE_ATTRIBUTES}; Max-Age=0` };

/** What a token answer adds for tokens bound to a DPoP key (RFC 9449, section 5). */
function boundType(jkt: string | undefined): { token_type?: 'DPoP' } {
  return jkt === undefined ? {} : { token_type: 'DPoP' };
}

/** The service's behaviour: who may log in, which tokens are alive, and what each route answers. */
export class ServiceRoutes {
  /** Paths whose data calls answer 401 whatever the token. */
  readonly unauthorizedPaths: Set<string>;
  readonly ledger: TokenLedger;
  /** In DPoP mode (the `dpop` option), its state and checks. */
  readonly dpop: DpopGate | undefined;
  private readonly users: Map<string, string>;
  private readonly expiredSeen = new Set<string>();

  constructor(
    private readonly options: EmulatorOptions,
    private readonly counters: EmulatorCounters,
    clock: () => number,
    dpopCounters: EmulatorDpopCounters,
  ) {
    this.users = new Map(Object.entries(options.users ?? { demo: 'demo-password' }));
    this.ledger = new TokenLedger(options.tokenFormat ?? 'opaque', clock);
    this.unauthorizedPaths = new Set(options.alwaysUnauthorized ?? []);
    this.dpop = options.dpop ? new DpopGate(options.dpop, dpopCounters, clock) : undefined;
  }

  login(request: ServiceRequest, response: ServerResponse): EmulatorDpopCheck | undefined {
    const check = this.dpop?.check(request);
    if (check !== undefined && check.outcome !== 'accepted') {
      refuseTokenCall(response, check);
      return check;
    }
    const { authorization } = request;
    const decoded = authorization?.startsWith('Basic ')
      ? Buffer.from(authorization.slice(6), 'base64').toString('utf8')
      : '';
    const colon = decoded.indexOf(':');
    const username = decoded.slice(0, colon);
    if (colon < 1 || this.users.get(username) !== decoded.slice(colon + 1)) {
      this.counters.rejected += 1;
      sendJSON(response, 401, {
        detail: authorization ? 'Invalid username or password.' : 'Authentication credentials were not provided.',
      });
      return check;
    }
    this.counters.logins += 1;
    const jkt = check?.jkt;
    const access = this.issueAccess(username, jkt);
    const refresh = this.ledger.issueRefresh(username, this.refreshTtl, jkt);
    const bound = boundType(jkt);
    if (this.options.refreshCookie) sendJSON(response, 200, { access, ...bound }, keepRefreshCookie(refresh));
    else sendJSON(response, 200, { access, refresh, ...bound });
    return check;
  }

  /**
   * Renews with a refresh token. In DPoP mode the proof comes first, and a refresh token bound to another key than
   * the proof's is refused (and kept alive for its key); a dead one is refused as without DPoP.
   */
  token(request: ServiceRequest, response: ServerResponse): EmulatorDpopCheck | undefined {
    const refresh = this.refreshTokenOf(request);
    const jkt = refresh === undefined ? undefined : this.ledger.refreshKey(refresh);
    const check = this.dpop?.check(request, jkt === undefined ? {} : { boundTo: { jkt, token: 'refresh' } });
    if (check !== undefined && check.outcome !== 'accepted') {
      if (check.outcome === 'wrong-key') this.counters.rejected += 1;
      refuseTokenCall(response, check);
      return check;
    }
    const rotate = this.options.rotateRefreshTokens !== false;
    const username = refresh === undefined ? undefined : this.ledger.spendRefresh(refresh, rotate);
    if (username === undefined) {
      this.counters.rejected += 1;
      sendJSON(response, 401, { detail: 'Token is invalid or expired', code: 'token_not_valid' });
      return check;
    }
    this.counters.refreshes += 1;
    this.renew(username, rotate, check?.jkt, response);
    return check;
  }

  /**
   * Kills the refresh token it carries. It answers 200 without one, or with one already dead, too: a client logging
   * out must be able to finish whatever state its session is in.
   */
  logout(request: ServiceRequest, response: ServerResponse): void {
    const refresh = this.refreshTokenOf(request);
    if (refresh !== undefined) this.ledger.revokeRefreshToken(refresh);
    this.counters.logouts += 1;
    sendJSON(response, 200, { status: true }, this.options.refreshCookie ? CLEAR_REFRESH_COOKIE : {});
  }

  /** The user a data call's token was issued to, while it is valid: what the data call would answer for. */
  userOf(request: ServiceRequest): string | undefined {
    const token = this.accessTokenOf(request);
    return token === undefined ? undefined : this.ledger.accessUser(token);
  }

  /**
   * A protected resource: echoes the request for a valid token. In DPoP mode the token goes with the DPoP scheme and
   * a proof by its key that carries its hash; the refusals say so in `WWW-Authenticate`.
   */
  data(request: ServiceRequest, response: ServerResponse): EmulatorDpopCheck | undefined {
    this.counters.dataCalls += 1;
    const token = this.accessTokenOf(request);
    const state = token === undefined ? 'unknown' : this.ledger.checkAccess(token);
    if (state === 'expired' && !this.expiredSeen.has(token!)) {
      this.expiredSeen.add(token!);
      this.counters.expiries = this.expiredSeen.size;
    }
    const check = this.checkData(request, token, typeof state === 'object' ? state.jkt : undefined);
    const user = typeof state === 'object' ? state.user : undefined;
    const refused = check !== undefined && check.outcome !== 'accepted';
    if (refused || user === undefined || this.unauthorizedPaths.has(request.path)) {
      this.refuseData(response, refused ? check : undefined);
      return check;
    }
    const { contentType, body } = request;
    sendJSON(response, 200, {
      method: request.method,
      path: request.fullPath,
      user,
      contentType: contentType ?? null,
      body: contentType?.includes('json') ? parseJSON(body) : body,
    });
    return check;
  }

  /** A data call's DPoP check, in DPoP mode: a token without the DPoP scheme is refused; else its proof is checked. */
  private checkData(
    request: ServiceRequest,
    token: string | undefined,
    jkt: string | undefined,
  ): EmulatorDpopCheck | undefined {
    if (this.dpop === undefined) return undefined;
    if (token === undefined) return this.dpop.refuseScheme();
    const boundTo = jkt === undefined ? undefined : { jkt, token: 'access' as const };
    return this.dpop.check(request, { accessToken: token, ...(boundTo && { boundTo }) });
  }

  /** Answers a data call 401: with the DPoP check's refusal, else the token's, as a DPoP challenge in DPoP mode. */
  private refuseData(response: ServerResponse, refusal: EmulatorDpopCheck | undefined): void {
    this.counters.unauthorized += 1;
    if (refusal !== undefined) return refuseDataCall(response, refusal.error!, refusal.detail!);
    if (this.dpop !== undefined) return refuseDataCall(response, 'invalid_token', TOKEN_NOT_VALID.detail);
    sendJSON(response, 401, TOKEN_NOT_VALID);
  }

  /** A data call's access token: a Bearer, or in DPoP mode one of the DPoP scheme. */
  private accessTokenOf(request: ServiceRequest): string | undefined {
    return tokenOf(request, this.dpop ? 'DPoP' : 'Bearer');
  }

  /** Answers a token call that spent its refresh token: a new access token, and a new refresh token if it rotates. */
  private renew(username: string, rotate: boolean, jkt: string | undefined, response: ServerResponse): void {
    const data: Record<string, string> = { access_token: this.issueAccess(username, jkt), ...boundType(jkt) };
    const next = rotate ? this.ledger.issueRefresh(username, this.refreshTtl, jkt) : undefined;
    if (next === undefined) return sendJSON(response, 200, { status: true, data });
    if (this.options.refreshCookie) return sendJSON(response, 200, { status: true, data }, keepRefreshCookie(next));
    sendJSON(response, 200, { status: true, data: { ...data, refresh_token: next } });
  }

  /** The body's refresh token, else, when the service keeps it in a cookie, the cookie's. */
  private refreshTokenOf(request: ServiceRequest): string | undefined {
    const inBody = bodyRefreshToken(request);
    if (inBody !== undefined || !this.options.refreshCookie) return inBody;
    return cookieValue(request.cookie, REFRESH_COOKIE);
  }

  private issueAccess(username: string, jkt: string | undefined): string {
    return this.ledger.issueAccess(username, this.options.accessTtlMs ?? 45 * 60_000, jkt);
  }

  private get refreshTtl(): number {
    return this.options.refreshTtlMs ?? 30 * 24 * 60 * 60_000;
  }
}
