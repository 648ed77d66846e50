import { createServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { TokenLedger } from './tokens.js';
import type { TokenFormat } from './tokens.js';

/** The emulator's three kinds of call: the login, the token call, and any other path (a protected resource). */
export type EmulatorRoute = 'login' | 'token' | 'data';

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

/** Options of {@link startEmulator} and {@link TokenServiceEmulator}. All are optional. */
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
  /** Answer CORS preflights and allow any origin, for tests in a browser. @default false */
  cors?: boolean;
  /** Keep a log of the calls in `calls`. Turn off for long runs. @default true */
  log?: boolean;
  /**
   * The time in epoch milliseconds; share one with the plugin's `clock` to move time in tests.
   * @default Date.now
   */
  clock?: () => number;
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
  /** The request body as text. */
  body: string;
  /** The `X-Request-Id` header, if any: for checking that a replay went out as the first send did. */
  requestId: string | undefined;
  /** When it arrived, by the emulator's `clock`. */
  at: number;
}

/** What the emulator has served since it started. */
export interface EmulatorCounters {
  /** Successful logins: the token pairs generated with credentials. */
  logins: number;
  /** Successful token calls: the access tokens generated with a refresh token. */
  refreshes: number;
  /** Login and token calls answered 4xx (wrong credentials, dead refresh token). */
  rejected: number;
  /** Data calls answered 401. */
  unauthorized: number;
  /** Calls to any path other than the login and the token call. */
  dataCalls: number;
  /** Every login and token call received, faults included. */
  tokenCalls: number;
  /** Distinct access tokens presented after they expired: the expiries clients had to deal with. */
  expiries: number;
  /** Injected faults served. */
  faults: number;
}

const LOGIN = '/auth/api/v1/accounts/login';
const TOKEN = '/auth/api/v1/accounts/token';

function bodyOf(request: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    request.on('error', reject);
  });
}

function headerText(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value.join(', ') : value;
}

function parseJSON(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/**
 * A local stand-in of the token service, over real HTTP on Node's `http` module. It implements the service's
 * published interface as seen from outside, with what public clients of the real service show: Basic login → `{access, refresh}`; the
 * token call with JSON `{"refresh_token"}` → `{status: true, data: {access_token, refresh_token}}`, rotating the
 * refresh token; any other path is a protected resource that echoes the request for a valid Bearer token and
 * answers 401 `{detail, code: "token_not_valid"}` otherwise.
 *
 * @example
 * const emulator = await startEmulator({ accessTtlMs: 2_000 });
 * const api = axios.create({ baseURL: emulator.url });
 * attachTokenAuth(api, { credentials: { username: 'demo', password: 'demo-password' } });
 * // … then emulator.counters.refreshes, emulator.expireAccessTokens(), await emulator.close()
 */
export class TokenServiceEmulator {
  /** What it has served so far; tests assert on these, such as `counters.logins`. */
  readonly counters: EmulatorCounters = {
    logins: 0,
    refreshes: 0,
    rejected: 0,
    unauthorized: 0,
    dataCalls: 0,
    tokenCalls: 0,
    expiries: 0,
    faults: 0,
  };
  /** Every call received, in order, with the Authorization header it carried; empty with `log: false`. */
  readonly calls: EmulatorCall[] = [];
  private readonly users: Map<string, string>;
  private readonly ledger: TokenLedger;
  private readonly clock: () => number;
  private readonly faults: Record<EmulatorRoute, EmulatorFault[]> = { login: [], token: [], data: [] };
  private readonly unauthorizedPaths: Set<string>;
  private readonly sockets = new Set<Socket>();
  private readonly expiredSeen = new Set<string>();
  private server: Server | undefined;
  private address = '';

  /** Configures an emulator; call {@link start} (or use {@link startEmulator}) to listen. */
  constructor(private readonly options: EmulatorOptions = {}) {
    this.clock = options.clock ?? Date.now;
    this.users = new Map(Object.entries(options.users ?? { demo: 'demo-password' }));
    this.ledger = new TokenLedger(options.tokenFormat ?? 'opaque', this.clock);
    this.unauthorizedPaths = new Set(options.alwaysUnauthorized ?? []);
  }

  /** The base URL, e.g. `http://127.0.0.1:41234`, once started. */
  get url(): string {
    if (!this.address) throw new Error('The emulator is not started: call `await emulator.start()` first.');
    return this.address;
  }

  /** Listens on `host` and `port`; {@link startEmulator} does this for you. */
  async start(): Promise<this> {
    const server = createServer((request, response) => void this.handle(request, response));
    server.on('connection', (socket) => {
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.options.port ?? 0, this.options.host ?? '127.0.0.1', resolve);
    });
    const { address, port } = server.address() as AddressInfo;
    this.address = `http://${address.includes(':') ? `[${address}]` : address}:${port}`;
    this.server = server;
    return this;
  }

  /** Stops listening and ends every connection, hung ones included. */
  async close(): Promise<void> {
    const server = this.server;
    if (!server) return;
    this.server = undefined;
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  /** Every access token issued so far stops working, as if its 45 minutes had passed. */
  expireAccessTokens(): void {
    this.ledger.expireAccess();
  }

  /** Every refresh token issued so far stops working: the next token call is refused, and the client must log in. */
  revokeRefreshTokens(): void {
    this.ledger.revokeRefresh();
  }

  /** The next `times` answers of a route (login, token, or any data call) are replaced by `fault`. */
  inject(route: EmulatorRoute, fault: EmulatorFault, times = 1): void {
    for (let i = 0; i < times; i += 1) this.faults[route].push(fault);
  }

  /** Whether this emulator issued `token` (access or refresh, alive or not): for checking what a client stores. */
  issued(token: string): boolean {
    return this.ledger.issued(token);
  }

  /** Drops the faults not yet served: the service is healthy again. */
  clearFaults(): void {
    for (const queue of Object.values(this.faults)) queue.length = 0;
  }

  /** Data calls to `path` answer 401 whatever the token (or stop doing so). */
  setAlwaysUnauthorized(path: string, on = true): void {
    if (on) this.unauthorizedPaths.add(path);
    else this.unauthorizedPaths.delete(path);
  }

  private async handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const method = request.method ?? 'GET';
    const url = new URL(request.url ?? '/', 'http://emulator');
    const path = url.pathname;
    if (this.options.cors) {
      response.setHeader('Access-Control-Allow-Origin', request.headers.origin ?? '*');
      response.setHeader('Access-Control-Allow-Headers', 'Authorization, Content-Type, X-Requested-With');
      response.setHeader('Access-Control-Allow-Methods', 'GET, POST, PUT, PATCH, DELETE, OPTIONS');
      if (method === 'OPTIONS') return void response.writeHead(204).end();
    }
    const route: EmulatorRoute =
      method === 'POST' && path === LOGIN ? 'login' : method === 'POST' && path === TOKEN ? 'token' : 'data';
    const body = await bodyOf(request);
    const authorization = request.headers.authorization;
    if (this.options.log !== false)
      this.calls.push({
        route,
        method,
        path: `${path}${url.search}`,
        authorization,
        body,
        requestId: headerText(request.headers['x-request-id']),
        at: this.clock(),
      });
    await this.wait(route, method, path);

    if (route !== 'data') this.counters.tokenCalls += 1;
    const fault = this.faults[route].shift();
    if (fault !== undefined) {
      this.counters.faults += 1;
      return this.fail(fault, response);
    }
    if (route === 'data')
      return this.data(method, `${path}${url.search}`, path, authorization, body, request, response);
    if (route === 'login') return this.login(authorization, response);
    return this.token(body, response);
  }

  private login(authorization: string | undefined, response: ServerResponse): void {
    const decoded = authorization?.startsWith('Basic ')
      ? Buffer.from(authorization.slice(6), 'base64').toString('utf8')
      : '';
    const colon = decoded.indexOf(':');
    const username = decoded.slice(0, colon);
    if (colon < 1 || this.users.get(username) !== decoded.slice(colon + 1)) {
      this.counters.rejected += 1;
      return this.json(response, 401, {
        detail: authorization ? 'Invalid username or password.' : 'Authentication credentials were not provided.',
      });
    }
    this.counters.logins += 1;
    this.json(response, 200, {
      access: this.issueAccess(username),
      refresh: this.ledger.issueRefresh(username, this.refreshTtl),
    });
  }

  private token(body: string, response: ServerResponse): void {
    const parsed = parseJSON(body) as { refresh_token?: unknown; refresh?: unknown } | string;
    const refresh =
      typeof parsed === 'object' && parsed !== null ? (parsed.refresh_token ?? parsed.refresh) : undefined;
    const rotate = this.options.rotateRefreshTokens !== false;
    const username = typeof refresh === 'string' ? this.ledger.spendRefresh(refresh, rotate) : undefined;
    if (username === undefined) {
      this.counters.rejected += 1;
      return this.json(response, 401, { detail: 'Token is invalid or expired', code: 'token_not_valid' });
    }
    this.counters.refreshes += 1;
    const data: Record<string, string> = { access_token: this.issueAccess(username) };
    if (rotate) data.refresh_token = this.ledger.issueRefresh(username, this.refreshTtl);
    this.json(response, 200, { status: true, data });
  }

  private data(
    method: string,
    fullPath: string,
    path: string,
    authorization: string | undefined,
    body: string,
    request: IncomingMessage,
    response: ServerResponse,
  ): void {
    this.counters.dataCalls += 1;
    const token = authorization?.startsWith('Bearer ') ? authorization.slice(7) : undefined;
    const state = token === undefined ? 'unknown' : this.ledger.checkAccess(token);
    if (state === 'expired' && !this.expiredSeen.has(token!)) {
      this.expiredSeen.add(token!);
      this.counters.expiries = this.expiredSeen.size;
    }
    const user = typeof state === 'object' ? state.user : undefined;
    if (user === undefined || this.unauthorizedPaths.has(path)) {
      this.counters.unauthorized += 1;
      return this.json(response, 401, { detail: 'Given token not valid for any token type', code: 'token_not_valid' });
    }
    const contentType = request.headers['content-type'];
    this.json(response, 200, {
      method,
      path: fullPath,
      user,
      contentType: contentType ?? null,
      body: contentType?.includes('json') ? parseJSON(body) : body,
    });
  }

  private fail(fault: EmulatorFault, response: ServerResponse): void {
    if (fault === 'hang') return;
    if (fault === 'drop') return void response.socket?.destroy();
    if (fault === 'reset') {
      response.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': '200' });
      response.write('{"access":"');
      setTimeout(() => response.socket?.destroy(), 5);
      return;
    }
    if (fault === 'malformed')
      return void response.writeHead(200, { 'Content-Type': 'application/json' }).end('{"access": "abc", ');
    if (fault === 'no-access-token') return this.json(response, 200, { status: true, data: { message: 'ok' } });
    if (fault === 'huge') return this.json(response, 200, { padding: 'x'.repeat(5 * 1024 * 1024) });
    if ('redirect' in fault) return void response.writeHead(302, { Location: fault.redirect }).end();
    response.writeHead(fault.status, { 'Content-Type': 'application/json', ...fault.headers });
    response.end(JSON.stringify(fault.body ?? { detail: `Injected fault: HTTP ${fault.status}` }));
  }

  private issueAccess(username: string): string {
    return this.ledger.issueAccess(username, this.options.accessTtlMs ?? 45 * 60_000);
  }

  private get refreshTtl(): number {
    return this.options.refreshTtlMs ?? 30 * 24 * 60 * 60_000;
  }

  private async wait(route: EmulatorRoute, method: string, path: string): Promise<void> {
    const latency = this.options.latency;
    const setting = typeof latency === 'number' ? latency : latency?.[route];
    const ms = typeof setting === 'function' ? setting({ method, path }) : (setting ?? 0);
    if (ms > 0) await new Promise((resolve) => setTimeout(resolve, ms));
  }

  private json(response: ServerResponse, status: number, body: unknown): void {
    response.writeHead(status, { 'Content-Type': 'application/json' }).end(JSON.stringify(body));
  }
}

/** Starts a {@link TokenServiceEmulator} on 127.0.0.1 and a free port. */
export function startEmulator(options?: EmulatorOptions): Promise<TokenServiceEmulator> {
  return new TokenServiceEmulator(options).start();
}
