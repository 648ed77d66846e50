// The plugin's `dpop` option against a real server (issue 40): panva's oidc-provider with DPoP nonces required, and a
// resource server that verifies each proof with jose and the token's key binding by introspection. The presets as a
// user writes them, with `dpop` beside them: client_credentials, and a user's DPoP-bound sign-in handed over with
// setTokens and its key, then refresh tokens that rotate. Counts are exact: one accepted token call per renewal, and
// one nonce challenge per server that has not given the plugin its nonce yet.
//
// The plugin's clock signs the proofs' `iat`, so the clock here starts at the real time, and the scenarios move it by
// less than the resource server's window (300 s either way): the access tokens live 60 s.
import axios from 'axios';
import { attachTokenAuth } from 'axios-token-keeper';
import { oauth2ClientCredentials, oauth2Password } from 'axios-token-keeper/presets';
import { createDpopKey } from '../lib/dpop/index.js';
import { signInDpop } from '../harness/oauth2/dpop-prover.js';
import { countsSince, startDpopResourceServer } from '../harness/oauth2/dpop-resource.js';
import type { DpopResourceCounts, DpopResourceServer } from '../harness/oauth2/dpop-resource.js';
import { signIn, startOidcProvider } from '../harness/oauth2/oidc.js';
import type { OidcProvider } from '../harness/oauth2/oidc.js';
import { burst, fulfilled, manualClock } from './helpers/flow.js';
import { since, subjects } from './helpers/oauth2.js';

const SERVICE_SECRET = 'svc-secret-5e0b8c2d7a49';
const APP_SECRET = 'app-secret-3a7f9d1b6e08';
const RESOURCE_SERVER_SECRET = 'rs-secret-9c4e1a8b2f57';
const REDIRECT_URI = 'http://127.0.0.1/callback';
const TTL_SEC = 60;

describe("the plugin's dpop option against oidc-provider 9 (nonces required) and a resource server on jose", () => {
  let provider: OidcProvider;
  let resource: DpopResourceServer;

  beforeAll(async () => {
    provider = await startOidcProvider({
      resourceServerSecret: RESOURCE_SERVER_SECRET,
      accessTokenTtlSec: TTL_SEC,
      dpop: { requireNonce: true },
      clients: [
        {
          client_id: 'svc',
          client_secret: SERVICE_SECRET,
          grant_types: ['client_credentials'],
          response_types: [],
          redirect_uris: [],
          dpop_bound_access_tokens: true,
        },
        {
          client_id: 'app',
          client_secret: APP_SECRET,
          grant_types: ['authorization_code', 'refresh_token'],
          response_types: ['code'],
          redirect_uris: [REDIRECT_URI],
          dpop_bound_access_tokens: true,
        },
      ],
    });
    resource = await startDpopResourceServer({ issuer: provider.issuer, resourceServerSecret: RESOURCE_SERVER_SECRET });
  }, 30_000);

  afterAll(async () => {
    await resource?.stop();
    await provider?.stop();
  });

  /** What the resource server saw since `before`: its counts, and the requests it accepted. */
  async function resourceSince(before: { counts: DpopResourceCounts; requests: number }) {
    const requests = (await resource.requests()).slice(before.requests);
    return { counts: countsSince(before.counts, await resource.counts()), accepted: requests.filter((r) => !r.reason) };
  }

  const resourceNow = async () => ({ counts: await resource.counts(), requests: (await resource.requests()).length });

  /**
   * The only refusals the resource server may make: nonce challenges, at most one per request (a request sent before
   * the plugin knew the nonce is challenged once, then accepted). How many of a burst went before the first challenge
   * came back is the scheduler's, so the count is bounded, not exact.
   */
  function expectOnlyNonceChallenges(counts: DpopResourceCounts, requests: number): void {
    expect(Object.keys(counts.refused)).toEqual(['use_dpop_nonce']);
    expect(counts.refused.use_dpop_nonce).toBeGreaterThanOrEqual(1);
    expect(counts.refused.use_dpop_nonce).toBeLessThanOrEqual(requests);
  }

  describe('client_credentials, with oauth2ClientCredentials() and dpop', () => {
    function serviceAccount(dpop: true | { algorithm: 'ES256' | 'EdDSA' }) {
      const clock = manualClock(Date.now());
      const api = axios.create({ baseURL: resource.url });
      const auth = attachTokenAuth(api, {
        authBaseURL: provider.issuer,
        ...oauth2ClientCredentials({ tokenPath: '/token', clientId: 'svc', clientSecret: SERVICE_SECRET }),
        dpop,
        clock: clock.now,
      });
      return { api, auth, clock };
    }

    it.each([
      ['dpop: true', true, 'ES256'],
      ["dpop: { algorithm: 'EdDSA' }", { algorithm: 'EdDSA' }, 'EdDSA'],
    ] as const)(
      'first use (%s): eight concurrent requests, one accepted client_credentials call after one nonce challenge, all eight accepted',
      async (_name, dpop, alg) => {
        const { api, auth } = serviceAccount(dpop);
        const from = (await provider.tokenCalls()).length;
        const before = await resourceNow();

        const results = await burst(8, (index) => api.get<{ subject: string }>(`/orders/${index}`));

        expect(fulfilled(results)).toBe(8);
        expect(subjects(results)).toEqual(Array(8).fill('svc'));
        const jkt = (await auth.getTokens())?.dpopKey?.thumbprint;
        expect(jkt).toEqual(expect.any(String));
        const call = {
          grantType: 'client_credentials',
          refreshToken: null,
          clientId: 'svc',
          dpopProof: true,
          dpopJkt: jkt,
        };
        expect(since(await provider.tokenCalls(), from)).toEqual([
          { ...call, status: 400, error: 'use_dpop_nonce' },
          { ...call, status: 200, error: null },
        ]);
        const seen = await resourceSince(before);
        expect(seen.counts.accepted).toBe(8);
        expectOnlyNonceChallenges(seen.counts, 8);
        expect(seen.accepted.map((request) => [request.jkt, request.alg])).toEqual(Array(8).fill([jkt, alg]));
        expect(auth.stats()).toMatchObject({ logins: 1, refreshes: 0, replays: 0, failures: 0 });
      },
    );

    it('the resource server rotates its nonce: five concurrent requests are challenged and accepted, no token call', async () => {
      const { api, auth } = serviceAccount(true);
      await api.get('/prime');
      const from = (await provider.tokenCalls()).length;
      await resource.rotateNonce();
      const before = await resourceNow();

      const results = await burst(5, (index) => api.post('/orders', { index }));

      expect(fulfilled(results)).toBe(5);
      expect(since(await provider.tokenCalls(), from)).toEqual([]);
      const seen = await resourceSince(before);
      expect(seen.counts.accepted).toBe(5);
      expectOnlyNonceChallenges(seen.counts, 5);
      // Each request that went again with the nonce sent its body as it was, not serialised twice.
      const bodies = results.map(
        (result) => result.status === 'fulfilled' && (result.value.data as { body: string }).body,
      );
      expect(bodies.sort()).toEqual(Array.from({ length: 5 }, (_, index) => JSON.stringify({ index })).sort());
      expect(auth.stats()).toMatchObject({ logins: 1, refreshes: 0, replays: 0, failures: 0 });
    });
  });

  describe("a user's DPoP-bound sign-in handed over with setTokens() and its key; refresh_token grants that rotate", () => {
    it('three expiries with ten concurrent requests each: three accepted refresh_token calls in a chain, one nonce challenge, every request accepted', async () => {
      const key = await createDpopKey();
      const signedIn = await signIn(
        provider.issuer,
        { clientId: 'app', clientSecret: APP_SECRET, redirectUri: REDIRECT_URI },
        'ada',
        signInDpop(key),
      );
      expect([signedIn.token_type, typeof signedIn.refresh_token, signedIn.expires_in]).toEqual([
        'DPoP',
        'string',
        TTL_SEC,
      ]);
      const clock = manualClock(Date.now());
      const api = axios.create({ baseURL: resource.url });
      const auth = attachTokenAuth(api, {
        authBaseURL: provider.issuer,
        ...oauth2Password({ tokenPath: '/token', clientId: 'app', clientSecret: APP_SECRET }),
        dpop: true,
        clock: clock.now,
      });
      await auth.setTokens({
        access: signedIn.access_token,
        refresh: signedIn.refresh_token,
        expiresAt: clock.now() + signedIn.expires_in * 1000,
        dpopKey: key,
      });
      const from = (await provider.tokenCalls()).length;
      const before = await resourceNow();

      expect(fulfilled(await burst(10, (index) => api.get(`/me/${index}`)))).toBe(10);
      expect(since(await provider.tokenCalls(), from)).toEqual([]);
      const expected: string[] = [signedIn.refresh_token!];
      for (let round = 1; round <= 3; round += 1) {
        clock.advance(signedIn.expires_in * 1000);
        const results = await burst(10, (index) => api.get<{ subject: string }>(`/me/${round}/${index}`));
        expect(fulfilled(results)).toBe(10);
        expect(subjects(results)).toEqual(Array(10).fill('ada'));
        expected.push((await auth.getTokens())!.refresh!);
      }

      // The provider's nonce is new to this attachment: its first refresh is challenged, before the grant is looked at.
      const call = { grantType: 'refresh_token', clientId: 'app', dpopProof: true, dpopJkt: key.thumbprint };
      expect(since(await provider.tokenCalls(), from)).toEqual([
        { ...call, refreshToken: expected[0], status: 400, error: 'use_dpop_nonce' },
        ...expected.slice(0, 3).map((refreshToken) => ({ ...call, refreshToken, status: 200, error: null })),
      ]);
      expect(new Set(expected).size).toBe(4);
      expect((await auth.getTokens())?.dpopKey?.thumbprint).toBe(key.thumbprint);
      const seen = await resourceSince(before);
      expect(seen.counts.accepted).toBe(40);
      expectOnlyNonceChallenges(seen.counts, 10);
      expect(new Set(seen.accepted.map((request) => request.jkt))).toEqual(new Set([key.thumbprint]));
      expect(auth.stats()).toMatchObject({ logins: 0, refreshes: 3, replays: 0, failures: 0 });
    });
  });
});
