import nock from 'nock';
import type { EmulatorCounters } from '../../lib/emulator/index.js';
import { PASSWORD, USERNAME } from './credentials.js';

export { PASSWORD, USERNAME };

export const API = 'https://api.test';
export const LOGIN = '/auth/api/v1/accounts/login';
export const TOKEN = '/auth/api/v1/accounts/token';

export type Reply = [number, unknown] | [number, unknown, Record<string, string>];
/** An Error fails the connection; 'hang' never answers. */
export type Fault = Reply | Error | 'hang';

export interface Received {
  route: 'login' | 'token' | 'data';
  method: string;
  origin: string;
  path: string;
  authorization: string | undefined;
  headers: Record<string, unknown>;
  body: string;
  /** Date.now() on arrival, for behaviour defined in time (a Retry-After honoured), never for speed. */
  at: number;
}

/**
 * What the fake has served, named as lib/emulator's `counters` are, each with the same meaning, so that a test reads
 * the same over nock as over real HTTP. Three differ:
 * - `expiries` is left out: the fake forgets an expired access token, so it cannot tell one from a token it never
 *   issued.
 * - `loginCalls` and `refreshCalls` are the emulator's `tokenCalls` route by route (the login calls, and the token
 *   calls that send a refresh token, received, faults and refusals included): named apart from `logins` and
 *   `refreshes`, which count only the successful ones, as the emulator's do.
 * - `logouts` is left out: the fake has no logout call.
 *
 * Calls are counted as they arrive, before `tokenDelayMs` or `dataDelayMs` (the emulator counts `tokenCalls` and
 * `dataCalls` once its `latency` has passed).
 */
export interface FakeServiceCounters extends Omit<EmulatorCounters, 'expiries' | 'logouts'> {
  /** Login calls received, faults and refusals included. */
  loginCalls: number;
  /** Token calls (the ones with a refresh token) received, faults and refusals included. */
  refreshCalls: number;
}

type Callback = (error: Error | null, reply?: Reply) => void;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * A stand-in of the token service over nock, for unit tests: Basic login, rotating refresh tokens that work once,
 * Bearer data calls, 401 with `detail`, as the real service behaves (and lib/emulator, over real HTTP).
 * Tests steer it through its public fields. Call `nock.cleanAll()` after each test.
 */
export class FakeTokenService {
  readonly users = new Map([[USERNAME, PASSWORD]]);
  readonly validAccess = new Set<string>();
  readonly validRefresh = new Set<string>();
  readonly received: Received[] = [];
  rotate = true;
  /** The token answer shape: the real service's `{status, data: {access_token, refresh_token}}` by default. */
  tokenShape: 'real' | 'seed' = 'real';
  /** Seconds to announce as `expires_in`, if any. */
  expiresIn: number | undefined;
  /** Makes access tokens JWTs whose `exp` is this many seconds after issue. */
  jwtLifetimeSec: number | undefined;
  clockSec: () => number = () => Math.floor(Date.now() / 1000);
  tokenDelayMs = 0;
  dataDelayMs: number | ((path: string) => number) = 0;
  /** Replace the next answers of a route, one fault each. */
  readonly loginFaults: Fault[] = [];
  readonly tokenFaults: Fault[] = [];
  /** What a data call with an unusable token gets: 401 as the seed says, or what another service answers. */
  refusalStatus = 401;
  /** Paths that answer 401 whatever the token. */
  readonly alwaysUnauthorized = new Set<string>();
  private serial = 0;
  /** What held calls of each kind wait for, once received (see `hold`). */
  private readonly held: Partial<Record<'token' | 'data', Promise<void>>> = {};
  /** The counters that are not counts of `received`. */
  private readonly served = { logins: 0, refreshes: 0, rejected: 0, unauthorized: 0, faults: 0 };

  constructor(
    readonly authBase = API,
    readonly dataBase = API,
  ) {
    // eslint-disable-next-line @typescript-eslint/no-this-alias
    const service = this;
    const auth = nock(authBase).persist();
    auth.post(LOGIN).reply(function (this: nock.ReplyFnContext, _uri: string, body: unknown, callback: Callback) {
      void service.route('login', authBase, this.req.headers, body, callback);
    } as never);
    auth.post(TOKEN).reply(function (this: nock.ReplyFnContext, _uri: string, body: unknown, callback: Callback) {
      void service.route('token', authBase, this.req.headers, body, callback);
    } as never);
    const data = nock(dataBase).persist();
    for (const method of ['get', 'post', 'put', 'patch', 'delete'] as const) {
      data[method]((path: string) => !path.startsWith('/auth/')).reply(function (
        this: nock.ReplyFnContext,
        path: string,
        body: unknown,
        callback: Callback,
      ) {
        void service.data(method.toUpperCase(), path, this.req.headers, body, callback);
      } as never);
    }
  }

  /**
   * Holds the calls of `kind` (the login and token calls, or data calls) received from now on until the function it
   * returns is called: they are answered then, as the service is at that moment. A call is in flight for as long as
   * the test needs, whatever the machine's load, where a delay would only make that likely.
   */
  hold(kind: 'token' | 'data'): () => void {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    this.held[kind] = held;
    return () => {
      if (this.held[kind] === held) delete this.held[kind];
      release();
    };
  }

  /** Ends the life of every access token issued so far, as 45 minutes would. */
  expireAccessTokens(): void {
    this.validAccess.clear();
  }

  revokeRefreshTokens(): void {
    this.validRefresh.clear();
  }

  /** What the service has served so far, as of this read: see {@link FakeServiceCounters}. */
  get counters(): FakeServiceCounters {
    const calls = (route: Received['route']) => this.received.filter((entry) => entry.route === route).length;
    const [loginCalls, refreshCalls] = [calls('login'), calls('token')];
    return {
      ...this.served,
      loginCalls,
      refreshCalls,
      tokenCalls: loginCalls + refreshCalls,
      dataCalls: calls('data'),
    };
  }

  /** Every token the service has issued, for scanning outputs for leaks. */
  readonly issued: string[] = [];

  private issue(): { access: string; refresh: string } {
    this.serial += 1;
    const nonce = Math.random().toString(36).slice(2, 10);
    let access = `acc-${this.serial}-${nonce}`;
    if (this.jwtLifetimeSec !== undefined) {
      const segment = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
      access = `${segment({ alg: 'none', typ: 'JWT' })}.${segment({ sub: USERNAME, exp: this.clockSec() + this.jwtLifetimeSec, n: access })}.sig`;
    }
    const pair = { access, refresh: `ref-${this.serial}-${nonce}` };
    this.validAccess.add(pair.access);
    this.validRefresh.add(pair.refresh);
    this.issued.push(pair.access, pair.refresh);
    return pair;
  }

  private async route(
    route: 'login' | 'token',
    origin: string,
    headers: Record<string, unknown>,
    body: unknown,
    callback: Callback,
  ): Promise<void> {
    const authorization = headers.authorization as string | undefined;
    this.received.push({
      route,
      method: 'POST',
      origin,
      path: route === 'login' ? LOGIN : TOKEN,
      authorization,
      headers,
      body: stringify(body),
      at: Date.now(),
    });
    if (this.tokenDelayMs) await sleep(this.tokenDelayMs);
    await this.held.token;
    const fault = (route === 'login' ? this.loginFaults : this.tokenFaults).shift();
    if (fault !== undefined) this.served.faults += 1;
    if (fault === 'hang') return;
    if (fault instanceof Error) return callback(fault);
    if (fault) return callback(null, fault);
    callback(null, route === 'login' ? this.login(authorization) : this.token(body));
  }

  private login(authorization: string | undefined): Reply {
    const encoded = authorization?.startsWith('Basic ') ? authorization.slice(6) : '';
    const decoded = Buffer.from(encoded, 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    const [username, password] = [decoded.slice(0, colon), decoded.slice(colon + 1)];
    if (colon < 0 || this.users.get(username) !== password) {
      this.served.rejected += 1;
      return [401, { detail: 'Invalid username or password.' }];
    }
    this.served.logins += 1;
    return [200, this.withExpiry(this.issue())];
  }

  private token(body: unknown): Reply {
    const parsed = typeof body === 'string' ? safeJSON(body) : body;
    const refresh = (parsed as { refresh_token?: unknown } | undefined)?.refresh_token;
    if (typeof refresh !== 'string' || !this.validRefresh.has(refresh)) {
      this.served.rejected += 1;
      return [401, { detail: 'Token is invalid or expired', code: 'token_not_valid' }];
    }
    this.served.refreshes += 1;
    const pair = this.issue();
    if (this.rotate) this.validRefresh.delete(refresh);
    else this.validRefresh.delete(pair.refresh);
    const answer = this.rotate ? pair : { access: pair.access };
    if (this.tokenShape === 'seed') return [200, this.withExpiry(answer)];
    return [
      200,
      {
        status: true,
        data: {
          access_token: answer.access,
          ...(this.rotate ? { refresh_token: pair.refresh } : {}),
          ...this.expiryField(),
        },
      },
    ];
  }

  private withExpiry<T extends object>(answer: T): T {
    return { ...answer, ...this.expiryField() };
  }

  private expiryField(): { expires_in?: number } {
    return this.expiresIn === undefined ? {} : { expires_in: this.expiresIn };
  }

  private async data(
    method: string,
    path: string,
    headers: Record<string, unknown>,
    body: unknown,
    callback: Callback,
  ): Promise<void> {
    const authorization = headers.authorization as string | undefined;
    this.received.push({
      route: 'data',
      method,
      origin: this.dataBase,
      path,
      authorization,
      headers,
      body: stringify(body),
      at: Date.now(),
    });
    const delay = typeof this.dataDelayMs === 'function' ? this.dataDelayMs(path) : this.dataDelayMs;
    if (delay) await sleep(delay);
    await this.held.data;
    const token = authorization?.startsWith('Bearer ') ? authorization.slice(7) : undefined;
    if (token === undefined || !this.validAccess.has(token) || this.alwaysUnauthorized.has(path)) {
      if (this.refusalStatus === 401) this.served.unauthorized += 1;
      return callback(null, [
        this.refusalStatus,
        { detail: 'Given token not valid for any token type', code: 'token_not_valid' },
      ]);
    }
    callback(null, [200, { method, path, body: stringify(body), contentType: headers['content-type'] ?? null }]);
  }
}

function stringify(body: unknown): string {
  return typeof body === 'string' ? body : body === undefined ? '' : JSON.stringify(body);
}

function safeJSON(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
