// The token service of secret-spellings-errors.test.ts: real HTTP on loopback that echoes what it was sent, its answer
// to the call under test chosen per case; and a case run against it, after which the caller's errors (every link of
// their cause chains, rendered as loggers render them and walked to every reachable string), every event and the
// console must hold no spelling of the case's secrets.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import util from 'node:util';
import axios from 'axios';
import { attachTokenAuth, isTokenAuthError, MemoryTokenStore } from '../../lib/index.js';
import { captureConsole, causeChain, findLeaks, recordEvents } from './scan-secrets.js';
import { CODES, LOGIN, optionsFor, roleOf, secretsOfCase, TOKEN } from './spelling-cases.js';
import type { Case, Outcome, Role } from './spelling-cases.js';

function echo(request: http.IncomingMessage, body: string): Record<string, unknown> {
  // What a server that quotes its input shows: the raw body and query, the headers, and the form as it decoded it.
  return { body, url: request.url, headers: request.headers, decoded: Object.fromEntries(new URLSearchParams(body)) };
}

/** What a logger prints of a value: util.inspect at full depth with hidden properties, JSON, the stack. */
function printed(value: unknown): string[] {
  const texts = [util.inspect(value, { depth: Infinity, showHidden: true })];
  for (const link of causeChain(value)) {
    try {
      texts.push(JSON.stringify(link) ?? '');
    } catch {
      // A cycle: util.inspect above has it.
    }
    if (link instanceof Error) texts.push(String(link.stack));
  }
  return texts;
}

/**
 * The token service for the test file that calls this (at its top level), listening before its tests and closed after
 * them; returns the run of one case against it.
 */
export function spellingServiceForFile(): (testCase: Case) => Promise<void> {
  let outcome: Outcome = '401';
  /** Which call gets the outcome; the calls before it succeed, the one before it handing out the secret. */
  let failing: Role = 'login';
  let secretOfCase = '';
  const held = new Set<http.ServerResponse>();

  function answer(request: http.IncomingMessage, response: http.ServerResponse, body: string): void {
    const path = (request.url ?? '').split('?')[0];
    const role: Role = path === LOGIN ? 'login' : path === TOKEN ? 'refresh' : 'data';
    if (role !== failing) {
      // A login, or the token call of a data row (whose renewal the refused request asks for): the secret handed out.
      response.writeHead(200, { 'Content-Type': 'application/json' });
      const access = failing === 'data' ? secretOfCase : 'access-token-of-the-property';
      response.end(
        JSON.stringify({ access, refresh: failing === 'refresh' ? secretOfCase : 'refresh-token-of-the-property' }),
      );
      return;
    }
    switch (outcome) {
      case '401':
        response.writeHead(401, { 'Content-Type': 'application/json' });
        response.end(JSON.stringify({ detail: 'Invalid credentials.' }));
        return;
      case '400 echoing the request':
        response.writeHead(400, { 'Content-Type': 'application/json' });
        response.end(JSON.stringify({ detail: `Bad request: ${body} (${request.url})`, ...echo(request, body) }));
        return;
      case '500 echoing the request':
        response.writeHead(500, { 'Content-Type': 'text/html' });
        response.end(`<h1>Server Error</h1><pre>${body}\n${request.url}\n${JSON.stringify(request.headers)}</pre>`);
        return;
      case 'network error':
        request.socket.destroy();
        return;
      case 'timeout':
        held.add(response);
        return;
      case 'redirect':
        // A redirect that takes the request's own query along, as sign-in pages do.
        response.writeHead(302, {
          Location: `http://127.0.0.1:9/elsewhere${(request.url ?? '').replace(/^[^?]*/, '')}`,
        });
        response.end(`Found. Redirecting with ${body}`);
        return;
    }
  }

  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => answer(request, response, Buffer.concat(chunks).toString('utf8')));
  });
  let base = '';

  beforeAll(async () => {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterEach(() => {
    for (const response of held) response.socket?.destroy();
    held.clear();
  });

  afterAll(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  async function run(testCase: Case): Promise<void> {
    const { transport, outcome: chosen, secret } = testCase;
    const role = roleOf(transport);
    outcome = chosen;
    failing = role;
    secretOfCase = secret;
    const consoleCalls = captureConsole();
    const api = axios.create({ baseURL: base });
    const store = new MemoryTokenStore();
    const attach = (tokenTimeoutMs: number) =>
      attachTokenAuth(api, {
        authBaseURL: base,
        loginPath: LOGIN,
        tokenPath: TOKEN,
        tokenRetries: 1,
        tokenRetryDelayMs: 1,
        tokenTimeoutMs,
        store,
        ...optionsFor(transport, secret),
      });
    // The rows of a token call or an app's request start from a login that must succeed, whatever the machine's load:
    // it goes through an attachment with a timeout no answer reaches, which leaves the pair in the store for the one
    // under test.
    if (role !== 'login') {
      const first = attach(10_000);
      await first.login().finally(() => first.eject());
    }
    // A hang is certain to outlast the timeout; every other answer comes well inside it.
    const auth = attach(chosen === 'timeout' ? 50 : 10_000);
    const recorded = recordEvents(auth);
    const errors: unknown[] = [];
    try {
      // The call under test: a login by hand, then from a request (within the cooldown, its error has the first as its
      // cause); a token call by hand (a refused one is followed by a login, which succeeds); a request of the app.
      if (role !== 'data')
        await (role === 'refresh' ? auth.refresh() : auth.login()).catch((e: unknown) => errors.push(e));
      // A request's timeout bounds its wait for the login too: only the app's own request is timed out by its own.
      if (role !== 'refresh')
        await api
          .get('/data', { timeout: chosen === 'timeout' && role === 'data' ? 50 : 10_000 })
          .catch((e: unknown) => errors.push(e));
    } finally {
      auth.eject();
      jest.restoreAllMocks();
    }

    const failures = recorded.filter(({ event }) => event === 'failure').map(({ payload }) => payload);
    if (role === 'data') {
      expect(errors).toHaveLength(1);
      expect(axios.isAxiosError(errors[0])).toBe(true);
    } else {
      expect(failures[0]).toMatchObject({ operation: role, code: CODES[chosen][role] });
      if (role === 'login') expect(errors[0]).toMatchObject({ code: CODES[chosen].login });
      for (const error of errors) expect(isTokenAuthError(error)).toBe(true);
    }
    const secrets = secretsOfCase(testCase);
    const leaks = [
      ...errors.flatMap((error, index) =>
        causeChain(error).flatMap((link, depth) =>
          findLeaks(link, secrets, { reachable: true, lines: printed(link) }).map((leak) => ({
            in: `error ${index}${'.cause'.repeat(depth)}`,
            ...leak,
          })),
        ),
      ),
      ...recorded.flatMap(({ event, payload }, index) =>
        findLeaks(payload, secrets, { reachable: true, lines: printed(payload) }).map((leak) => ({
          in: `event ${index} (${event})`,
          ...leak,
        })),
      ),
    ];
    expect(leaks).toEqual([]);
    // The library reports through events, never through the console.
    expect(consoleCalls).toEqual([]);
  }

  return run;
}
