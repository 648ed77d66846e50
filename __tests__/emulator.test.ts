import { spawn } from 'node:child_process';
import { join } from 'node:path';
import axios from 'axios';
import type { AxiosResponse } from 'axios';
import { EMULATOR_FLAGS, emulatorOptions } from '../lib/emulator/command.js';
import { readCommandLine, UsageError } from '../lib/emulator/command-line.js';
import { closeEmulatorsAfterEach, emulator } from './helpers/emulator.js';
import { manualClock, until } from './helpers/flow.js';
import { root, serveScript, stopScriptsAfterEach } from './helpers/scripts.js';

// The emulator's own contract, checked with bare axios over real HTTP (no plugin).
closeEmulatorsAfterEach();
stopScriptsAfterEach();

const LOGIN = '/auth/api/v1/accounts/login';
const TOKEN = '/auth/api/v1/accounts/token';
const LOGOUT = '/auth/api/v1/accounts/logout';
const basic = (user: string, password: string) => `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
const raw = (url: string) => axios.create({ baseURL: url, validateStatus: () => true });

async function login(url: string, user = 'demo', password = 'demo-password'): Promise<AxiosResponse> {
  return raw(url).post(LOGIN, undefined, { headers: { Authorization: basic(user, password) } });
}

describe('the emulator', () => {
  it('logs in with Basic credentials and refuses wrong or missing ones with a detail', async () => {
    const service = await emulator({ users: { demo: 'demo-password' } });

    const ok = await login(service.url);
    const wrong = await login(service.url, 'demo', 'nope');
    const missing = await raw(service.url).post(LOGIN);

    expect(ok.status).toBe(200);
    expect(Object.keys(ok.data as object).sort()).toEqual(['access', 'refresh']);
    expect([wrong.status, wrong.data]).toEqual([401, { detail: 'Invalid username or password.' }]);
    expect([missing.status, missing.data]).toEqual([401, { detail: 'Authentication credentials were not provided.' }]);
    expect(service.counters).toMatchObject({ logins: 1, rejected: 2, tokenCalls: 3 });
  });

  it('renews with a refresh token that works once, answering in the real service’s shape', async () => {
    const service = await emulator({ users: { demo: 'demo-password' } });
    const { refresh } = (await login(service.url)).data as { refresh: string };

    const first = await raw(service.url).post(TOKEN, { refresh_token: refresh });
    const again = await raw(service.url).post(TOKEN, { refresh_token: refresh });

    expect(first.status).toBe(200);
    expect(first.data).toEqual({
      status: true,
      // eslint-disable-next-line @typescript-eslint/no-unsafe-assignment -- jest types its asymmetric matchers as any
      data: { access_token: expect.stringMatching(/^acc_/), refresh_token: expect.stringMatching(/^ref_/) },
    });
    expect([again.status, (again.data as { code: string }).code]).toEqual([401, 'token_not_valid']);
    expect(service.counters).toMatchObject({ refreshes: 1, rejected: 1 });
  });

  it('keeps the refresh token alive without rotation', async () => {
    const service = await emulator({ users: { demo: 'demo-password' }, rotateRefreshTokens: false });
    const { refresh } = (await login(service.url)).data as { refresh: string };

    const answers = [
      await raw(service.url).post(TOKEN, { refresh_token: refresh }),
      await raw(service.url).post(TOKEN, { refresh_token: refresh }),
    ];

    expect(answers.map((answer) => answer.status)).toEqual([200, 200]);
    expect((answers[0]!.data as { data: object }).data).not.toHaveProperty('refresh_token');
  });

  it('serves protected paths for a valid Bearer token, echoing the request, and 401s after the access lifetime', async () => {
    const clock = manualClock();
    const service = await emulator({ users: { demo: 'demo-password' }, clock: clock.now, accessTtlMs: 60_000 });
    const { access } = (await login(service.url)).data as { access: string };
    const api = raw(service.url);

    const echoed = await api.put('/things/1?x=2', { a: 1 }, { headers: { Authorization: `Bearer ${access}` } });
    clock.advance(60_000);
    const expired = await api.get('/things/1', { headers: { Authorization: `Bearer ${access}` } });
    const unknown = await api.get('/things/1', { headers: { Authorization: 'Bearer nope' } });

    expect(echoed.data).toEqual({
      method: 'PUT',
      path: '/things/1?x=2',
      user: 'demo',
      contentType: 'application/json',
      body: { a: 1 },
    });
    expect([expired.status, expired.data]).toEqual([
      401,
      { detail: 'Given token not valid for any token type', code: 'token_not_valid' },
    ]);
    expect(unknown.status).toBe(401);
    expect(service.counters).toMatchObject({ dataCalls: 3, unauthorized: 2, expiries: 1 });
  });

  it('issues JWT access tokens whose exp is the access lifetime', async () => {
    const clock = manualClock();
    const service = await emulator({
      users: { demo: 'demo-password' },
      clock: clock.now,
      tokenFormat: 'jwt',
      accessTtlMs: 90_000,
    });

    const { access } = (await login(service.url)).data as { access: string };

    const payload = JSON.parse(Buffer.from(access.split('.')[1]!, 'base64url').toString('utf8')) as {
      exp: number;
      sub: string;
    };
    expect(payload).toMatchObject({ sub: 'demo', exp: Math.floor((clock.now() + 90_000) / 1000) });
  });

  it.each<
    [
      string,
      Parameters<Awaited<ReturnType<typeof emulator>>['inject']>[1],
      (r: AxiosResponse | Error) => unknown,
      unknown,
    ]
  >([
    [
      'a status with headers',
      { status: 429, headers: { 'Retry-After': '3' } },
      (r): unknown => [(r as AxiosResponse).status, (r as AxiosResponse).headers['retry-after']],
      [429, '3'],
    ],
    [
      'a redirect',
      { redirect: 'http://127.0.0.1:9/elsewhere' },
      (r): unknown => [(r as AxiosResponse).status, (r as AxiosResponse).headers.location],
      [302, 'http://127.0.0.1:9/elsewhere'],
    ],
    ['malformed JSON', 'malformed', (r) => (r as AxiosResponse<unknown>).data, '{"access": "abc", '],
    [
      'no access token',
      'no-access-token',
      (r) => (r as AxiosResponse<unknown>).data,
      { status: true, data: { message: 'ok' } },
    ],
    ['a huge body', 'huge', (r) => ((r as AxiosResponse).data as { padding: string }).padding.length, 5 * 1024 * 1024],
    ['a dropped connection', 'drop', (r) => (r as { code?: string }).code, 'ECONNRESET'],
    [
      'half an answer',
      'reset',
      (r) => r instanceof Error && !('response' in r && (r as { response?: { data?: unknown } }).response?.data),
      true,
    ],
  ])('injects %s on the next login, once', async (_name, fault, observe, expected) => {
    const service = await emulator({ users: { demo: 'demo-password' } });
    service.inject('login', fault);

    const faulty = await raw(service.url)
      .post(LOGIN, undefined, { headers: { Authorization: basic('demo', 'demo-password') }, maxRedirects: 0 })
      .catch((error: Error) => error);
    const next = await login(service.url);

    expect(observe(faulty)).toEqual(expected);
    expect(next.status).toBe(200);
    expect(service.counters).toMatchObject({ logins: 1, tokenCalls: 2 });
  });

  it('close() ends hung connections at once and frees the port', async () => {
    const service = await emulator();
    service.inject('login', 'hang');
    const url = service.url;
    const hung = raw(url)
      .post(LOGIN)
      .catch((error: { code?: string }) => error.code);
    await until(() => service.counters.tokenCalls === 1);

    await service.close();

    expect(await hung).toBe('ECONNRESET');
    expect(
      await raw(url)
        .get('/')
        .catch((error: { code?: string }) => error.code),
    ).toBe('ECONNREFUSED');
  });

  it('logs the credential each route received', async () => {
    const service = await emulator({ users: { demo: 'demo-password' } });
    const { access, refresh } = (await login(service.url)).data as { access: string; refresh: string };
    await raw(service.url).post(TOKEN, { refresh_token: refresh });
    await raw(service.url).get('/x', { headers: { Authorization: `Bearer ${access}` } });

    expect(
      service.calls.map((call) => [call.route, call.authorization?.split(' ')[0], call.body.includes(refresh)]),
    ).toEqual([
      ['login', 'Basic', false],
      ['token', undefined, true],
      ['data', 'Bearer', false],
    ]);
  });
});

describe('many users', () => {
  const users = { alice: 'alice-pass-81c2', bob: 'bob-pass-37d9' };

  it('tells whose token each data call carried, in the answer and in the call log, faults included', async () => {
    const service = await emulator({ users });
    const tokenOf = async (user: keyof typeof users) =>
      ((await login(service.url, user, users[user])).data as { access: string }).access;
    const [alice, bob] = [await tokenOf('alice'), await tokenOf('bob')];
    const api = raw(service.url);
    const get = (token: string) => api.get('/whoami', { headers: { Authorization: `Bearer ${token}` } });

    const answers = [await get(alice), await get(bob), await get('acc_0000000000000000')];
    service.inject('data', { status: 503 });
    const faulty = await get(bob);

    expect(answers.map((answer) => [answer.status, (answer.data as { user?: string }).user])).toEqual([
      [200, 'alice'],
      [200, 'bob'],
      [401, undefined],
    ]);
    expect(faulty.status).toBe(503);
    expect(service.calls.map((call) => [call.route, call.user])).toEqual([
      ['login', undefined],
      ['login', undefined],
      ['data', 'alice'],
      ['data', 'bob'],
      ['data', undefined],
      ['data', 'bob'],
    ]);
  });

  it('logs no user for a token that expired, though it was once the user’s', async () => {
    const clock = manualClock();
    const service = await emulator({ users, clock: clock.now, accessTtlMs: 60_000 });
    const { access } = (await login(service.url, 'alice', users.alice)).data as { access: string };

    clock.advance(60_000);
    const expired = await raw(service.url).get('/whoami', { headers: { Authorization: `Bearer ${access}` } });

    expect([expired.status, service.calls.at(-1)?.user]).toEqual([401, undefined]);
    expect(service.counters.expiries).toBe(1);
  });
});

describe('the call log', () => {
  it('records the Cookie header each call carried, and none where none was sent', async () => {
    const service = await emulator({ users: { demo: 'demo-password' }, refreshCookie: true });
    const answer = await login(service.url);
    const cookie = `refresh_token=${/refresh_token=([^;]*)/.exec(answer.headers['set-cookie']?.[0] ?? '')?.[1]}`;

    await raw(service.url).post(TOKEN, undefined, { headers: { Cookie: cookie } });
    await raw(service.url).post(LOGOUT, undefined, { headers: { Cookie: `a=1; ${cookie}` } });

    expect(service.calls.map((call) => [call.route, call.cookie])).toEqual([
      ['login', undefined],
      ['token', cookie],
      ['logout', `a=1; ${cookie}`],
    ]);
  });
});

describe('the logout', () => {
  const dead = [401, { detail: 'Token is invalid or expired', code: 'token_not_valid' }];

  it('kills the refresh token it is given and no other, answering 200 without one or with a dead one too', async () => {
    const service = await emulator({ users: { demo: 'demo-password' } });
    const mine = ((await login(service.url)).data as { refresh: string }).refresh;
    const other = ((await login(service.url)).data as { refresh: string }).refresh;

    const out = await raw(service.url).post(LOGOUT, { refresh_token: mine });
    const again = await raw(service.url).post(LOGOUT, { refresh_token: mine });
    const without = await raw(service.url).post(LOGOUT);
    const renewMine = await raw(service.url).post(TOKEN, { refresh_token: mine });
    const renewOther = await raw(service.url).post(TOKEN, { refresh_token: other });

    expect([out, again, without].map((answer): unknown[] => [answer.status, answer.data as unknown])).toEqual([
      [200, { status: true }],
      [200, { status: true }],
      [200, { status: true }],
    ]);
    expect([renewMine.status, renewMine.data]).toEqual(dead);
    expect(renewOther.status).toBe(200);
    expect(service.counters).toMatchObject({ logouts: 3, tokenCalls: 4, rejected: 1, refreshes: 1, dataCalls: 0 });
    expect(service.calls.map((call) => call.route)).toEqual([
      'login',
      'login',
      'logout',
      'logout',
      'logout',
      'token',
      'token',
    ]);
  });

  it('kills a refresh token that works again and again without rotation', async () => {
    const service = await emulator({ users: { demo: 'demo-password' }, rotateRefreshTokens: false });
    const { refresh } = (await login(service.url)).data as { refresh: string };

    const before = await raw(service.url).post(TOKEN, { refresh_token: refresh });
    await raw(service.url).post(LOGOUT, { refresh_token: refresh });
    const after = await raw(service.url).post(TOKEN, { refresh_token: refresh });

    expect([before.status, [after.status, after.data]]).toEqual([200, dead]);
  });

  it('takes injected faults of its own, and kills nothing when one answers instead', async () => {
    const service = await emulator({ users: { demo: 'demo-password' } });
    const { refresh } = (await login(service.url)).data as { refresh: string };
    service.inject('logout', { status: 503 });

    const faulty = await raw(service.url).post(LOGOUT, { refresh_token: refresh });
    const renewal = await raw(service.url).post(TOKEN, { refresh_token: refresh });

    expect([faulty.status, renewal.status]).toEqual([503, 200]);
    expect(service.counters).toMatchObject({ faults: 1, logouts: 0, refreshes: 1 });
  });
});

describe('the refresh token in an HttpOnly cookie (refreshCookie)', () => {
  const ATTRIBUTES = 'HttpOnly; Path=/auth/api/v1/accounts; SameSite=Lax';
  const dead = [401, { detail: 'Token is invalid or expired', code: 'token_not_valid' }];
  /** The Set-Cookie headers of an answer; Node's http client hands them over as they came, since it keeps no jar. */
  const setCookies = (answer: AxiosResponse) => answer.headers['set-cookie'] ?? [];
  /** The refresh token an answer set as the cookie. */
  const cookieOf = (answer: AxiosResponse) => /^refresh_token=(ref_[0-9a-f]+);/.exec(setCookies(answer)[0] ?? '')?.[1];
  /** Sends the cookie as a browser would: Node keeps none, so the test passes the header by hand. */
  const withCookie = (refresh: string) => ({ headers: { Cookie: `theme=dark; refresh_token=${refresh}` } });

  it('sets the cookie at login and leaves the refresh token out of the body', async () => {
    const service = await emulator({ users: { demo: 'demo-password' }, refreshCookie: true });

    const answer = await login(service.url);

    const refresh = cookieOf(answer)!;
    expect(answer.status).toBe(200);
    expect(Object.keys(answer.data as object)).toEqual(['access']);
    expect(setCookies(answer)).toEqual([`refresh_token=${refresh}; ${ATTRIBUTES}`]);
    expect(service.issued(refresh)).toBe(true);
  });

  it('renews from the cookie, rotating it, and refuses the old one', async () => {
    const service = await emulator({ users: { demo: 'demo-password' }, refreshCookie: true });
    const first = cookieOf(await login(service.url))!;

    const renewal = await raw(service.url).post(TOKEN, undefined, withCookie(first));
    const second = cookieOf(renewal)!;
    const old = await raw(service.url).post(TOKEN, undefined, withCookie(first));
    const next = await raw(service.url).post(TOKEN, undefined, withCookie(second));
    const none = await raw(service.url).post(TOKEN);

    expect(renewal.status).toBe(200);
    // eslint-disable-next-line @typescript-eslint/no-unsafe-assignment -- jest types its asymmetric matchers as any
    expect(renewal.data).toEqual({ status: true, data: { access_token: expect.stringMatching(/^acc_/) } });
    expect(setCookies(renewal)).toEqual([`refresh_token=${second}; ${ATTRIBUTES}`]);
    expect(second).not.toBe(first);
    expect([old.status, old.data]).toEqual(dead);
    expect([old, none].map((answer) => setCookies(answer))).toEqual([[], []]);
    expect([none.status, none.data]).toEqual(dead);
    expect(next.status).toBe(200);
    expect(service.counters).toMatchObject({ logins: 1, refreshes: 2, rejected: 2 });
  });

  it('takes the refresh token from the body when it has one, before the cookie', async () => {
    const service = await emulator({ users: { demo: 'demo-password' }, refreshCookie: true });
    const inCookie = cookieOf(await login(service.url))!;
    const inBody = cookieOf(await login(service.url))!;

    const renewal = await raw(service.url).post(TOKEN, { refresh_token: inBody }, withCookie(inCookie));
    const again = await raw(service.url).post(TOKEN, { refresh_token: inBody }, withCookie(inCookie));
    const fromCookie = await raw(service.url).post(TOKEN, undefined, withCookie(inCookie));

    expect([renewal.status, again.status, fromCookie.status]).toEqual([200, 401, 200]);
  });

  it.each([
    ['the cookie', (refresh: string) => [undefined, withCookie(refresh)] as const],
    ['the body', (refresh: string) => [{ refresh_token: refresh }, {}] as const],
  ])('logs out with the refresh token in %s, kills it and clears the cookie', async (_where, send) => {
    const service = await emulator({ users: { demo: 'demo-password' }, refreshCookie: true });
    const refresh = cookieOf(await login(service.url))!;

    const out = await raw(service.url).post(LOGOUT, ...send(refresh));
    const renewal = await raw(service.url).post(TOKEN, undefined, withCookie(refresh));

    expect([out.status, out.data]).toEqual([200, { status: true }]);
    expect(setCookies(out)).toEqual([`refresh_token=; ${ATTRIBUTES}; Max-Age=0`]);
    expect([renewal.status, renewal.data]).toEqual(dead);
    expect(service.counters).toMatchObject({ logouts: 1, rejected: 1 });
  });

  it('is off by default: no cookie set, none read, the refresh token in the body', async () => {
    const service = await emulator({ users: { demo: 'demo-password' } });
    const answer = await login(service.url);
    const { refresh } = answer.data as { refresh: string };

    const fromCookie = await raw(service.url).post(TOKEN, undefined, withCookie(refresh));
    const logout = await raw(service.url).post(LOGOUT, undefined, withCookie(refresh));
    const fromBody = await raw(service.url).post(TOKEN, { refresh_token: refresh });

    expect(Object.keys(answer.data as object)).toEqual(['access', 'refresh']);
    expect([answer, fromCookie, logout, fromBody].map((each) => setCookies(each))).toEqual([[], [], [], []]);
    expect([fromCookie.status, logout.status, fromBody.status]).toEqual([401, 200, 200]);
  });
});

describe('CORS (cors)', () => {
  const PAGE = 'http://127.0.0.1:5173';
  const cors = (answer: AxiosResponse) =>
    Object.fromEntries(
      Object.entries(answer.headers as Record<string, unknown>).filter(([name]) =>
        /^(access-control-|vary$)/.test(name),
      ),
    );

  it('answers a preflight with credentials: the origin echoed, credentials allowed, the requested headers too', async () => {
    const service = await emulator({ users: { demo: 'demo-password' }, cors: true });

    const preflight = await raw(service.url).options(TOKEN, {
      headers: {
        Origin: PAGE,
        'Access-Control-Request-Method': 'POST',
        'Access-Control-Request-Headers': 'content-type, x-trace-id',
      },
    });

    expect(preflight.status).toBe(204);
    expect(cors(preflight)).toEqual({
      'access-control-allow-origin': PAGE,
      'access-control-allow-credentials': 'true',
      'access-control-allow-headers': 'Authorization, Content-Type, X-Request-Id, X-Requested-With, x-trace-id',
      'access-control-allow-methods': 'GET, POST, PUT, PATCH, DELETE, OPTIONS',
      vary: 'Origin',
    });
    expect(service.calls).toEqual([]);
  });

  it('allows the origin and its credentials on the answer itself, and any origin without one', async () => {
    const service = await emulator({ users: { demo: 'demo-password' }, cors: true, refreshCookie: true });

    const fromPage = await raw(service.url).post(LOGIN, undefined, {
      headers: { Authorization: basic('demo', 'demo-password'), Origin: PAGE },
    });
    const noOrigin = await login(service.url);

    expect(fromPage.status).toBe(200);
    expect(cors(fromPage)).toMatchObject({
      'access-control-allow-origin': PAGE,
      'access-control-allow-credentials': 'true',
      vary: 'Origin',
    });
    expect(cors(noOrigin)).toMatchObject({ 'access-control-allow-origin': '*', vary: 'Origin' });
    expect(cors(noOrigin)).not.toHaveProperty('access-control-allow-credentials');
  });

  it('is off by default: no CORS headers, and an OPTIONS request is a data call like any other', async () => {
    const service = await emulator({ users: { demo: 'demo-password' } });

    const preflight = await raw(service.url).options(TOKEN, { headers: { Origin: PAGE } });

    expect([preflight.status, cors(preflight)]).toEqual([401, {}]);
  });
});

describe('npm run emulator', () => {
  it('serves on the port it prints until it is stopped', async () => {
    const child = spawn(
      join(__dirname, '..', 'node_modules', '.bin', 'tsx'),
      [join(__dirname, '..', 'demo', 'emulator.ts'), '--port', '0', '--access-ttl', '30s'],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    try {
      const url = await new Promise<string>((resolve, reject) => {
        let out = '';
        child.stdout.on('data', (chunk: Buffer) => {
          out += chunk.toString();
          const found = /on (http:\/\/127\.0\.0\.1:\d+)/.exec(out);
          if (found) resolve(found[1]!);
        });
        child.once('exit', (code) => reject(new Error(`exited ${code}: ${out}`)));
      });

      expect((await login(url)).status).toBe(200);
    } finally {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      expect(await exited).toBe(0);
    }
  });

  it('serves each --user, repeated, with --refresh-cookie, and no other', async () => {
    const args = ['--port', '0', '--user', 'alice:a1-pass', '--user', 'bob:b2:pass', '--refresh-cookie'];
    const { match, stop } = await serveScript(join(root, 'demo', 'emulator.ts'), args, /on (\S+) /);
    const url = match[1]!;

    const [alice, bob, demo] = [
      await login(url, 'alice', 'a1-pass'),
      await login(url, 'bob', 'b2:pass'),
      await login(url, 'demo', 'demo-password'),
    ];

    expect([alice.status, bob.status, demo.status]).toEqual([200, 200, 401]);
    expect(Object.keys(alice.data as object)).toEqual(['access']);
    expect(alice.headers['set-cookie']?.[0]).toMatch(/^refresh_token=ref_[0-9a-f]+; HttpOnly;/);
    expect(await stop()).toBe(0);
  });
});

describe('the emulator command’s flags', () => {
  const optionsOf = (args: string[]) => emulatorOptions(readCommandLine(EMULATOR_FLAGS, args)!);

  it.each<[string[], Record<string, string>]>([
    [[], { demo: 'demo-password' }],
    [['--user', 'alice:a1'], { alice: 'a1' }],
    [['--user', 'alice:a1', '--user', 'bob:b:2'], { alice: 'a1', bob: 'b:2' }],
    [['--user', 'alice', '--password', 'x1'], { alice: 'x1' }],
    [['--password', 'x1'], { demo: 'x1' }],
    [['--user', 'alice:a1', '--user', 'carol', '--password', 'c3'], { alice: 'a1', carol: 'c3' }],
  ])('%j lets %j log in', (args, users) => {
    expect(optionsOf(args).users).toEqual(users);
  });

  it('turns --refresh-cookie and --cors on, both off by default', () => {
    expect(optionsOf(['--refresh-cookie', '--cors'])).toMatchObject({ refreshCookie: true, cors: true });
    expect(optionsOf([])).toMatchObject({ refreshCookie: false, cors: false });
  });

  it.each([
    [['--user', ':a1'], '--user takes name:password, and the name is missing'],
    [['--user', 'alice:'], '--user alice: takes a password after the colon'],
    [['--user', 'alice:a1', '--user', 'alice:a2'], '--user alice is given twice'],
    [['--user'], '--user needs a value'],
  ])('%j: %s', (args, line) => {
    expect(() => optionsOf(args)).toThrow(new UsageError(line));
  });
});
