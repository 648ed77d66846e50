import { createServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { allowCors, bodyOf, headerText, requestUrl, sendFault } from './http.js';
import type { ServiceRequest } from './http.js';
import { routeOf, ServiceRoutes } from './routes.js';
import type {
  EmulatorCall,
  EmulatorCounters,
  EmulatorDpopCounters,
  EmulatorFault,
  EmulatorOptions,
  EmulatorRoute,
} from './types.js';

/**
 * A local stand-in of the token service, over real HTTP on Node's `http` module. It implements the service's
 * published interface as seen from outside, with what public clients of the real service show: Basic login → `{access, refresh}`; the
 * token call with JSON `{"refresh_token"}` → `{status: true, data: {access_token, refresh_token}}`, rotating the
 * refresh token; the logout with `{"refresh_token"}` → `{status: true}`, the refresh token then dead; any other path is a protected resource that echoes the request for a valid Bearer token and
 * answers 401 `{detail, code: "token_not_valid"}` otherwise. With the `dpop` option, those calls need DPoP proofs
 * (RFC 9449) and the tokens are bound to the proof's key.
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
    logouts: 0,
  };
  /** In DPoP mode (the `dpop` option), what the checks of the proofs came to; zeros without it. */
  readonly dpopCounters: EmulatorDpopCounters = { accepted: 0, nonce: 0, invalid: 0, wrongKey: 0 };
  /** Every call received, in order, with the Authorization header it carried; empty with `log: false`. */
  readonly calls: EmulatorCall[] = [];
  private readonly routes: ServiceRoutes;
  private readonly clock: () => number;
  private readonly faults: Record<EmulatorRoute, EmulatorFault[]> = {
    login: [],
    token: [],
    logout: [],
    data: [],
  };
  private readonly sockets = new Set<Socket>();
  private server: Server | undefined;
  private address = '';

  /** Configures an emulator; call {@link start} (or use {@link startEmulator}) to listen. */
  constructor(private readonly options: EmulatorOptions = {}) {
    this.clock = options.clock ?? Date.now;
    this.routes = new ServiceRoutes(options, this.counters, this.clock, this.dpopCounters);
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
    this.routes.ledger.expireAccess();
  }

  /** Every refresh token issued so far stops working: the next token call is refused, and the client must log in. */
  revokeRefreshTokens(): void {
    this.routes.ledger.revokeRefresh();
  }

  /** The next `times` answers of a route (login, token, logout, or any data call) are replaced by `fault`. */
  inject(route: EmulatorRoute, fault: EmulatorFault, times = 1): void {
    for (let i = 0; i < times; i += 1) this.faults[route].push(fault);
  }

  /** Whether this emulator issued `token` (access or refresh, alive or not): for checking what a client stores. */
  issued(token: string): boolean {
    return this.routes.ledger.issued(token);
  }

  /** Drops the faults not yet served: the service is healthy again. */
  clearFaults(): void {
    for (const queue of Object.values(this.faults)) queue.length = 0;
  }

  /**
   * In DPoP mode with `requireNonce`, the nonce every proof must carry, which every answer gives in `DPoP-Nonce`;
   * undefined otherwise.
   */
  get dpopNonce(): string | undefined {
    return this.routes.dpop?.currentNonce;
  }

  /**
   * In DPoP mode, a new nonce, which it returns: proofs with the old one are answered `use_dpop_nonce` (with
   * `requireNonce`), as a service does when its nonce expires. Throws without the `dpop` option.
   */
  rotateDpopNonce(): string {
    if (!this.routes.dpop) throw new Error('The emulator is not in DPoP mode: start it with the `dpop` option.');
    return this.routes.dpop.rotateNonce();
  }

  /** Data calls to `path` answer 401 whatever the token (or stop doing so). */
  setAlwaysUnauthorized(path: string, on = true): void {
    if (on) this.routes.unauthorizedPaths.add(path);
    else this.routes.unauthorizedPaths.delete(path);
  }

  private async handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const { dpop } = this.routes;
    dpop?.announce(response);
    if (this.options.cors && allowCors(request, response, { dpop: dpop !== undefined })) return;
    const method = request.method ?? 'GET';
    const url = new URL(request.url ?? '/', 'http://emulator');
    const path = url.pathname;
    const route = routeOf(method, path);
    const received: ServiceRequest = {
      method,
      path,
      fullPath: `${path}${url.search}`,
      url: requestUrl(request, path, this.address),
      dpop: headerText(request.headers.dpop),
      authorization: request.headers.authorization,
      cookie: request.headers.cookie,
      contentType: request.headers['content-type'],
      body: await bodyOf(request),
    };
    const call: EmulatorCall = {
      route,
      method,
      path: received.fullPath,
      authorization: received.authorization,
      cookie: received.cookie,
      user: undefined,
      body: received.body,
      requestId: headerText(request.headers['x-request-id']),
      at: this.clock(),
    };
    if (this.options.log !== false) this.calls.push(call);
    await this.wait(route, method, path);
    dpop?.announce(response); // again: a test may rotate the nonce during the latency
    // Looked up when answered, not on arrival, so that it agrees with the answer when the token expires meanwhile.
    if (route === 'data') call.user = this.routes.userOf(received);

    if (route === 'login' || route === 'token') this.counters.tokenCalls += 1;
    const fault = this.faults[route].shift();
    if (fault !== undefined) {
      this.counters.faults += 1;
      return sendFault(fault, response);
    }
    const check = this.routes[route](received, response);
    if (check) call.dpop = check;
  }

  private async wait(route: EmulatorRoute, method: string, path: string): Promise<void> {
    const latency = this.options.latency;
    const setting = typeof latency === 'number' ? latency : latency?.[route];
    const ms = typeof setting === 'function' ? setting({ method, path }) : (setting ?? 0);
    if (ms > 0) await new Promise((resolve) => setTimeout(resolve, ms));
  }
}

/** Starts a {@link TokenServiceEmulator} on 127.0.0.1 and a free port. */
export function startEmulator(options?: EmulatorOptions): Promise<TokenServiceEmulator> {
  return new TokenServiceEmulator(options).start();
}
