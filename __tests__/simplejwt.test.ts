// The simpleJwt() preset end to end against a SimpleJWT-shaped service over real HTTP (harness/simplejwt.ts: HS256
// JWTs with `exp`, refresh tokens rotated and blacklisted after use, SimpleJWT's answers). Expiry is real: access
// tokens live 2 s and the tests wait for them to lapse, so the plugin reads each JWT's `exp` as it would in
// production. Counts are exact: one login, one token call per expiry, whatever the number of requests waiting.
import axios from 'axios';
import { attachTokenAuth, isTokenAuthError } from 'axios-token-keeper';
import type { TokenAuthOptions } from 'axios-token-keeper';
import { simpleJwt } from 'axios-token-keeper/presets';
import { startSimpleJwt } from '../harness/simplejwt.js';
import type { SimpleJwtCall, SimpleJwtOptions, SimpleJwtService } from '../harness/simplejwt.js';
import { burst, fulfilled, manualClock } from './helpers/flow.js';
import { expectNoLeaks, recordEvents } from './helpers/scan-secrets.js';
import { reasons } from './helpers/settled.js';

const PASSWORD = 'ada-simplejwt-pass-4b7e';

let service: SimpleJwtService | undefined;

afterEach(async () => {
  await service?.stop();
  service = undefined;
});

async function start(options: Partial<SimpleJwtOptions> = {}): Promise<SimpleJwtService> {
  service = await startSimpleJwt({ users: { ada: PASSWORD }, accessLifetimeSec: 2, ...options });
  return service;
}

function attach(url: string, options: Partial<TokenAuthOptions> = {}) {
  const api = axios.create({ baseURL: url });
  const auth = attachTokenAuth(api, {
    ...simpleJwt(),
    credentials: { username: 'ada', password: PASSWORD },
    ...options,
  });
  return { api, auth };
}

/** The routes and statuses of the calls after the first `from`, e.g. `refresh 200`. */
function routes(calls: SimpleJwtCall[], from = 0, route?: SimpleJwtCall['route']): string[] {
  return calls
    .slice(from)
    .filter((call) => route === undefined || call.route === route)
    .map((call) => `${call.route} ${call.status}`);
}

/** Waits, in real time, until the access token the plugin holds is past its `exp` at the service. */
async function untilExpired(auth: { getTokens(): Promise<{ access: string } | null> }): Promise<void> {
  const { access } = (await auth.getTokens())!;
  const { exp } = JSON.parse(Buffer.from(access.split('.')[1]!, 'base64url').toString('utf8')) as { exp: number };
  // SimpleJWT runs in its own process on its own clock, which the test cannot move: it waits for the real `exp`.
  const wait = exp * 1000 + 50 - Date.now();
  if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
}

describe('simpleJwt() against a SimpleJWT service', () => {
  it('one login, then one refresh per real JWT expiry for a burst of six, each refresh token sent once', async () => {
    const { url, calls } = await start();
    const { api, auth } = attach(url);
    const recorded = recordEvents(auth);

    const first = await burst(5, (index) => api.get(`/api/orders/${index}`));
    expect(fulfilled(first)).toBe(5);
    expect(routes(calls, 0, 'obtain')).toEqual(['obtain 200']);

    const held: string[] = [(await auth.getTokens())!.refresh!];
    for (let round = 1; round <= 2; round += 1) {
      await untilExpired(auth);
      const from = calls.length;
      const results = await burst(6, (index) => api.get(`/api/orders/${round}/${index}`));
      expect(fulfilled(results)).toBe(6);
      // Renewed before sending (the plugin read `exp`): one token call, six requests accepted, none refused.
      expect(routes(calls, from).sort()).toEqual(['refresh 200', ...Array<string>(6).fill('api 200')].sort());
      held.push((await auth.getTokens())!.refresh!);
    }

    const refreshCalls = calls.filter((call) => call.route === 'refresh');
    expect(refreshCalls.map((call) => call.refresh)).toEqual(held.slice(0, 2));
    expect(new Set(held).size).toBe(3);
    expect(routes(calls, 0, 'obtain')).toEqual(['obtain 200']);
    expect(auth.stats()).toMatchObject({ logins: 1, refreshes: 2, replays: 0, failures: 0 });
    expect(recorded.filter((entry) => entry.event === 'refresh').map((entry) => entry.payload)).toEqual([
      expect.objectContaining({ reason: 'expired', rotated: true }),
      expect.objectContaining({ reason: 'expired', rotated: true }),
    ]);

    // The service did blacklist them: the first, sent again, is refused as SimpleJWT refuses it.
    const reuse = await axios.post(`${url}/api/token/refresh/`, { refresh: held[0] }, { validateStatus: () => true });
    expect([reuse.status, reuse.data]).toEqual([401, { detail: 'Token is blacklisted', code: 'token_not_valid' }]);
  });

  it("a JWT the service refuses before the plugin's clock says so: six 401s (token_not_valid), one refresh, six replays", async () => {
    const { url, calls } = await start();
    // The client's clock 5 s behind the service's: the plugin still counts the token valid when the service does not.
    const { api, auth } = attach(url, { clock: () => Date.now() - 5000 });
    await api.get('/api/prime');
    await untilExpired(auth);
    const from = calls.length;

    const results = await burst(6, (index) => api.post('/api/orders', { index }));

    expect(fulfilled(results)).toBe(6);
    expect(routes(calls, from, 'refresh')).toEqual(['refresh 200']);
    expect(routes(calls, from, 'api').sort()).toEqual([
      ...Array<string>(6).fill('api 200'),
      ...Array<string>(6).fill('api 401'),
    ]);
    const bodies = results.map(
      (result) => result.status === 'fulfilled' && (result.value.data as { body: string }).body,
    );
    expect(bodies).toEqual(Array.from({ length: 6 }, (_, index) => JSON.stringify({ index })));
    expect(auth.stats()).toMatchObject({ logins: 1, refreshes: 1, replays: 6, failures: 0 });
  });

  it('a blacklisted refresh token (a logout everywhere): one refused refresh call, one login, and the burst succeeds', async () => {
    // The service and the plugin share a clock the test moves: no waiting.
    const clock = manualClock(Date.now());
    const { url, calls } = await start({ clock: clock.now, accessLifetimeSec: 300 });
    const { api, auth } = attach(url, { clock: clock.now });
    await api.get('/api/prime');
    const { refresh } = (await auth.getTokens())!;
    service!.blacklistAll();
    clock.advance(300_000);
    const from = calls.length;

    const results = await burst(4, (index) => api.get(`/api/orders/${index}`));

    expect(fulfilled(results)).toBe(4);
    expect(calls.slice(from).filter((call) => call.route !== 'api')).toEqual([
      { route: 'refresh', status: 401, refresh },
      { route: 'obtain', status: 200 },
    ]);
    expect(routes(calls, from, 'api')).toEqual(Array(4).fill('api 200'));
    expect(auth.stats()).toMatchObject({ logins: 2, refreshes: 0, replays: 0, failures: 1 });
  });

  it("a wrong password: LOGIN_REJECTED after exactly one login call, with SimpleJWT's detail and no password", async () => {
    const { url, calls } = await start();
    const wrong = 'not-adas-password-9c1d';
    const { api, auth } = attach(url, { credentials: { username: 'ada', password: wrong } });
    const recorded = recordEvents(auth);

    const errors = reasons(await burst(4, (index) => api.get(`/api/orders/${index}`)));
    const later = reasons(await burst(1, () => api.get('/api/orders/later')));

    for (const error of [...errors, ...later]) {
      expect(isTokenAuthError(error)).toBe(true);
      expect(error).toMatchObject({ code: 'LOGIN_REJECTED', status: 401 });
    }
    expect((errors[0] as Error).message).toContain('"No active account found with the given credentials"');
    expect(routes(calls)).toEqual(['obtain 401']);
    expectNoLeaks({ errors, later, recorded }, [
      { name: 'wrong password', value: wrong },
      { name: 'password', value: PASSWORD },
    ]);
  });
});
