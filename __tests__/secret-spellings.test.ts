// No secret leaves in any spelling a transport gives it. A property over secrets drawn from the whole of Unicode (the
// characters that encodings change weighted in) × every way a secret travels to the token service × every way the
// call can fail, against a real HTTP server on loopback that echoes what it was sent: the caller's error (every link
// of its cause chain, rendered as loggers render it and walked to every reachable string), every event and the console
// hold no spelling of the secret. SPELLING_RUNS=2000 npx jest secret-spellings for a longer run.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import util from 'node:util';
import axios from 'axios';
import fc from 'fast-check';
import { attachTokenAuth, isTokenAuthError, MemoryTokenStore } from '../lib/index.js';
import type { TokenAuthOptions } from '../lib/index.js';
import { oauth2ClientCredentials, oauth2Password } from '../lib/presets.js';
import { Mask } from '../lib/support/redact.js';
import {
  captureConsole,
  causeChain,
  findLeaks,
  formEncoded,
  pairSpellings,
  recordEvents,
  spellingsOf,
} from './helpers/scan-secrets.js';
import type { Secret } from './helpers/scan-secrets.js';

const RUNS = Number(process.env.SPELLING_RUNS ?? 300);

const LOGIN = '/auth/login';
const TOKEN = '/auth/token';
const USER = 'jane';
/** The password of the logins that must succeed (refresh-token rows): known, and checked too. */
const GOOD_PASSWORD = 'good-Pa55word-for-refresh-rows';

/** How the secret travels: in a login (the password, or an OAuth2 client secret) or in a token call (the refresh token). */
const TRANSPORTS = [
  'login: Basic header',
  'login: JSON object',
  'login: JSON string',
  'login: form object serialised by axios',
  'login: form string',
  'login: URLSearchParams',
  'login: query params',
  'login: multipart FormData',
  'login: oauth2Password() form',
  'login: oauth2 client secret in the form',
  'login: oauth2 client secret in Basic',
  'login: oauth2ClientCredentials() client secret',
  'refresh: JSON body',
  'refresh: form body',
  'refresh: header',
  'refresh: cookie',
  'data: Bearer header',
  'data: custom header',
  'data: query param',
] as const;
type Transport = (typeof TRANSPORTS)[number];

/** What the token service does with the call that carries the secret. */
const OUTCOMES = [
  '401',
  '400 echoing the request',
  '500 echoing the request',
  'network error',
  'timeout',
  'redirect',
] as const;
type Outcome = (typeof OUTCOMES)[number];

type Role = 'login' | 'refresh' | 'data';

/** Which call carries the secret: a login (the password, a client secret), a token call (the refresh token) or a
 * request of the app (the access token, put on by the plugin). */
function roleOf(transport: Transport): Role {
  return transport.split(':')[0] as Role;
}

/** The code of the failure the call under test causes; a data request's error reaches the caller as axios's own. */
const CODES: Record<Outcome, Record<'login' | 'refresh', string>> = {
  '401': { login: 'LOGIN_REJECTED', refresh: 'REFRESH_REJECTED' },
  '400 echoing the request': { login: 'LOGIN_REJECTED', refresh: 'REFRESH_REJECTED' },
  '500 echoing the request': { login: 'TOKEN_SERVICE_UNAVAILABLE', refresh: 'TOKEN_SERVICE_UNAVAILABLE' },
  'network error': { login: 'TOKEN_SERVICE_UNAVAILABLE', refresh: 'TOKEN_SERVICE_UNAVAILABLE' },
  timeout: { login: 'TOKEN_SERVICE_UNAVAILABLE', refresh: 'TOKEN_SERVICE_UNAVAILABLE' },
  redirect: { login: 'TOKEN_SERVICE_UNAVAILABLE', refresh: 'TOKEN_SERVICE_UNAVAILABLE' },
};

/** Characters that some encoding changes, weighted in beside any code point. */
const TRICKY = [
  ':',
  ' ',
  '+',
  '%',
  '&',
  '=',
  '"',
  '\\',
  '/',
  '?',
  '#',
  ';',
  "'",
  '\n',
  '\t',
  '\u0000',
  '\u007f',
  'ü',
  '密',
  '😀',
];

const anyChar = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...TRICKY) },
  { weight: 4, arbitrary: fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }) },
);
/** Printable ASCII only: what an HTTP header can carry (Node refuses the rest before sending). */
const headerChar = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...TRICKY.filter((char) => /^[\x20-\x7e]$/.test(char))) },
  {
    weight: 4,
    arbitrary: fc.string({
      unit: fc.integer({ min: 0x20, max: 0x7e }).map((code) => String.fromCharCode(code)),
      minLength: 1,
      maxLength: 1,
    }),
  },
);

let serial = 0;
/**
 * A secret around a marker no other text of the test holds, so that a match is the secret and nothing else; the
 * characters around it are drawn from `char`.
 */
const secretOf = (char: fc.Arbitrary<string>) =>
  fc
    .tuple(fc.string({ unit: char, maxLength: 12 }), fc.string({ unit: char, maxLength: 12 }))
    .map(([before, after]) => `${before}Zq${(serial += 1)}X${after}`);

function isHeaderTransport(transport: Transport): boolean {
  return (
    transport === 'refresh: header' ||
    transport === 'refresh: cookie' ||
    transport === 'login: oauth2 client secret in Basic' ||
    transport.startsWith('data')
  );
}

interface Case {
  transport: Transport;
  outcome: Outcome;
  secret: string;
}

const cases: fc.Arbitrary<Case> = fc
  .tuple(fc.constantFrom(...TRANSPORTS), fc.constantFrom(...OUTCOMES))
  .chain(([transport, outcome]) =>
    (isHeaderTransport(transport) ? secretOf(headerChar) : secretOf(anyChar)).map((secret) => ({
      transport,
      outcome,
      secret,
    })),
  );

// ---------------------------------------------------------------------------------------------------------------
// The token service: real HTTP on loopback, its answer to the call under test chosen per case
// ---------------------------------------------------------------------------------------------------------------

let outcome: Outcome = '401';
/** Which call gets the outcome; the calls before it succeed, the one before it handing out the secret. */
let failing: Role = 'login';
let secretOfCase = '';
const held = new Set<http.ServerResponse>();

function echo(request: http.IncomingMessage, body: string): Record<string, unknown> {
  // What a server that quotes its input shows: the raw body and query, the headers, and the form as it decoded it.
  return { body, url: request.url, headers: request.headers, decoded: Object.fromEntries(new URLSearchParams(body)) };
}

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
      response.writeHead(302, { Location: `http://127.0.0.1:9/elsewhere${(request.url ?? '').replace(/^[^?]*/, '')}` });
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

// ---------------------------------------------------------------------------------------------------------------
// How each transport is set up, as a user would write it
// ---------------------------------------------------------------------------------------------------------------

const FORM = { 'Content-Type': 'application/x-www-form-urlencoded' };

function optionsFor(transport: Transport, secret: string): Partial<TokenAuthOptions> {
  const credentials = { username: USER, password: transport.startsWith('login') ? secret : GOOD_PASSWORD };
  const client = { tokenPath: LOGIN, clientId: 'orders:web' };
  switch (transport) {
    case 'login: Basic header':
      return { credentials };
    case 'login: JSON object':
      return { credentials, loginRequest: ({ username, password }) => ({ data: { username, password } }) };
    case 'login: JSON string':
      return {
        credentials,
        loginRequest: ({ username, password }) => ({
          data: JSON.stringify({ username, password }),
          headers: { 'Content-Type': 'application/json' },
        }),
      };
    case 'login: form object serialised by axios':
      return {
        credentials,
        loginRequest: ({ username, password }) => ({
          data: { grant_type: 'password', username, password },
          headers: FORM,
        }),
      };
    case 'login: form string':
      return {
        credentials,
        loginRequest: ({ username, password }) => ({
          data: `grant_type=password&username=${encodeURIComponent(username)}&password=${encodeURIComponent(password)}`,
          headers: FORM,
        }),
      };
    case 'login: URLSearchParams':
      return {
        credentials,
        loginRequest: ({ username, password }) => ({
          data: new URLSearchParams({ grant_type: 'password', username, password }),
        }),
      };
    case 'login: query params':
      return { credentials, loginRequest: ({ username, password }) => ({ params: { username, password } }) };
    case 'login: multipart FormData':
      return {
        credentials,
        loginRequest: ({ username, password }) => {
          const form = new FormData();
          form.append('username', username);
          form.append('password', password);
          return { data: form };
        },
      };
    case 'login: oauth2Password() form':
      return { ...oauth2Password({ ...client, clientSecret: 'client-secret-of-the-property' }), credentials };
    case 'login: oauth2 client secret in the form':
      return {
        ...oauth2Password({ ...client, clientSecret: secret, clientAuthentication: 'body' }),
        credentials: { username: USER, password: GOOD_PASSWORD },
      };
    case 'login: oauth2 client secret in Basic':
      return {
        ...oauth2Password({ ...client, clientSecret: secret }),
        credentials: { username: USER, password: GOOD_PASSWORD },
      };
    case 'login: oauth2ClientCredentials() client secret':
      return oauth2ClientCredentials({ ...client, clientSecret: secret, clientAuthentication: 'body' });
    case 'refresh: JSON body':
      return { credentials };
    case 'refresh: form body':
      return {
        credentials,
        refreshRequest: (refresh) => ({ data: { grant_type: 'refresh_token', refresh }, headers: FORM }),
      };
    case 'refresh: header':
      return { credentials, refreshRequest: (refresh) => ({ headers: { 'X-Refresh-Token': refresh } }) };
    case 'refresh: cookie':
      return { credentials, refreshRequest: (refresh) => ({ headers: { Cookie: `refresh_token=${refresh}` } }) };
    case 'data: Bearer header':
      return { credentials };
    case 'data: custom header':
      return { credentials, applyToken: (config, access) => void config.headers.set('X-Access-Token', access) };
    case 'data: query param':
      return {
        credentials,
        applyToken: (config, access) => {
          config.params = { ...(config.params as object), access_token: access };
        },
      };
  }
}

/** Every spelling of every secret of the case, as the test itself spells them (not as the library does). */
function secretsOfCase({ transport, secret }: Case): Secret[] {
  const secrets = [...spellingsOf('the secret', secret), ...spellingsOf('the good password', GOOD_PASSWORD)];
  if (transport === 'login: Basic header') secrets.push(...pairSpellings('username:secret', USER, secret));
  if (transport === 'login: oauth2 client secret in Basic')
    secrets.push(...pairSpellings('client id:secret, form-encoded', formEncoded('orders:web'), formEncoded(secret)));
  return secrets;
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

it(`no spelling of a secret in any error, cause, event or log: ${RUNS} cases of secret × transport × outcome`, async () => {
  await fc.assert(
    fc.asyncProperty(cases, async (testCase) => {
      await run(testCase);
    }),
    { numRuns: RUNS, endOnFailure: true },
  );
}, 120_000);

it.each(TRANSPORTS.map((transport) => [transport]))(
  'every outcome once with the issue’s secret `wr0ng:pa ss+/=` sent by %s',
  async (transport) => {
    for (const chosen of OUTCOMES)
      await run({ transport, outcome: chosen, secret: `wr0ng:pa ss+/=Zq${(serial += 1)}X` });
  },
);

it('Mask: every spelling of a secret, in any text around it, becomes [REDACTED]; text without one is left alone', () => {
  fc.assert(
    fc.property(secretOf(anyChar), fc.string(), fc.string(), (secret, before, after) => {
      const mask = new Mask([secret, `${USER}:${secret}`]);
      for (const { name, value } of [...spellingsOf('secret', secret), ...pairSpellings('pair', USER, secret)]) {
        const masked = mask.text(`${before}${value}${after}`);
        expect({ name, leaked: masked.includes(value) }).toEqual({ name, leaked: false });
        expect(masked).toContain('[REDACTED]');
      }
      expect(mask.text(`${before}|${after}`)).toBe(`${before}|${after}`);
    }),
    { numRuns: RUNS },
  );
});
