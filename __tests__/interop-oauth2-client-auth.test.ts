// Client assertions (RFC 7523, issue 44) against panva's oidc-provider 9 over real HTTP on loopback, each client
// registered for the one method it must use: private_key_jwt (RS256 with a PEM, ES256 with a JWK, ES256 with a
// CryptoKey beside DPoP) and client_secret_jwt. The provider records how each token call presented its client and its
// assertion's jti, keeps each assertion whole, and refuses one whose jti it has seen; the APIs trust no token without
// asking it (introspection). Counts are exact: one token call per renewal, and a jti never sent twice, retries
// included. Mutual TLS: interop-oauth2-mtls.test.ts; revocation on logout: interop-oauth2-revocation.test.ts.
//
// The plugin's clock may sign the assertions' iat and exp, so it starts at the real time: oidc-provider refuses an exp
// in its past, and takes an iat ahead of its clock while the exp is ahead too (it checks iat only in an assertion
// without exp). The access tokens live 60 s, so that the DPoP proofs signed after an expiry on that clock are within
// the provider's and the API's window (300 s either way).
import { generateKeyPair, webcrypto } from 'node:crypto';
import type { KeyObject } from 'node:crypto';
import { promisify } from 'node:util';
import axios from 'axios';
import { attachTokenAuth, isTokenAuthError } from 'axios-token-keeper';
import { oauth2ClientCredentials } from 'axios-token-keeper/presets';
import { clientSecretJwt, privateKeyJwt } from 'axios-token-keeper/client-auth';
import { assertionForm, clientAssertion } from '../harness/oauth2/assertion.js';
import type { AssertionSigner } from '../harness/oauth2/assertion.js';
import { startDpopResourceServer } from '../harness/oauth2/dpop-resource.js';
import type { DpopResourceServer } from '../harness/oauth2/dpop-resource.js';
import { introspector, startOidcProvider } from '../harness/oauth2/oidc.js';
import type { Introspection, OidcProvider } from '../harness/oauth2/oidc.js';
import { startResourceServer } from '../harness/oauth2/resource.js';
import type { ResourceServer } from '../harness/oauth2/resource.js';
import {
  assertionsOf,
  clientCredentialsCall,
  expectAssertionOf,
  expectEachJtiOnce,
  pemOf,
  publicJwk,
  serviceClient,
} from './helpers/client-auth.js';
import { burst, fulfilled, manualClock } from './helpers/flow.js';
import { answerOf, privateKeySecrets, since, subjects } from './helpers/oauth2.js';
import { expectNoLeaks, recordEvents, spellingsOf } from './helpers/scan-secrets.js';
import { reasons } from './helpers/settled.js';

const CSJWT_SECRET = 'csjwt-secret-8e1f4a7c2d9b5e30a6c4f1d8';
const RESOURCE_SERVER_SECRET = 'rs-secret-2b7e9d4f1a63';
const TTL_SEC = 60;

const newKeyPair = promisify(generateKeyPair);

describe('client assertions against oidc-provider 9: private_key_jwt and client_secret_jwt, each client registered for one', () => {
  let provider: OidcProvider;
  let resource: ResourceServer;
  let dpopResource: DpopResourceServer;
  let introspect: (token: string) => Promise<Introspection>;
  /** The keys of the private_key_jwt clients: RSA, EC, and an RSA key no client registered. */
  let rsa: KeyObject;
  let ec: KeyObject;
  let unregistered: KeyObject;
  /** The DPoP client's key, a non-extractable CryptoKey, as an app that keeps its key in WebCrypto holds it. */
  let dpopClientKey: CryptoKey;

  beforeAll(async () => {
    const [rsaPair, ecPair, unregisteredPair, dpopPair] = await Promise.all([
      newKeyPair('rsa', { modulusLength: 2048 }),
      newKeyPair('ec', { namedCurve: 'P-256' }),
      newKeyPair('rsa', { modulusLength: 2048 }),
      webcrypto.subtle.generateKey({ name: 'ECDSA', namedCurve: 'P-256' }, false, ['sign', 'verify']),
    ]);
    [rsa, ec, unregistered] = [rsaPair.privateKey, ecPair.privateKey, unregisteredPair.privateKey];
    dpopClientKey = dpopPair.privateKey;
    const { kty, crv, x, y } = await webcrypto.subtle.exportKey('jwk', dpopPair.publicKey);

    const rs256 = { token_endpoint_auth_method: 'private_key_jwt', token_endpoint_auth_signing_alg: 'RS256' } as const;
    const rsaKeys = { keys: [publicJwk(rsaPair.publicKey, 'rs-1', 'RS256')] };
    provider = await startOidcProvider({
      resourceServerSecret: RESOURCE_SERVER_SECRET,
      accessTokenTtlSec: TTL_SEC,
      recordClientAuth: true,
      clients: [
        // The assertions the test signs by itself go as this client, so that the plugin's clients see only the plugin's.
        serviceClient('svc-by-hand', { ...rs256, jwks: rsaKeys }),
        serviceClient('svc-rs256', { ...rs256, jwks: rsaKeys }),
        serviceClient('svc-es256', {
          token_endpoint_auth_method: 'private_key_jwt',
          token_endpoint_auth_signing_alg: 'ES256',
          jwks: { keys: [publicJwk(ecPair.publicKey, 'ec-1', 'ES256')] },
        }),
        serviceClient('svc-csjwt', {
          client_secret: CSJWT_SECRET,
          token_endpoint_auth_method: 'client_secret_jwt',
          token_endpoint_auth_signing_alg: 'HS256',
        }),
        serviceClient('svc-dpop', {
          token_endpoint_auth_method: 'private_key_jwt',
          token_endpoint_auth_signing_alg: 'ES256',
          jwks: { keys: [{ kty, crv, x, y, kid: 'dpop-client-1', alg: 'ES256', use: 'sig' }] },
          dpop_bound_access_tokens: true,
        }),
      ],
    });
    introspect = introspector(provider.issuer, RESOURCE_SERVER_SECRET);
    resource = await startResourceServer(async (token) => {
      const info = await introspect(token);
      return { active: info.active, subject: info.sub ?? info.client_id };
    });
    dpopResource = await startDpopResourceServer({
      issuer: provider.issuer,
      resourceServerSecret: RESOURCE_SERVER_SECRET,
    });
  }, 30_000);

  afterAll(async () => {
    await dpopResource?.stop();
    await resource?.stop();
    await provider?.stop();
  });

  const tokenURL = () => `${provider.issuer}/token`;

  /** A client_credentials call made by the test, not the plugin, with these form fields. */
  function tokenCallByHand(form: Record<string, string>) {
    return axios.post<{ error?: string }>(
      tokenURL(),
      new URLSearchParams({ grant_type: 'client_credentials', ...form }),
      {
        validateStatus: () => true,
      },
    );
  }

  describe('the provider by itself, which the tests below rely on (no plugin)', () => {
    it("an assertion signed here is accepted once; sent again, oidc-provider refuses it (invalid_client): it checks every assertion's jti itself", async () => {
      const signer: AssertionSigner = { alg: 'RS256', key: rsa, kid: 'rs-1' };
      const assertion = clientAssertion(signer, { clientId: 'svc-by-hand', audience: tokenURL() });
      const from = (await provider.tokenCalls()).length;

      const first = await tokenCallByHand(assertionForm(assertion));
      const again = await tokenCallByHand(assertionForm(assertion));

      expect([first.status, again.status]).toEqual([200, 401]);
      expect(again.data).toMatchObject({ error: 'invalid_client' });
      const calls = since(await provider.tokenCalls(), from);
      expect(calls).toEqual([
        clientCredentialsCall('svc-by-hand', 'private_key_jwt'),
        clientCredentialsCall('svc-by-hand', 'private_key_jwt', 401, 'invalid_client'),
      ]);
      expect(calls[1]!.assertionJti).toBe(calls[0]!.assertionJti);
    });
  });

  describe('private_key_jwt, with oauth2ClientCredentials()', () => {
    function serviceAccount(clientId: string, clientAuthentication: ReturnType<typeof privateKeyJwt>) {
      const clock = manualClock(Date.now());
      const api = axios.create({ baseURL: resource.url });
      const auth = attachTokenAuth(api, {
        authBaseURL: provider.issuer,
        ...oauth2ClientCredentials({ tokenPath: '/token', clientId, clientAuthentication }),
        clock: clock.now,
      });
      return { api, auth, clock };
    }

    it.each([
      [
        'RS256, the key a PKCS#8 PEM',
        'svc-rs256',
        () => rsa,
        () => privateKeyJwt({ key: pemOf(rsa), algorithm: 'RS256', kid: 'rs-1' }),
        { alg: 'RS256', kid: 'rs-1' },
      ],
      [
        'ES256, the key a private JWK, its algorithm taken from it',
        'svc-es256',
        () => ec,
        () => privateKeyJwt({ key: ec.export({ format: 'jwk' }), kid: 'ec-1' }),
        { alg: 'ES256', kid: 'ec-1' },
      ],
    ] as const)(
      '%s: first use, then an expiry and ten concurrent requests: one token call each, every assertion accepted, no jti twice, no key in any event',
      async (_name, clientId, key, method, header) => {
        const { api, auth, clock } = serviceAccount(clientId, method());
        const recorded = recordEvents(auth);
        const from = (await provider.tokenCalls()).length;
        const { accepted, refused } = resource.counts;

        await api.get('/prime');
        clock.advance(TTL_SEC * 1000);
        const results = await burst(10, (index) => api.get<{ subject: string }>(`/orders/${index}`));

        expect(fulfilled(results)).toBe(10);
        expect(subjects(results)).toEqual(Array(10).fill(clientId));
        const calls = since(await provider.tokenCalls(), from);
        expect(calls).toEqual([
          clientCredentialsCall(clientId, 'private_key_jwt'),
          clientCredentialsCall(clientId, 'private_key_jwt'),
        ]);
        expectEachJtiOnce(calls);
        for (const assertion of await assertionsOf(provider, calls))
          expectAssertionOf(assertion, { clientId, tokenURL: tokenURL() }, header);
        expect(resource.counts.accepted - accepted).toBe(11);
        expect(resource.counts.refused - refused).toBe(0);
        expect(auth.stats()).toMatchObject({ logins: 2, refreshes: 0, replays: 0, failures: 0 });
        expectNoLeaks(recorded, privateKeySecrets('client key', key()));
      },
    );

    it('a token call answered 503 is tried again with a new assertion: two calls reach the provider, two jtis, the second accepted', async () => {
      const { api, auth, clock } = serviceAccount(
        'svc-rs256',
        privateKeyJwt({ key: pemOf(rsa), algorithm: 'RS256', kid: 'rs-1' }),
      );
      await api.get('/prime');
      const from = (await provider.tokenCalls()).length;
      await provider.failNextTokenCalls(1);

      clock.advance(TTL_SEC * 1000);
      const results = await burst(10, (index) => api.get(`/orders/${index}`));

      expect(fulfilled(results)).toBe(10);
      const calls = since(await provider.tokenCalls(), from);
      expect(calls).toEqual([
        clientCredentialsCall('svc-rs256', 'private_key_jwt', 503, 'temporarily_unavailable'),
        clientCredentialsCall('svc-rs256', 'private_key_jwt'),
      ]);
      // The provider never saw the first assertion, so a retry that sent it again would be accepted: only its jti
      // tells it apart.
      expectEachJtiOnce(calls);
      expect(auth.stats()).toMatchObject({ logins: 2, failures: 0 });
    });

    it("an assertion the plugin sent, sent again by the test, is refused by the provider (invalid_client); the plugin's next renewal is accepted", async () => {
      const { api, clock } = serviceAccount(
        'svc-es256',
        privateKeyJwt({ key: ec.export({ format: 'jwk' }), kid: 'ec-1' }),
      );
      await api.get('/prime');
      const [sent] = await assertionsOf(provider, (await provider.tokenCalls()).slice(-1));
      expect(sent!.claims).toMatchObject({ sub: 'svc-es256' });
      const from = (await provider.tokenCalls()).length;

      const replayed = await tokenCallByHand(assertionForm(sent!.jwt));
      clock.advance(TTL_SEC * 1000);
      const after = await api.get('/after');

      expect(replayed.status).toBe(401);
      expect(replayed.data).toMatchObject({ error: 'invalid_client' });
      expect(after.status).toBe(200);
      const calls = since(await provider.tokenCalls(), from);
      expect(calls).toEqual([
        clientCredentialsCall('svc-es256', 'private_key_jwt', 401, 'invalid_client'),
        clientCredentialsCall('svc-es256', 'private_key_jwt'),
      ]);
      expect(calls[0]!.assertionJti).toBe(sent!.claims!.jti);
      expect(calls[1]!.assertionJti).not.toBe(sent!.claims!.jti);
    });

    it('a key the client did not register: LOGIN_REJECTED (401 invalid_client) after one call, and no member of either key, nor the assertion, in any error or event', async () => {
      const { api, auth } = serviceAccount(
        'svc-rs256',
        privateKeyJwt({ key: pemOf(unregistered), algorithm: 'RS256', kid: 'rs-1' }),
      );
      const recorded = recordEvents(auth);
      const from = (await provider.tokenCalls()).length;

      const errors = reasons(await burst(5, (index) => api.get(`/orders/${index}`)));

      for (const error of errors) {
        expect(isTokenAuthError(error)).toBe(true);
        expect(error).toMatchObject({ code: 'LOGIN_REJECTED', status: 401 });
      }
      const calls = since(await provider.tokenCalls(), from);
      expect(calls).toEqual([clientCredentialsCall('svc-rs256', 'private_key_jwt', 401, 'invalid_client')]);
      expect(answerOf(errors[0])).toMatchObject({ error: 'invalid_client' });
      expect(auth.stats()).toMatchObject({ logins: 0, failures: 1 });
      const [sent] = await assertionsOf(provider, calls);
      expectNoLeaks({ errors, recorded }, [
        ...privateKeySecrets('unregistered key', unregistered),
        ...privateKeySecrets('registered key', rsa),
        ...spellingsOf('the assertion sent', sent!.jwt),
      ]);
    });
  });

  describe('client_secret_jwt, with oauth2ClientCredentials()', () => {
    function serviceAccount(clientSecret: string) {
      const clock = manualClock(Date.now());
      const api = axios.create({ baseURL: resource.url });
      const auth = attachTokenAuth(api, {
        authBaseURL: provider.issuer,
        ...oauth2ClientCredentials({
          tokenPath: '/token',
          clientId: 'svc-csjwt',
          clientSecret,
          clientAuthentication: clientSecretJwt(),
        }),
        clock: clock.now,
      });
      return { api, auth, clock };
    }

    it('first use, then an expiry and ten concurrent requests: one token call each, HS256 assertions accepted, no jti twice, the secret in no event', async () => {
      const { api, auth, clock } = serviceAccount(CSJWT_SECRET);
      const recorded = recordEvents(auth);
      const from = (await provider.tokenCalls()).length;

      await api.get('/prime');
      clock.advance(TTL_SEC * 1000);
      const results = await burst(10, (index) => api.get<{ subject: string }>(`/orders/${index}`));

      expect(fulfilled(results)).toBe(10);
      expect(subjects(results)).toEqual(Array(10).fill('svc-csjwt'));
      const calls = since(await provider.tokenCalls(), from);
      expect(calls).toEqual([
        clientCredentialsCall('svc-csjwt', 'client_secret_jwt'),
        clientCredentialsCall('svc-csjwt', 'client_secret_jwt'),
      ]);
      expectEachJtiOnce(calls);
      for (const assertion of await assertionsOf(provider, calls))
        expectAssertionOf(assertion, { clientId: 'svc-csjwt', tokenURL: tokenURL() }, { alg: 'HS256' });
      expect(auth.stats()).toMatchObject({ logins: 2, refreshes: 0, failures: 0 });
      expectNoLeaks(recorded, spellingsOf('client secret', CSJWT_SECRET));
    });

    it('a wrong secret: LOGIN_REJECTED (401 invalid_client) after one call, and neither secret in any error or event', async () => {
      const wrong = 'csjwt-wrong:secret+4d9a1c7e2b8f6a30d5';
      const { api, auth } = serviceAccount(wrong);
      const recorded = recordEvents(auth);
      const from = (await provider.tokenCalls()).length;

      const errors = reasons(await burst(3, (index) => api.get(`/orders/${index}`)));

      for (const error of errors) expect(error).toMatchObject({ name: 'TokenAuthError', code: 'LOGIN_REJECTED' });
      expect(since(await provider.tokenCalls(), from)).toEqual([
        clientCredentialsCall('svc-csjwt', 'client_secret_jwt', 401, 'invalid_client'),
      ]);
      expectNoLeaks({ errors, recorded }, [
        ...spellingsOf('wrong client secret', wrong),
        ...spellingsOf('client secret', CSJWT_SECRET),
      ]);
    });
  });

  describe('DPoP and private_key_jwt together, the key a CryptoKey', () => {
    it('first use, then an expiry and ten concurrent requests: one token call each, proved and asserted; the token bound to the DPoP key, every request accepted', async () => {
      const clock = manualClock(Date.now());
      const api = axios.create({ baseURL: dpopResource.url });
      const auth = attachTokenAuth(api, {
        authBaseURL: provider.issuer,
        ...oauth2ClientCredentials({
          tokenPath: '/token',
          clientId: 'svc-dpop',
          clientAuthentication: privateKeyJwt({ key: dpopClientKey, kid: 'dpop-client-1' }),
        }),
        dpop: true,
        clock: clock.now,
      });
      const from = (await provider.tokenCalls()).length;
      const before = await dpopResource.counts();

      // The API's nonce is new to the plugin: the first request is challenged once, then accepted.
      await api.get('/prime');
      const primed = await dpopResource.counts();
      clock.advance(TTL_SEC * 1000);
      const results = await burst(10, (index) => api.get<{ subject: string }>(`/orders/${index}`));

      expect(fulfilled(results)).toBe(10);
      expect(subjects(results)).toEqual(Array(10).fill('svc-dpop'));
      // The client registered dpop_bound_access_tokens: a call without a proof would have been refused.
      const calls = since(await provider.tokenCalls(), from);
      expect(calls).toEqual([
        clientCredentialsCall('svc-dpop', 'private_key_jwt'),
        clientCredentialsCall('svc-dpop', 'private_key_jwt'),
      ]);
      expectEachJtiOnce(calls);
      for (const assertion of await assertionsOf(provider, calls))
        expectAssertionOf(
          assertion,
          { clientId: 'svc-dpop', tokenURL: tokenURL() },
          { alg: 'ES256', kid: 'dpop-client-1' },
        );
      const { access, dpopKey } = (await auth.getTokens())!;
      expect(await introspect(access)).toMatchObject({
        active: true,
        token_type: 'DPoP',
        cnf: { jkt: dpopKey!.thumbprint },
      });
      const after = await dpopResource.counts();
      expect([primed.accepted - before.accepted, after.accepted - primed.accepted]).toEqual([1, 10]);
      expect((primed.refused.use_dpop_nonce ?? 0) - (before.refused.use_dpop_nonce ?? 0)).toBe(1);
      expect(after.refused).toEqual(primed.refused);
      expect(auth.stats()).toMatchObject({ logins: 2, refreshes: 0, failures: 0 });
    });
  });
});
