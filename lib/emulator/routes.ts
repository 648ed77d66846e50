// What the emulated token service answers on each route: the login, the token call, the logout and a data call. The
// HTTP side (listening, faults, latency, the call log) is server.ts's; the memory of tokens is tokens.ts's.
import type { ServerResponse } from 'node:http';
import { cookieValue, parseJSON, sendJSON } from './http.js';
import type { ServiceRequest } from './http.js';
import { TokenLedger } from './tokens.js';
import type { EmulatorCounters, EmulatorOptions, EmulatorRoute } from './types.js';

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

function bearerOf(request: ServiceRequest): string | undefined {
  return request.authorization?.startsWith('Bearer ') ? request.authorization.slice(7) : undefined;
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

/** The service's behaviour: who may log in, which tokens are alive, and what each route answers. */
export class ServiceRoutes {
  /** Paths whose data calls answer 401 whatever the token. */
  readonly unauthorizedPaths: Set<string>;
  readonly ledger: TokenLedger;
  private readonly users: Map<string, string>;
  private readonly expiredSeen = new Set<string>();

  constructor(
    private readonly options: EmulatorOptions,
    private readonly counters: EmulatorCounters,
    clock: () => number,
  ) {
    this.users = new Map(Object.entries(options.users ?? { demo: 'demo-password' }));
    this.ledger = new TokenLedger(options.tokenFormat ?? 'opaque', clock);
    this.unauthorizedPaths = new Set(options.alwaysUnauthorized ?? []);
  }

  login(request: ServiceRequest, response: ServerResponse): void {
    const { authorization } = request;
    const decoded = authorization?.startsWith('Basic ')
      ? Buffer.from(authorization.slice(6), 'base64').toString('utf8')
      : '';
    const colon = decoded.indexOf(':');
    const username = decoded.slice(0, colon);
    if (colon < 1 || this.users.get(username) !== decoded.slice(colon + 1)) {
      this.counters.rejected += 1;
      return sendJSON(response, 401, {
        detail: authorization ? 'Invalid username or password.' : 'Authentication credentials were not provided.',
      });
    }
    this.counters.logins += 1;
    const access = this.issueAccess(username);
    const refresh = this.ledger.issueRefresh(username, this.refreshTtl);
    if (this.options.refreshCookie) sendJSON(response, 200, { access }, keepRefreshCookie(refresh));
    else sendJSON(response, 200, { access, refresh });
  }

  token(request: ServiceRequest, response: ServerResponse): void {
    const refresh = this.refreshTokenOf(request);
    const rotate = this.options.rotateRefreshTokens !== false;
    const username = refresh === undefined ? undefined : this.ledger.spendRefresh(refresh, rotate);
    if (username === undefined) {
      this.counters.rejected += 1;
      return sendJSON(response, 401, { detail: 'Token is invalid or expired', code: 'token_not_valid' });
    }
    this.counters.refreshes += 1;
    const data: Record<string, string> = { access_token: this.issueAccess(username) };
    const next = rotate ? this.ledger.issueRefresh(username, this.refreshTtl) : undefined;
    if (next === undefined) return sendJSON(response, 200, { status: true, data });
    if (this.options.refreshCookie) return sendJSON(response, 200, { status: true, data }, keepRefreshCookie(next));
    sendJSON(response, 200, { status: true, data: { ...data, refresh_token: next } });
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
    const token = bearerOf(request);
    return token === undefined ? undefined : this.ledger.accessUser(token);
  }

  data(request: ServiceRequest, response: ServerResponse): void {
    this.counters.dataCalls += 1;
    const token = bearerOf(request);
    const state = token === undefined ? 'unknown' : this.ledger.checkAccess(token);
    if (state === 'expired' && !this.expiredSeen.has(token!)) {
      this.expiredSeen.add(token!);
      this.counters.expiries = this.expiredSeen.size;
    }
    const user = typeof state === 'object' ? state.user : undefined;
    if (user === undefined || this.unauthorizedPaths.has(request.path)) {
      this.counters.unauthorized += 1;
      return sendJSON(response, 401, { detail: 'Given token not valid for any token type', code: 'token_not_valid' });
    }
    const { contentType, body } = request;
    sendJSON(response, 200, {
      method: request.method,
      path: request.fullPath,
      user,
      contentType: contentType ?? null,
      body: contentType?.includes('json') ? parseJSON(body) : body,
    });
  }

  /** The body's refresh token, else, when the service keeps it in a cookie, the cookie's. */
  private refreshTokenOf(request: ServiceRequest): string | undefined {
    const inBody = bodyRefreshToken(request);
    if (inBody !== undefined || !this.options.refreshCookie) return inBody;
    return cookieValue(request.cookie, REFRESH_COOKIE);
  }

  private issueAccess(username: string): string {
    return this.ledger.issueAccess(username, this.options.accessTtlMs ?? 45 * 60_000);
  }

  private get refreshTtl(): number {
    return this.options.refreshTtlMs ?? 30 * 24 * 60 * 60_000;
  }
}
