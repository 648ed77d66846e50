// The DPoP harness (RFC 9449) proved before the plugin uses it: panva's oidc-provider with DPoP nonces required, and a
// resource server that verifies proofs with jose and learns each token's key binding (`cnf.jkt`) by introspection. The
// proofs are made by hand with the plugin's own parts (lib/dpop), not by the plugin. Counts are exact: each test reads
// the servers' counters before and after.
import axios from 'axios';
import { createDpopKey } from '../lib/dpop/index.js';
import type { DpopKey } from '../lib/dpop/index.js';
import { DpopProofs } from '../lib/dpop/proof.js';
import { signInDpop } from '../harness/oauth2/dpop-prover.js';
import { countsSince, startDpopResourceServer } from '../harness/oauth2/dpop-resource.js';
import type { DpopResourceServer } from '../harness/oauth2/dpop-resource.js';
import { introspector, signIn, startOidcProvider } from '../harness/oauth2/oidc.js';
import type { OidcProvider, TokenAnswer } from '../harness/oauth2/oidc.js';
import { since } from './helpers/oauth2.js';

const SERVICE_SECRET = 'svc-secret-2b9e7d4c60a1';
const APP_SECRET = 'app-secret-8f1c3a5e97d2';
const RESOURCE_SERVER_SECRET = 'rs-secret-6d2a9f0c4e71';
const REDIRECT_URI = 'http://127.0.0.1/callback';
const APP = { clientId: 'app', clientSecret: APP_SECRET, redirectUri: REDIRECT_URI };

/** What a hand-made proof is for, where it differs from a good one. */
interface ProofOf {
  signer?: DpopKey;
  path?: string;
  method?: string;
  accessToken?: string;
}

describe('the DPoP harness: oidc-provider 9 with nonces required, and a resource server on jose', () => {
  let provider: OidcProvider;
  let resource: DpopResourceServer;
  let introspect: ReturnType<typeof introspector>;

  beforeAll(async () => {
    provider = await startOidcProvider({
      resourceServerSecret: RESOURCE_SERVER_SECRET,
      dpop: { requireNonce: true },
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
    resource = await startDpopResourceServer({ issuer: provider.issuer, resourceServerSecret: RESOURCE_SERVER_SECRET });
    introspect = introspector(provider.issuer, RESOURCE_SERVER_SECRET);
  }, 30_000);

  afterAll(async () => {
    await resource?.stop();
    await provider?.stop();
  });

  const tokenURL = () => `${provider.issuer}/token`;

  /** A call of the token endpoint by hand, as client `svc` or `app`, with `proof` in its `DPoP` header. */
  function tokenCall(form: Record<string, string>, proof?: string, client = 'svc') {
    return axios.post<TokenAnswer & { error?: string }>(tokenURL(), new URLSearchParams(form), {
      auth: { username: client, password: client === 'svc' ? SERVICE_SECRET : APP_SECRET },
      headers: proof === undefined ? {} : { DPoP: proof },
      validateStatus: () => true,
    });
  }

  /** A token call proved by `key`, and proved once more with the provider's nonce when it answers use_dpop_nonce. */
  async function provedCall(form: Record<string, string>, key: DpopKey, proofs: DpopProofs, client = 'svc') {
    const answer = await tokenCall(
      form,
      await proofs.proof(key, { server: 'token', method: 'POST', url: tokenURL() }),
      client,
    );
    if (!proofs.learn('token', tokenURL(), answer.headers['dpop-nonce'])) return answer;
    return tokenCall(form, await proofs.proof(key, { server: 'token', method: 'POST', url: tokenURL() }), client);
  }

  /** A DPoP-bound client_credentials token of `svc` for `key`. */
  async function boundToken(key: DpopKey): Promise<string> {
    const answer = await provedCall({ grant_type: 'client_credentials' }, key, new DpopProofs(Date.now));
    expect(answer.data.token_type).toBe('DPoP');
    return answer.data.access_token;
  }

  describe('the provider', () => {
    it('client_credentials with a proof: 400 use_dpop_nonce with a DPoP-Nonce, then with the nonce a token bound to the key', async () => {
      const key = await createDpopKey();
      const proofs = new DpopProofs(Date.now);
      const from = (await provider.tokenCalls()).length;

      const challenged = await tokenCall(
        { grant_type: 'client_credentials' },
        await proofs.proof(key, { server: 'token', method: 'POST', url: tokenURL() }),
      );
      expect(challenged.status).toBe(400);
      expect(challenged.data).toMatchObject({ error: 'use_dpop_nonce' });
      expect(proofs.learn('token', tokenURL(), challenged.headers['dpop-nonce'])).toBe(true);
      const answer = await tokenCall(
        { grant_type: 'client_credentials' },
        await proofs.proof(key, { server: 'token', method: 'POST', url: tokenURL() }),
      );

      expect(answer.status).toBe(200);
      expect([answer.data.token_type, typeof answer.data.access_token]).toEqual(['DPoP', 'string']);
      const call = { grantType: 'client_credentials', refreshToken: null, clientId: 'svc', dpopProof: true };
      expect(since(await provider.tokenCalls(), from)).toEqual([
        { ...call, status: 400, error: 'use_dpop_nonce', dpopJkt: key.thumbprint },
        { ...call, status: 200, error: null, dpopJkt: key.thumbprint },
      ]);
      expect(await introspect(answer.data.access_token)).toMatchObject({
        active: true,
        client_id: 'svc',
        token_type: 'DPoP',
        cnf: { jkt: key.thumbprint },
      });
    });

    it('a proof sent twice: the second call is refused (invalid_grant, replay), and no second token is issued', async () => {
      const key = await createDpopKey('EdDSA');
      const proofs = new DpopProofs(Date.now);
      // A first token, which teaches the proofs the provider's nonce.
      expect((await provedCall({ grant_type: 'client_credentials' }, key, proofs)).status).toBe(200);
      const proof = await proofs.proof(key, { server: 'token', method: 'POST', url: tokenURL() });
      const from = (await provider.tokenCalls()).length;

      const first = await tokenCall({ grant_type: 'client_credentials' }, proof);
      const again = await tokenCall({ grant_type: 'client_credentials' }, proof);

      expect(first.data.token_type).toBe('DPoP');
      // The same call a moment ago was answered 200: only the proof's jti, seen before, can refuse this one.
      expect(again.data).toMatchObject({ error: 'invalid_grant' });
      const call = { grantType: 'client_credentials', refreshToken: null, clientId: 'svc', dpopProof: true };
      expect(since(await provider.tokenCalls(), from)).toEqual([
        { ...call, status: 200, error: null, dpopJkt: key.thumbprint },
        { ...call, status: 400, error: 'invalid_grant', dpopJkt: key.thumbprint },
      ]);
    });

    it('signIn with DPoP: the code exchange is challenged once, then answers a DPoP pair bound to the key', async () => {
      const key = await createDpopKey();
      const from = (await provider.tokenCalls()).length;

      const pair = await signIn(provider.issuer, APP, 'ada', signInDpop(key));

      expect([pair.token_type, typeof pair.refresh_token]).toEqual(['DPoP', 'string']);
      const call = { grantType: 'authorization_code', refreshToken: null, clientId: 'app', dpopProof: true };
      expect(since(await provider.tokenCalls(), from)).toEqual([
        { ...call, status: 400, error: 'use_dpop_nonce', dpopJkt: key.thumbprint },
        { ...call, status: 200, error: null, dpopJkt: key.thumbprint },
      ]);
      expect(await introspect(pair.access_token)).toMatchObject({
        active: true,
        sub: 'ada',
        cnf: { jkt: key.thumbprint },
      });

      // The refresh token renews with a proof by the same key: a new access token bound to it.
      const grant = { grant_type: 'refresh_token', refresh_token: pair.refresh_token! };
      const renewed = await provedCall(grant, key, new DpopProofs(Date.now), 'app');
      expect([renewed.data.token_type, typeof renewed.data.refresh_token]).toEqual(['DPoP', 'string']);
      expect(await introspect(renewed.data.access_token)).toMatchObject({ active: true, cnf: { jkt: key.thumbprint } });
    });

    it('signIn whose code is bound (dpop_jkt) to another key than the proofs: the exchange is refused', async () => {
      const [bound, other] = [await createDpopKey(), await createDpopKey()];

      await expect(signIn(provider.issuer, APP, 'ada', signInDpop(other, { jkt: bound.thumbprint }))).rejects.toThrow(
        /code exchange answered HTTP 400.*invalid_grant/,
      );
    });
  });

  describe('the resource server', () => {
    let key: DpopKey;
    let token: string;

    beforeAll(async () => {
      key = await createDpopKey();
      token = await boundToken(key);
    });

    /** A request to the resource server with `Authorization: <scheme> <token>` and `proof` as its `DPoP` header. */
    function request(
      proof: string | undefined,
      { method = 'GET', path = '/orders/1', scheme = 'DPoP', access = token } = {},
    ) {
      return axios.request<{ subject: string; jkt: string; body: string }>({
        method,
        url: `${resource.url}${path}`,
        headers: { Authorization: `${scheme} ${access}`, ...(proof !== undefined && { DPoP: proof }) },
        data: method === 'POST' ? { index: 1 } : undefined,
        validateStatus: () => true,
      });
    }

    /** Proofs that know the resource server's current nonce. */
    async function proofsWithNonce(clock: () => number = Date.now): Promise<DpopProofs> {
      const proofs = new DpopProofs(clock);
      proofs.learn('api', resource.url, await resource.nonce());
      return proofs;
    }

    /** A proof by `proofs` for a request to the resource server: by the token's key, of GET /orders/1, by default. */
    const proofFor = (
      proofs: DpopProofs,
      { signer = key, path = '/orders/1', method = 'GET', accessToken = token }: ProofOf = {},
    ) => proofs.proof(signer, { server: 'api', method, url: `${resource.url}${path}`, accessToken });

    it('a proof without the nonce: 401 use_dpop_nonce with the nonce in DPoP-Nonce; with it, 200 for the token of the key', async () => {
      const proofs = new DpopProofs(Date.now);
      const before = await resource.counts();

      const challenged = await request(await proofFor(proofs));
      expect(challenged.status).toBe(401);
      expect(challenged.headers['www-authenticate']).toBe('DPoP error="use_dpop_nonce", algs="ES256 EdDSA"');
      expect(proofs.learn('api', resource.url, challenged.headers['dpop-nonce'])).toBe(true);
      const accepted = await request(await proofFor(proofs, { path: '/orders/2?page=1', method: 'POST' }), {
        method: 'POST',
        path: '/orders/2?page=1',
      });

      expect(accepted.status).toBe(200);
      expect(accepted.data).toEqual({
        path: '/orders/2?page=1',
        subject: 'svc',
        jkt: key.thumbprint,
        body: JSON.stringify({ index: 1 }),
      });
      expect(accepted.headers['dpop-nonce']).toBe(await resource.nonce());
      expect(countsSince(before, await resource.counts())).toEqual({ accepted: 1, refused: { use_dpop_nonce: 1 } });
    });

    it('refuses the Bearer scheme, a proof by another key, a wrong ath, and no proof: one refusal each, by its reason', async () => {
      const proofs = await proofsWithNonce();
      const before = await resource.counts();

      const bearer = await request(await proofFor(proofs), { scheme: 'Bearer' });
      const otherKey = await request(await proofFor(proofs, { signer: await createDpopKey() }));
      const wrongAth = await request(await proofFor(proofs, { accessToken: `${token}x` }));
      const noProof = await request(undefined);

      for (const answer of [bearer, otherKey, wrongAth, noProof]) {
        expect(answer.status).toBe(401);
        expect(answer.headers['dpop-nonce']).toBe(await resource.nonce());
      }
      expect(bearer.headers['www-authenticate']).toBe('DPoP error="invalid_token", algs="ES256 EdDSA"');
      expect(otherKey.headers['www-authenticate']).toBe('DPoP error="invalid_token", algs="ES256 EdDSA"');
      expect(wrongAth.headers['www-authenticate']).toBe('DPoP error="invalid_dpop_proof", algs="ES256 EdDSA"');
      expect(countsSince(before, await resource.counts())).toEqual({
        accepted: 0,
        refused: { not_dpop_scheme: 1, jkt_mismatch: 1, ath_mismatch: 1, no_proof: 1 },
      });
    });

    it('refuses a replayed proof, a proof of another method or URL, an old iat, and an unbound token', async () => {
      const proofs = await proofsWithNonce();
      const old = await proofsWithNonce(() => Date.now() - 301_000);
      const unbound = (await tokenCall({ grant_type: 'client_credentials' })).data;
      expect(unbound.token_type).toBe('Bearer');
      const before = await resource.counts();

      const proof = await proofFor(proofs);
      const statuses = [
        (await request(proof)).status,
        (await request(proof)).status,
        (await request(await proofFor(proofs, { method: 'POST' }))).status,
        (await request(await proofFor(proofs, { path: '/orders/9' }))).status,
        (await request(await proofFor(old))).status,
        (
          await request(await proofFor(proofs, { accessToken: unbound.access_token }), {
            access: unbound.access_token,
          })
        ).status,
      ];

      expect(statuses).toEqual([200, 401, 401, 401, 401, 401]);
      expect(countsSince(before, await resource.counts())).toEqual({
        accepted: 1,
        refused: { jti_replayed: 1, htm_mismatch: 1, htu_mismatch: 1, iat_not_recent: 1, unbound_token: 1 },
      });
    });

    it('a rotated nonce: a proof with the old one is challenged with the new one, which is then accepted', async () => {
      const proofs = await proofsWithNonce();
      const before = await resource.counts();
      const rotated = await resource.rotateNonce();

      const challenged = await request(await proofFor(proofs));
      expect(challenged.status).toBe(401);
      expect(challenged.headers['dpop-nonce']).toBe(rotated);
      expect(proofs.learn('api', resource.url, challenged.headers['dpop-nonce'])).toBe(true);
      expect((await request(await proofFor(proofs))).status).toBe(200);

      expect(countsSince(before, await resource.counts())).toEqual({ accepted: 1, refused: { use_dpop_nonce: 1 } });
    });
  });
});
