// The plugin against panva's oidc-provider, a real OpenID Provider nobody here wrote, over real HTTP on loopback, with
// the presets as a user writes them: client_credentials, and a user's authorization-code sign-in handed over with
// setTokens, then refresh tokens that rotate. The provider counts its own token calls; the API the requests go to
// trusts no token without asking it (introspection). Counts are exact: one token call per renewal.
import axios from 'axios';
import { attachTokenAuth, isTokenAuthError } from 'axios-token-keeper';
import { oauth2ClientCredentials, oauth2Password } from 'axios-token-keeper/presets';
import { introspector, revokeToken, signIn, startOidcProvider } from '../harness/oauth2/oidc.js';
import type { OidcProvider } from '../harness/oauth2/oidc.js';
import { startResourceServer } from '../harness/oauth2/resource.js';
import type { ResourceServer } from '../harness/oauth2/resource.js';
import { burst, fulfilled, manualClock } from './helpers/flow.js';
import { answerOf, everySpelling, secretAndBasic, since, subjects } from './helpers/oauth2.js';
import { expectNoLeaks, recordEvents } from './helpers/scan-secrets.js';
import { reasons } from './helpers/settled.js';

const SERVICE_SECRET = 'svc-secret-7f3a9c2e41b8';
const APP_SECRET = 'app-secret-0d6b5e19c7a3';
const RESOURCE_SERVER_SECRET = 'rs-secret-4c8e2a7f1d90';
const REDIRECT_URI = 'http://127.0.0.1/callback';

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
