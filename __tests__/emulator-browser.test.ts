// What the emulator does for a page in a browser, checked with bare axios over real HTTP (no plugin): the refresh token
// in an HttpOnly cookie (refreshCookie) and CORS (cors), each off by default.
import type { AxiosResponse } from 'axios';
import { closeEmulatorsAfterEach, emulator } from './helpers/emulator.js';
import { basic, login, LOGIN, LOGOUT, raw, TOKEN } from './helpers/emulator-http.js';

closeEmulatorsAfterEach();

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
