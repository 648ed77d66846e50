// The emulator's own contract for its tokens, checked with bare axios over real HTTP (no plugin): the login with Basic
// credentials, refresh tokens that work once, protected paths for a valid Bearer token, JWT access tokens, injected
// faults, close(), many users, the call log, and the logout.
import type { AxiosResponse } from 'axios';
import { closeEmulatorsAfterEach, emulator } from './helpers/emulator.js';
import { basic, login, LOGIN, LOGOUT, raw, TOKEN } from './helpers/emulator-http.js';
import { manualClock, until } from './helpers/flow.js';

closeEmulatorsAfterEach();

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
