// The plugin against OAuth2 servers nobody here wrote, over real HTTP on loopback, with the presets as a user
// writes them: panva's oidc-provider (client_credentials; a user's authorization-code sign-in handed over with
// setTokens, then refresh tokens that rotate) and @node-oauth/oauth2-server (password grant, refresh tokens that
// rotate). Each server counts its own token calls; the API the requests go to trusts no token without asking the
// server (introspection, or the package's authenticate()). Counts are exact: one token call per renewal.
import axios from 'axios';
import type { AxiosInstance } from 'axios';
import { attachTokenAuth, isTokenAuthError } from 'axios-token-keeper';
import type { TokenAuth, TokenAuthOptions } from 'axios-token-keeper';
import { oauth2ClientCredentials, oauth2Password } from 'axios-token-keeper/presets';
import { startNodeOAuthServer } from '../harness/oauth2/node-oauth.js';
import type { NodeOAuthServer } from '../harness/oauth2/node-oauth.js';
import { introspector, revokeToken, signIn, startOidcProvider } from '../harness/oauth2/oidc.js';
import type { OidcProvider, TokenCall } from '../harness/oauth2/oidc.js';
import { startResourceServer } from '../harness/oauth2/resource.js';
import type { ResourceServer } from '../harness/oauth2/resource.js';
import { burst, fulfilled, manualClock } from './helpers/flow.js';
import { expectNoLeaks, formEncoded, pairSpellings, recordEvents, spellingsOf } from './helpers/scan-secrets.js';
import { reasons } from './helpers/settled.js';
import type { Secret } from './helpers/scan-secrets.js';

const SERVICE_SECRET = 'svc-secret-7f3a9c2e41b8';
const APP_SECRET = 'app-secret-0d6b5e19c7a3';
const RESOURCE_SERVER_SECRET = 'rs-secret-4c8e2a7f1d90';
const REDIRECT_URI = 'http://127.0.0.1/callback';

/** Whom the API saw behind each request's token (the user, or the client for client_credentials). */
function subjects(results: PromiseSettledResult<{ data: { subject: string } }>[]): unknown[] {
  return results.map((result) =>
    result.status === 'fulfilled' ? result.value.data.subject : (result.reason as unknown),
  );
}

function basicOf(id: string, secret: string): string {
  return Buffer.from(`${id}:${secret}`).toString('base64');
}

/** A client secret or password, and the Basic value it travels in, for the leak checks. */
function secretAndBasic(name: string, id: string, secret: string): Secret[] {
  return [
    { name, value: secret },
    { name: `Basic value of ${name}`, value: basicOf(id, secret) },
  ];
}

/**
 * A wrong secret in every spelling a transport gives it, and the pair it makes with the client id as the preset joins
 * it for Basic (each form-encoded, RFC 6749 §2.3.1).
 */
function everySpelling(name: string, id: string, secret: string): Secret[] {
  return [...spellingsOf(name, secret), ...pairSpellings(`${name} in Basic`, formEncoded(id), formEncoded(secret))];
}

/** The token service's answer, as the error's cause keeps it for the caller. */
function answerOf(error: unknown): unknown {
  return (error as { cause?: { response?: { data?: unknown } } }).cause?.response?.data;
}

/** What the token calls after the first `from` were, as the server recorded them. */
function since(calls: TokenCall[], from: number): TokenCall[] {
  return calls.slice(from);
}

describe('oidc-provider 9 (a real OpenID Provider)', () => {
  let provider: OidcProvider;
  let resource: ResourceServer;

  beforeAll(async () => {
    provider = await startOidcProvider({
      resourceServerSecret: RESOURCE_SERVER_SECRET,
      accessTokenTtlSec: 600,
      clients: [
        {
          client_id: 'svc',
          client_secret: SERVICE_SECRET,
          grant_types: ['client_credentials'],
          response_types: [],
          redirect_uris: [],
        },
        {
          client_id: 'app',
          client_secret: APP_SECRET,
          grant_types: ['authorization_code', 'refresh_token'],
          response_types: ['code'],
          redirect_uris: [REDIRECT_URI],
        },
      ],
    });
    const introspect = introspector(provider.issuer, RESOURCE_SERVER_SECRET);
    resource = await startResourceServer(async (token) => {
      const info = await introspect(token);
      return { active: info.active, subject: info.sub ?? info.client_id };
    });
  }, 30_000);

  afterAll(async () => {
    await resource?.stop();
    await provider?.stop();
  });

  const tokenCalls = () => provider.tokenCalls();

  describe('client_credentials, with oauth2ClientCredentials()', () => {
    function serviceAccount(clientSecret = SERVICE_SECRET) {
      const clock = manualClock();
      const api = axios.create({ baseURL: resource.url });
      const auth = attachTokenAuth(api, {
        authBaseURL: provider.issuer,
        ...oauth2ClientCredentials({ tokenPath: '/token', clientId: 'svc', clientSecret }),
        clock: clock.now,
      });
      return { api, auth, clock };
    }

    it('first use: eight concurrent requests make one client_credentials call, and the API accepts all eight', async () => {
      const { api, auth } = serviceAccount();
      const from = (await tokenCalls()).length;
      const accepted = resource.counts.accepted;

      const results = await burst(8, (index) => api.get<{ subject: string }>(`/orders/${index}`));

      expect(fulfilled(results)).toBe(8);
      expect(since(await tokenCalls(), from)).toEqual([
        { grantType: 'client_credentials', refreshToken: null, clientId: 'svc', status: 200, error: null },
      ]);
      expect(resource.counts.accepted - accepted).toBe(8);
      expect(subjects(results)).toEqual(Array(8).fill('svc'));
      expect(auth.stats()).toMatchObject({ logins: 1, refreshes: 0, replays: 0, failures: 0 });
    });

    it('expiry (expires_in passed on the plugin clock): ten concurrent requests make one more call, none is refused', async () => {
      const { api, auth, clock } = serviceAccount();
      await api.get('/prime');
      const first = (await auth.getTokens())!.access;
      const from = (await tokenCalls()).length;
      const { accepted, refused } = resource.counts;
      const seenFrom = resource.seen.length;

      clock.advance(600_000);
      const results = await burst(10, (index) => api.get(`/orders/${index}`));

      expect(fulfilled(results)).toBe(10);
      expect(since(await tokenCalls(), from)).toEqual([
        { grantType: 'client_credentials', refreshToken: null, clientId: 'svc', status: 200, error: null },
      ]);
      expect(resource.counts.accepted - accepted).toBe(10);
      expect(resource.counts.refused - refused).toBe(0);
      // All ten carried the one new token.
      const carried = new Set(resource.seen.slice(seenFrom).map((entry) => entry.token));
      expect(carried).toEqual(new Set([(await auth.getTokens())!.access]));
      expect(carried.has(first)).toBe(false);
      expect(auth.stats()).toMatchObject({ logins: 2, refreshes: 0, replays: 0, failures: 0 });
    });

    it('the provider revokes the token: ten requests are refused once, one call, ten replays accepted', async () => {
      const { api, auth } = serviceAccount();
      await api.get('/prime');
      const revoked = (await auth.getTokens())!.access;
      await revokeToken(provider.issuer, { clientId: 'svc', clientSecret: SERVICE_SECRET }, revoked, 'access_token');
      const from = (await tokenCalls()).length;
      const { accepted, refused } = resource.counts;

      const results = await burst(10, (index) => api.post('/orders', { index }));

      expect(fulfilled(results)).toBe(10);
      expect(since(await tokenCalls(), from)).toEqual([
        { grantType: 'client_credentials', refreshToken: null, clientId: 'svc', status: 200, error: null },
      ]);
      expect(resource.counts.refused - refused).toBe(10);
      expect(resource.counts.accepted - accepted).toBe(10);
      // Each replay sent its body as it was, not serialised twice.
      const bodies = results.map(
        (result) => result.status === 'fulfilled' && (result.value.data as { body: string }).body,
      );
      expect(bodies.sort()).toEqual(Array.from({ length: 10 }, (_, index) => JSON.stringify({ index })).sort());
      expect(auth.stats()).toMatchObject({ logins: 2, refreshes: 0, replays: 10, failures: 0 });
    });

    it('a wrong client secret holding `:`, a space and `+`: LOGIN_REJECTED (401 invalid_client) after one call, and the secret in no spelling in any error or event', async () => {
      const wrong = 'not:the svc+secret-5d1e93';
      const { api, auth } = serviceAccount(wrong);
      const recorded = recordEvents(auth);
      const from = (await tokenCalls()).length;

      const errors = reasons(await burst(5, (index) => api.get(`/orders/${index}`)));
      // Within the cooldown a further request fails the same way without a call.
      const later = reasons(await burst(1, () => api.get('/orders/later')));

      for (const error of [...errors, ...later]) {
        expect(isTokenAuthError(error)).toBe(true);
        expect(error).toMatchObject({ code: 'LOGIN_REJECTED', status: 401 });
      }
      expect(since(await tokenCalls(), from)).toEqual([
        { grantType: 'client_credentials', refreshToken: null, clientId: 'svc', status: 401, error: 'invalid_client' },
      ]);
      expect(auth.stats()).toMatchObject({ logins: 0, failures: 1 });
      // The service's reason reaches the caller in the answer the cause keeps.
      expect(answerOf(errors[0])).toMatchObject({ error: 'invalid_client' });
      expectNoLeaks({ errors, later, recorded }, [
        ...everySpelling('wrong client secret', 'svc', wrong),
        ...secretAndBasic('client secret', 'svc', SERVICE_SECRET),
      ]);
    });
  });

  describe("a user's authorization-code sign-in handed over with setTokens(); refresh_token grants that rotate", () => {
    /**
     * The app after its sign-in page: the pair comes from the authorization code flow, so the plugin has no
     * credentials and renews only through the refresh token, with the preset's token call (the refresh_token grant
     * with client_secret_basic is the same for every OAuth2 grant; its password login never runs without credentials).
     */
    async function signedInApp() {
      const signedIn = await signIn(
        provider.issuer,
        { clientId: 'app', clientSecret: APP_SECRET, redirectUri: REDIRECT_URI },
        'ada',
      );
      const clock = manualClock();
      const api = axios.create({ baseURL: resource.url });
      const auth = attachTokenAuth(api, {
        authBaseURL: provider.issuer,
        ...oauth2Password({ tokenPath: '/token', clientId: 'app', clientSecret: APP_SECRET }),
        clock: clock.now,
      });
      await auth.setTokens({
        access: signedIn.access_token,
        refresh: signedIn.refresh_token,
        expiresIn: signedIn.expires_in,
      });
      return { api, auth, clock, signedIn };
    }

    it('three expiries: three refresh_token calls, each with the refresh token the one before issued, none sent twice', async () => {
      const { api, auth, clock, signedIn } = await signedInApp();
      const recorded = recordEvents(auth);
      const from = (await tokenCalls()).length;
      expect(signedIn.refresh_token).toEqual(expect.any(String));

      expect(fulfilled(await burst(4, (index) => api.get(`/me/${index}`)))).toBe(4);
      expect(since(await tokenCalls(), from)).toEqual([]);

      const expected: string[] = [signedIn.refresh_token!];
      for (let round = 1; round <= 3; round += 1) {
        clock.advance(signedIn.expires_in * 1000);
        const results = await burst(6, (index) => api.get<{ subject: string }>(`/me/${round}/${index}`));
        expect(fulfilled(results)).toBe(6);
        expect(subjects(results)).toEqual(Array(6).fill('ada'));
        expected.push((await auth.getTokens())!.refresh!);
      }

      const calls = since(await tokenCalls(), from);
      expect(calls).toEqual(
        expected.slice(0, 3).map((refreshToken) => ({
          grantType: 'refresh_token',
          refreshToken,
          clientId: 'app',
          status: 200,
          error: null,
        })),
      );
      expect(new Set(expected).size).toBe(4);
      expect(auth.stats()).toMatchObject({ logins: 0, refreshes: 3, replays: 0, failures: 0 });
      expect(recorded.filter((entry) => entry.event === 'refresh').map((entry) => entry.payload)).toEqual(
        Array(3).fill(expect.objectContaining({ reason: 'expired', rotated: true })),
      );

      // The provider does spend them: the first one, sent again, is refused (and ends the user's grant).
      const reuse = await axios.post(
        `${provider.issuer}/token`,
        new URLSearchParams({ grant_type: 'refresh_token', refresh_token: expected[0]! }),
        { auth: { username: 'app', password: APP_SECRET }, validateStatus: () => true },
      );
      expect(reuse.status).toBe(400);
      expect(reuse.data).toMatchObject({ error: 'invalid_grant' });
    });

    it('the session revoked at the provider: five refused requests, one refused refresh_token call, NO_CREDENTIALS', async () => {
      const { api, auth } = await signedInApp();
      await api.get('/me');
      const { refresh } = (await auth.getTokens())!;
      // Revoking the refresh token ends the whole grant: its access token is refused too.
      await revokeToken(provider.issuer, { clientId: 'app', clientSecret: APP_SECRET }, refresh!, 'refresh_token');
      const from = (await tokenCalls()).length;
      const { accepted, refused } = resource.counts;

      const errors = reasons(await burst(5, (index) => api.get(`/me/${index}`)));

      for (const error of errors) expect(error).toMatchObject({ name: 'TokenAuthError', code: 'NO_CREDENTIALS' });
      expect(since(await tokenCalls(), from)).toEqual([
        { grantType: 'refresh_token', refreshToken: refresh, clientId: 'app', status: 400, error: 'invalid_grant' },
      ]);
      expect(resource.counts.refused - refused).toBe(5);
      expect(resource.counts.accepted - accepted).toBe(0);
      expect(auth.stats()).toMatchObject({ logins: 0, refreshes: 0 });
      expect(await auth.getTokens()).toBeNull();
      expectNoLeaks(errors, secretAndBasic('client secret', 'app', APP_SECRET));
    });
  });
});

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
