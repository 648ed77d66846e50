// The plugin against @node-oauth/oauth2-server, an OAuth2 server nobody here wrote, over real HTTP on loopback, with
// the oauth2Password() preset as a user writes it: the password grant, refresh tokens that rotate. The server counts
// its own token calls; the API the requests go to trusts no token without asking the package's authenticate(). Counts
// are exact: one token call per renewal.
import axios from 'axios';
import type { AxiosInstance } from 'axios';
import { attachTokenAuth } from 'axios-token-keeper';
import type { TokenAuth, TokenAuthOptions } from 'axios-token-keeper';
import { oauth2Password } from 'axios-token-keeper/presets';
import { startNodeOAuthServer } from '../harness/oauth2/node-oauth.js';
import type { NodeOAuthServer } from '../harness/oauth2/node-oauth.js';
import type { TokenCall } from '../harness/oauth2/token-call.js';
import { burst, fulfilled, manualClock } from './helpers/flow.js';
import { answerOf, everySpelling, secretAndBasic, since, subjects } from './helpers/oauth2.js';
import { expectNoLeaks, recordEvents, spellingsOf } from './helpers/scan-secrets.js';
import { reasons } from './helpers/settled.js';

describe('@node-oauth/oauth2-server 5 (password grant, rotating refresh tokens)', () => {
  const CLIENT_SECRET = 'web-app-secret-8b2f6d0e3a71';
  const PASSWORD = 'ada-pass-3e9f1c7b5d';
  let server: NodeOAuthServer;

  beforeAll(async () => {
    server = await startNodeOAuthServer({
      clients: [{ id: 'web-app', secret: CLIENT_SECRET, grants: ['password', 'refresh_token'] }],
      users: [{ username: 'ada', password: PASSWORD }],
      accessTokenLifetimeSec: 300,
    });
  });

  afterAll(async () => {
    await server?.stop();
  });

  function user(options: { password?: string; clientSecret?: string } = {}): {
    api: AxiosInstance;
    auth: TokenAuth;
    clock: ReturnType<typeof manualClock>;
  } {
    const clock = manualClock();
    const api = axios.create({ baseURL: `${server.url}/api` });
    const settings: TokenAuthOptions = {
      authBaseURL: server.url,
      ...oauth2Password({
        tokenPath: '/oauth/token',
        clientId: 'web-app',
        clientSecret: options.clientSecret ?? CLIENT_SECRET,
      }),
      credentials: { username: 'ada', password: options.password ?? PASSWORD },
      clock: clock.now,
    };
    return { api, auth: attachTokenAuth(api, settings), clock };
  }

  const grants = (calls: TokenCall[]) => calls.map((call) => `${call.grantType} ${call.status}`);

  it('first use: eight concurrent requests make one password grant call, and the API accepts all eight', async () => {
    const { api, auth } = user();
    const from = server.tokenCalls.length;
    const { accepted } = server.api;

    const results = await burst(8, (index) => api.get<{ subject: string }>(`/orders/${index}`));

    expect(fulfilled(results)).toBe(8);
    expect(since(server.tokenCalls, from)).toEqual([
      { grantType: 'password', refreshToken: null, clientId: 'web-app', status: 200, error: null },
    ]);
    expect(server.api.accepted - accepted).toBe(8);
    expect(subjects(results)).toEqual(Array(8).fill('ada'));
    expect(auth.stats()).toMatchObject({ logins: 1, refreshes: 0, replays: 0, failures: 0 });
  });

  it('expiry the plugin knows of (expires_in passed): ten requests, one refresh_token call, none refused', async () => {
    const { api, auth, clock } = user();
    await api.get('/prime');
    const { refresh } = (await auth.getTokens())!;
    const from = server.tokenCalls.length;
    const { accepted, refused } = server.api;

    clock.advance(300_000);
    const results = await burst(10, (index) => api.get(`/orders/${index}`));

    expect(fulfilled(results)).toBe(10);
    expect(since(server.tokenCalls, from)).toEqual([
      { grantType: 'refresh_token', refreshToken: refresh, clientId: 'web-app', status: 200, error: null },
    ]);
    expect(server.api.accepted - accepted).toBe(10);
    expect(server.api.refused - refused).toBe(0);
    expect(auth.stats()).toMatchObject({ logins: 1, refreshes: 1, replays: 0, failures: 0 });
  });

  it('expiry the server enforces (its tokens aged): ten requests refused once, one refresh_token call, ten replays', async () => {
    const { api, auth } = user();
    await api.get('/prime');
    server.expireAccessTokens();
    const from = server.tokenCalls.length;
    const { accepted, refused } = server.api;

    const results = await burst(10, (index) => api.get(`/orders/${index}`));

    expect(fulfilled(results)).toBe(10);
    expect(grants(since(server.tokenCalls, from))).toEqual(['refresh_token 200']);
    expect(server.api.refused - refused).toBe(10);
    expect(server.api.accepted - accepted).toBe(10);
    expect(auth.stats()).toMatchObject({ logins: 1, refreshes: 1, replays: 10, failures: 0 });
  });

  it('rotation: four renewals each send the refresh token the previous answer issued, once; the server revoked each', async () => {
    const { api, auth } = user();
    await api.get('/prime');
    const from = server.tokenCalls.length;
    const held: string[] = [(await auth.getTokens())!.refresh!];

    for (let round = 1; round <= 4; round += 1) {
      server.expireAccessTokens();
      expect(fulfilled(await burst(3, (index) => api.get(`/orders/${round}/${index}`)))).toBe(3);
      held.push((await auth.getTokens())!.refresh!);
    }

    const calls = since(server.tokenCalls, from);
    expect(calls.map((call) => call.refreshToken)).toEqual(held.slice(0, 4));
    expect(grants(calls)).toEqual(Array(4).fill('refresh_token 200'));
    expect(new Set(held).size).toBe(5);
    expect(held.map((token) => server.holdsRefreshToken(token))).toEqual([false, false, false, false, true]);
    expect(auth.stats()).toMatchObject({ logins: 1, refreshes: 4, replays: 12, failures: 0 });
  });

  it('revoked refresh tokens: one refused refresh_token call, then one password login, and the requests succeed', async () => {
    const { api, auth } = user();
    const recorded = recordEvents(auth);
    await api.get('/prime');
    server.revokeRefreshTokens();
    server.expireAccessTokens();
    const from = server.tokenCalls.length;

    const results = await burst(4, (index) => api.get(`/orders/${index}`));

    expect(fulfilled(results)).toBe(4);
    expect(since(server.tokenCalls, from)).toEqual([
      expect.objectContaining({ grantType: 'refresh_token', status: 400, error: 'invalid_grant' }),
      { grantType: 'password', refreshToken: null, clientId: 'web-app', status: 200, error: null },
    ]);
    expect(auth.stats()).toMatchObject({ logins: 2, refreshes: 0, replays: 4, failures: 1 });
    const told = recorded.filter((entry) => entry.event === 'failure' || entry.event === 'login');
    expect(told.map((entry) => entry.event)).toEqual(['login', 'failure', 'login']);
    expect(told.map((entry) => entry.payload)).toEqual([
      expect.objectContaining({ reason: 'no-token' }),
      expect.objectContaining({ operation: 'refresh', code: 'REFRESH_REJECTED' }),
      expect.objectContaining({ reason: 'refresh-rejected' }),
    ]);
  });

  it('a wrong password holding `:`, a space and `+`: LOGIN_REJECTED (400 invalid_grant) after one call, and the password in no spelling anywhere', async () => {
    const wrong = 'not:adas pass+word-6a2c';
    const { api, auth } = user({ password: wrong });
    const recorded = recordEvents(auth);
    const from = server.tokenCalls.length;

    const errors = reasons(await burst(4, (index) => api.get(`/orders/${index}`)));
    const later = reasons(await burst(1, () => api.get('/orders/later')));

    for (const error of [...errors, ...later]) expect(error).toMatchObject({ code: 'LOGIN_REJECTED', status: 400 });
    expect(since(server.tokenCalls, from)).toEqual([
      { grantType: 'password', refreshToken: null, clientId: 'web-app', status: 400, error: 'invalid_grant' },
    ]);
    expect(auth.stats()).toMatchObject({ logins: 0, failures: 1 });
    expect(answerOf(errors[0])).toMatchObject({ error: 'invalid_grant' });
    expectNoLeaks({ errors, later, recorded }, [
      ...spellingsOf('wrong password', wrong),
      ...spellingsOf('password', PASSWORD),
      ...secretAndBasic('client secret', 'web-app', CLIENT_SECRET),
    ]);
  });

  it('a wrong client secret holding `:`, a space and `+`: LOGIN_REJECTED (401 invalid_client) after one call, the secret in no spelling anywhere, nor the password', async () => {
    const wrong = 'not:the web+app-secret-1f7d';
    const { api, auth } = user({ clientSecret: wrong });
    const recorded = recordEvents(auth);
    const from = server.tokenCalls.length;

    const errors = reasons(await burst(4, (index) => api.get(`/orders/${index}`)));

    for (const error of errors) expect(error).toMatchObject({ code: 'LOGIN_REJECTED', status: 401 });
    expect(since(server.tokenCalls, from)).toEqual([
      { grantType: 'password', refreshToken: null, clientId: 'web-app', status: 401, error: 'invalid_client' },
    ]);
    expect(answerOf(errors[0])).toMatchObject({ error: 'invalid_client' });
    expectNoLeaks({ errors, recorded }, [
      ...everySpelling('wrong client secret', 'web-app', wrong),
      ...spellingsOf('password', PASSWORD),
    ]);
  });
});
