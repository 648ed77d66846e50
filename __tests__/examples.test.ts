import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import axios from 'axios';
import type { AxiosResponse } from 'axios';
import { closeEmulatorsAfterEach, emulator } from './helpers/emulator.js';
import { burst, fulfilled } from './helpers/flow.js';
import { root, runScript, serveScript, stopScriptsAfterEach } from './helpers/scripts.js';
import { startRedisServer } from '../harness/redis-server.js';
import type { RedisServer } from '../harness/redis-server.js';
import { startPostgresServer } from '../harness/postgres-server.js';
import type { PostgresServer } from '../harness/postgres-server.js';
import type { TokenServiceEmulator } from '../lib/emulator/index.js';

// The examples run for real, each in a process of its own as a user runs it: documentation that cannot rot.
closeEmulatorsAfterEach();
stopScriptsAfterEach();

const demoUser = { users: { demo: 'demo-password' } };
const account = (service: TokenServiceEmulator) => ({
  API_URL: service.url,
  API_USERNAME: 'demo',
  API_PASSWORD: 'demo-password',
});

/** Runs an example to its end and resolves with what it printed; rejects when it fails. */
async function runExample(file: string, env: NodeJS.ProcessEnv = {}): Promise<string> {
  const { code, stdout, stderr } = await runScript(join(root, 'examples', file), [], { env });
  if (code !== 0) throw new Error(`${file} exited with ${code}:\n${stdout}${stderr}`);
  return stdout;
}

/** Counts an answer other than 200 as a failed request, with an Error that says what came back. */
function refuseUnlessOk(response: AxiosResponse): AxiosResponse | Promise<never> {
  return response.status === 200
    ? response
    : Promise.reject(new Error(`${response.config.url} answered ${response.status}`));
}

describe('every example says at its top how to run it', () => {
  // The recipes' files; examples/generated/ holds the generators' output that some of them import.
  const files = readdirSync(join(root, 'examples'), { withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => entry.name);

  it.each(files)('%s names every environment variable it reads, and the command or that it is imported', (file) => {
    const source = readFileSync(join(root, 'examples', file), 'utf8');
    const header = /^(?:\/\/.*\n)+/.exec(source)?.[0] ?? '';
    const reads = [...source.matchAll(/process\.env\.(\w+)|\benv\('(\w+)'\)/g)].map((match) => match[1] ?? match[2]!);

    expect(reads.filter((name) => !header.includes(name))).toEqual([]);
    expect(header).toMatch(new RegExp(`npx tsx (examples/)?${file}|not a script`));
  });
});

it('node-script.ts runs on its own emulator, one login for ten pages', async () => {
  const output = await runExample('node-script.ts', { API_URL: '' });
  expect(output).toContain('exported 10 pages');
  expect(output).toMatch(/logins: 1/);
});

it('quick-start.ts runs against a running emulator', async () => {
  const service = await emulator(demoUser);
  const output = await runExample('quick-start.ts', account(service));
  expect(output).toContain("path: '/allocation/api/v1/tracking/order-list'");
  expect(output).toMatch(/logins: 1,\s+refreshes: 0,/);
  expect(service.counters.logins).toBe(1);
});

describe('quick-start.ts copied into a project of its own', () => {
  let project: string;
  beforeEach(() => {
    // Under the repository, as package.test.ts's consumer, so that axios and tsx resolve from its node_modules.
    mkdirSync(join(root, '.tmp'), { recursive: true });
    project = mkdtempSync(join(root, '.tmp', 'quick-start-'));
  });
  afterEach(() => rmSync(project, { recursive: true, force: true }));

  it.each(['commonjs', 'module'])('runs in a package of "type": "%s"', async (type) => {
    writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'my-app', private: true, type }));
    // The package by its name, as the project would have it installed; here its source.
    const paths = { 'axios-token-keeper': [join(root, 'lib', 'index.ts')] };
    writeFileSync(join(project, 'tsconfig.json'), JSON.stringify({ compilerOptions: { paths } }));
    copyFileSync(join(root, 'examples', 'quick-start.ts'), join(project, 'index.ts'));
    const service = await emulator(demoUser);

    const { code, stdout, stderr } = await runScript('index.ts', [], { cwd: project, env: account(service) });

    expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
    expect(stdout).toContain("path: '/allocation/api/v1/tracking/order-list'");
    expect(service.counters.logins).toBe(1);
  });
});

describe('events.ts', () => {
  it('reports the login and the counts', async () => {
    const service = await emulator(demoUser);
    const output = await runExample('events.ts', account(service));
    expect(output).toMatch(/^login \(no-token\) in \d+(\.\d+)? ms$/m);
    expect(output).toContain('logins: 1');
  });

  it('reports a refused login with its code and what to do', async () => {
    const service = await emulator(demoUser);
    const { code, stderr } = await runScript(join(root, 'examples', 'events.ts'), [], {
      env: { ...account(service), API_PASSWORD: 'wrong' },
    });
    expect(code).toBe(0);
    expect(stderr).toContain('login failed: LOGIN_REJECTED: ');
    expect(stderr).toContain('Fix the credentials, then call auth.login().');
  });
});

it('opentelemetry.ts prints a span per call and the metrics, with the account attribute and no secret', async () => {
  const service = await emulator(demoUser);
  const output = await runExample('opentelemetry.ts', account(service));
  expect(service.counters).toMatchObject({ logins: 1, refreshes: 1 });
  expect(output.match(/name: 'axios-token-keeper (login|token)'/g)).toEqual([
    "name: 'axios-token-keeper login'",
    "name: 'axios-token-keeper token'",
  ]);
  expect(output).toContain("'token_keeper.account': 'orders'");
  for (const metric of ['token_calls', 'renewal.duration', 'requests.waited', 'requests.waiting', 'budget.remaining'])
    expect(output).toContain(`name: 'token_keeper.${metric}'`);
  expect(output).not.toContain('demo-password');
});

describe('custom-service.ts', () => {
  let legacy: Server;
  afterEach(async () => {
    await new Promise((resolve) => legacy?.close(resolve));
  });

  it('speaks a service of another shape: the refresh token in a header, { token, renew }, 403 when expired', async () => {
    const calls: string[] = [];
    legacy = createServer((request, response) => {
      const answer = (ok: boolean, body: unknown) =>
        response.writeHead(ok ? 200 : 403, { 'Content-Type': 'application/json' }).end(JSON.stringify(body));
      calls.push(`${request.method} ${request.url}`);
      const basic = `Basic ${Buffer.from('svc-reports:legacy-password').toString('base64')}`;
      if (request.url === '/session')
        answer(request.headers.authorization === basic, { token: { value: 'first', ttl: 3600 }, renew: 'renew-1' });
      else if (request.url === '/session/renew')
        answer(request.headers['x-refresh-token'] === 'renew-1', { token: { value: 'second' }, renew: 'renew-2' });
      // The first token has expired already, as the service says it: with a 403.
      else answer(request.headers['x-session'] === 'second', { report: 'daily' });
    });
    await new Promise<void>((resolve) => legacy.listen(0, '127.0.0.1', resolve));

    const output = await runExample('custom-service.ts', {
      LEGACY_URL: `http://127.0.0.1:${(legacy.address() as AddressInfo).port}`,
      LEGACY_PASSWORD: 'legacy-password',
    });

    expect(output).toContain('GET /reports/daily: 200');
    expect(output).toMatch(/logins: 1,\s+refreshes: 1,\s+replays: 1,\s+failures: 0,/);
    expect(calls).toEqual(['POST /session', 'GET /reports/daily', 'POST /session/renew', 'GET /reports/daily']);
  });
});

describe('express-backend.ts', () => {
  it('shares one login and one renewal per expiry among concurrent routes, and answers 503 with the code on token trouble', async () => {
    const service = await emulator(demoUser);
    const { match } = await serveScript(join(root, 'examples', 'express-backend.ts'), [], /listening on (\S+)/, {
      env: { ...account(service), PORT: '0' },
    });
    const backend = axios.create({ baseURL: match[1], validateStatus: () => true });

    expect(
      fulfilled(await burst(50, (i) => backend.get('/orders', { params: { page: i } }).then(refuseUnlessOk))),
    ).toBe(50);
    service.expireAccessTokens();
    expect(fulfilled(await burst(50, () => backend.get('/orders').then(refuseUnlessOk)))).toBe(50);
    expect(service.counters).toMatchObject({ logins: 1, refreshes: 1 });
    // Requests refused before the renewal started are replayed; those arriving later wait for it instead.
    const health = (await backend.get('/health/tokens')).data as { replays: number };
    expect(health).toEqual({
      logins: 1,
      refreshes: 1,
      replays: service.counters.unauthorized,
      failures: 0,
      waiting: 0,
      budget: { login: 9, refresh: 29 },
    });
    expect(health.replays).toBeGreaterThanOrEqual(1);

    // The account is refused from now on: the refresh token is dead and the login answers 401.
    service.expireAccessTokens();
    service.revokeRefreshTokens();
    service.inject('login', { status: 401 });
    const refused = await backend.get('/orders');
    expect([refused.status, refused.data]).toEqual([503, { error: 'LOGIN_REJECTED' }]);
  });
});

describe('ssr-server.ts', () => {
  const users = { demo: 'demo-password', alice: 'alice-password', bob: 'bob-password' };

  it('renders each page with its user’s token: one login per user, one renewal per user per expiry, and "sign in again" when a session cannot be renewed', async () => {
    const service = await emulator({ users });
    const { match } = await serveScript(join(root, 'examples', 'ssr-server.ts'), [], /listening on (\S+)/, {
      env: { ...account(service), PORT: '0' },
    });
    const site = axios.create({ baseURL: match[1], validateStatus: () => true });
    const signIn = async (username: string, password: string) => {
      const answer = await site.post('/sign-in', { username, password });
      const cookie = /sid=[\w-]+/.exec(String(answer.headers['set-cookie']))?.[0];
      return { status: answer.status, data: answer.data as unknown, headers: { cookie: cookie ?? '' } };
    };
    const pagesOf = (headers: Record<string, string>, n: number) =>
      Promise.all(Array.from({ length: n }, () => site.get('/orders', { headers })));
    const userOf = (page: AxiosResponse) => (page.data as { orders?: { user?: string } }).orders?.user;
    const repeat = (user: string, n: number): string[] => Array.from({ length: n }, () => user);

    const alice = await signIn('alice', users.alice);
    const bob = await signIn('bob', users.bob);
    expect([alice.status, bob.status]).toEqual([200, 200]);
    // A wrong password is the person’s to retype: refused, and nothing else changes.
    expect(await signIn('bob', 'not-bobs')).toMatchObject({ status: 401, data: { error: 'LOGIN_REJECTED' } });

    const [alicePages, bobPages, visitorPages] = await Promise.all([
      pagesOf(alice.headers, 10),
      pagesOf(bob.headers, 10),
      pagesOf({}, 10),
    ]);
    expect(alicePages.map(userOf)).toEqual(repeat('alice', 10));
    expect(bobPages.map(userOf)).toEqual(repeat('bob', 10));
    // A visitor’s page goes as the server’s own (default) account, which logs in with its credentials.
    expect(visitorPages.map(userOf)).toEqual(repeat('demo', 10));
    expect(service.counters).toMatchObject({ logins: 3, refreshes: 0 });

    service.expireAccessTokens();
    const [aliceAgain, bobAgain] = await Promise.all([pagesOf(alice.headers, 10), pagesOf(bob.headers, 10)]);
    expect([...aliceAgain, ...bobAgain].map(userOf)).toEqual([...repeat('alice', 10), ...repeat('bob', 10)]);
    expect(service.counters).toMatchObject({ logins: 3, refreshes: 2 });

    // Alice’s session can no longer be renewed, and the server keeps no password of hers: she is asked to sign in.
    service.expireAccessTokens();
    service.revokeRefreshTokens();
    const ended = await site.get('/orders', { headers: alice.headers });
    expect([ended.status, ended.data]).toEqual([401, { error: 'NO_CREDENTIALS' }]);
    expect(service.counters.logins).toBe(3);

    // Bob signs out: his next page is a visitor’s.
    expect((await site.post('/sign-out', {}, { headers: bob.headers })).status).toBe(200);
    expect(userOf(await site.get('/orders', { headers: bob.headers }))).toBe('demo');
  }, 30_000);
});

it('audiences.ts: one user, a token per audience, each request with its own audience’s token', async () => {
  const service = await emulator(demoUser);
  const output = await runExample('audiences.ts', account(service));

  expect(output).toContain('10 pages');
  expect(output).toMatch(/orders \{\s+logins: 1,/);
  expect(output).toMatch(/billing \{\s+logins: 1,/);
  const logins = service.calls.filter((call) => call.route === 'login').map((call) => call.path);
  expect(logins.sort()).toEqual([
    '/auth/api/v1/accounts/login?audience=billing',
    '/auth/api/v1/accounts/login?audience=orders',
  ]);
  const tokensOf = (prefix: string) =>
    new Set(
      service.calls
        .filter((call) => call.route === 'data' && call.path.startsWith(prefix))
        .map((call) => call.authorization),
    );
  const [orders, billing] = [tokensOf('/allocation/'), tokensOf('/billing/')];
  expect([orders.size, billing.size]).toEqual([1, 1]);
  expect([...orders][0]).not.toBe([...billing][0]);
});

it('with-axios-retry.ts: an expiry and a 503 on one request cost one renewal and one retry, and it succeeds', async () => {
  let sends = 0;
  const service: TokenServiceEmulator = await emulator({
    ...demoUser,
    // The access token expires while the first send is on its way, and that send gets a 503: the user's retry
    // resends it, the plugin catches the expiry's 401, renews and replays.
    latency: {
      data: () => {
        if ((sends += 1) === 1) service.expireAccessTokens();
        return 0;
      },
    },
  });
  service.inject('data', { status: 503 });

  const output = await runExample('with-axios-retry.ts', account(service));

  expect(output).toContain('retry 1 after 503');
  expect(output).toMatch(/answered 200 .*replays: 1/s);
  expect(service.counters).toMatchObject({ logins: 1, refreshes: 1, expiries: 1 });
  expect(service.calls.filter((call) => call.route === 'data')).toHaveLength(3);
});

describe('fleet recipes', () => {
  let dir: string;
  let redis: RedisServer | undefined;
  let postgres: PostgresServer | undefined;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'token-keeper-fleet-example-'));
  });
  afterEach(async () => {
    rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
    await redis?.stop();
    redis = undefined;
    await postgres?.stop();
    postgres = undefined;
  });

  // Each run starts five processes through tsx, which a cold cache and a busy CI machine make slow.
  it('cluster-workers.ts: four workers log in once between them; restarted after an expiry, they renew once and log in no more', async () => {
    const service = await emulator(demoUser);
    const env = { ...account(service), TOKEN_FILE: join(dir, 'tokens.json') };

    expect(await runExample('cluster-workers.ts', env)).toContain('4 workers done');
    expect(service.counters).toMatchObject({ logins: 1, refreshes: 0 });
    service.expireAccessTokens();
    expect(await runExample('cluster-workers.ts', env)).toContain('4 workers done');
    expect(service.counters).toMatchObject({ logins: 1, refreshes: 1 });
  }, 60_000);

  it('redis-fleet.ts: three replicas started together log in once; after an expiry, three more renew once', async () => {
    redis = await startRedisServer();
    const service = await emulator(demoUser);
    const env = { ...account(service), REDIS_URL: redis.url };
    const replicas = () => Promise.all([1, 2, 3].map(() => runExample('redis-fleet.ts', env)));

    expect((await replicas()).every((output) => output.includes('25 pages'))).toBe(true);
    expect(service.counters).toMatchObject({ logins: 1, refreshes: 0 });
    service.expireAccessTokens();
    expect((await replicas()).every((output) => output.includes('25 pages'))).toBe(true);
    expect(service.counters).toMatchObject({ logins: 1, refreshes: 1 });
  }, 60_000);

  it('postgres-fleet.ts: three replicas started together log in once; after an expiry, three more renew once', async () => {
    postgres = await startPostgresServer();
    const service = await emulator(demoUser);
    const env = { ...account(service), DATABASE_URL: postgres.url };
    const replicas = () => Promise.all([1, 2, 3].map(() => runExample('postgres-fleet.ts', env)));

    expect((await replicas()).every((output) => output.includes('25 pages'))).toBe(true);
    expect(service.counters).toMatchObject({ logins: 1, refreshes: 0 });
    service.expireAccessTokens();
    expect((await replicas()).every((output) => output.includes('25 pages'))).toBe(true);
    expect(service.counters).toMatchObject({ logins: 1, refreshes: 1 });
  }, 60_000);
});
