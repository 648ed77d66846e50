// Revocation on logout (RFC 7009, issue 44) against panva's oidc-provider 9 over real HTTP on loopback: the OAuth2
// presets' revocationPath, with the client's own authentication (private_key_jwt here) on each revocation call. The
// provider records every call of its revocation endpoint; whether it did revoke is asked of it afterwards, by a
// refresh_token grant with the revoked token and by introspection. Counts are exact: one revocation call per token,
// the refresh token first.
//
// oidc-provider 9 has no password grant: the user's pair comes from its authorization-code sign-in, handed over with
// setTokens(), and oauth2Password() is the preset that renews it, as in interop-oauth2-oidc.test.ts.
import { generateKeyPair } from 'node:crypto';
import type { KeyObject } from 'node:crypto';
import { promisify } from 'node:util';
import axios from 'axios';
import { attachTokenAuth } from 'axios-token-keeper';
import { oauth2ClientCredentials, oauth2Password } from 'axios-token-keeper/presets';
import { privateKeyJwt } from 'axios-token-keeper/client-auth';
import { assertionForm, clientAssertion } from '../harness/oauth2/assertion.js';
import { introspector, signIn, startOidcProvider } from '../harness/oauth2/oidc.js';
import type { Introspection, OidcClientMetadata, OidcProvider } from '../harness/oauth2/oidc.js';
import { startResourceServer } from '../harness/oauth2/resource.js';
import type { ResourceServer } from '../harness/oauth2/resource.js';
import { expectEachJtiOnce, pemOf, publicJwk, serviceClient } from './helpers/client-auth.js';
import { manualClock } from './helpers/flow.js';
import { since } from './helpers/oauth2.js';

const RESOURCE_SERVER_SECRET = 'rs-secret-3f8c1e6a9d25';
const REDIRECT_URI = 'http://127.0.0.1/callback';
const TTL_SEC = 60;

const newKeyPair = promisify(generateKeyPair);

describe('revocation on logout against oidc-provider 9, with revocationPath and private_key_jwt', () => {
  let provider: OidcProvider;
  let resource: ResourceServer;
  let introspect: (token: string) => Promise<Introspection>;
  /** The key both clients registered. */
  let rsa: KeyObject;

  beforeAll(async () => {
    const pair = await newKeyPair('rsa', { modulusLength: 2048 });
    rsa = pair.privateKey;
    const pkjwt: Partial<OidcClientMetadata> = {
      token_endpoint_auth_method: 'private_key_jwt',
      token_endpoint_auth_signing_alg: 'RS256',
      jwks: { keys: [publicJwk(pair.publicKey, 'rs-1', 'RS256')] },
    };
    provider = await startOidcProvider({
      resourceServerSecret: RESOURCE_SERVER_SECRET,
      accessTokenTtlSec: TTL_SEC,
      recordClientAuth: true,
      clients: [
        serviceClient('svc-rs256', pkjwt),
        {
          client_id: 'app-pkjwt',
          grant_types: ['authorization_code', 'refresh_token'],
          response_types: ['code'],
          redirect_uris: [REDIRECT_URI],
          ...pkjwt,
        },
      ],
    });
    introspect = introspector(provider.issuer, RESOURCE_SERVER_SECRET);
    resource = await startResourceServer(async (token) => {
      const info = await introspect(token);
      return { active: info.active, subject: info.sub ?? info.client_id };
    });
  }, 30_000);

  afterAll(async () => {
    await resource?.stop();
    await provider?.stop();
  });

  const tokenURL = () => `${provider.issuer}/token`;

  /** A new assertion of `clientId`, signed by the test, for the calls it makes by itself. */
  const byHand = (clientId: string) => () =>
    clientAssertion({ alg: 'RS256', key: rsa, kid: 'rs-1' }, { clientId, audience: tokenURL() });

  it("a user's sign-in handed over with setTokens() (oauth2Password): logout revokes the refresh token, then the access token, one call each; a refresh with the revoked token is then invalid_grant", async () => {
    const signedIn = await signIn(
      provider.issuer,
      { clientId: 'app-pkjwt', redirectUri: REDIRECT_URI, assertion: byHand('app-pkjwt') },
      'ada',
    );
    const clock = manualClock(Date.now());
    const api = axios.create({ baseURL: resource.url });
    const auth = attachTokenAuth(api, {
      authBaseURL: provider.issuer,
      ...oauth2Password({
        tokenPath: '/token',
        clientId: 'app-pkjwt',
        clientAuthentication: privateKeyJwt({ key: pemOf(rsa), algorithm: 'RS256', kid: 'rs-1' }),
        revocationPath: '/token/revocation',
      }),
      clock: clock.now,
    });
    await auth.setTokens({
      access: signedIn.access_token,
      refresh: signedIn.refresh_token,
      expiresIn: signedIn.expires_in,
    });
    await api.get('/me');
    const from = { calls: (await provider.tokenCalls()).length, revocations: (await provider.revocations()).length };

    await auth.logout();

    const revocation = { clientId: 'app-pkjwt', clientAuthMethod: 'private_key_jwt', certificate: null, status: 200 };
    const revocations = (await provider.revocations()).slice(from.revocations);
    expect(revocations).toEqual([
      {
        ...revocation,
        token: signedIn.refresh_token,
        tokenTypeHint: 'refresh_token',
        assertionJti: expect.any(String) as string,
        error: null,
      },
      {
        ...revocation,
        token: signedIn.access_token,
        tokenTypeHint: 'access_token',
        assertionJti: expect.any(String) as string,
        error: null,
      },
    ]);
    expectEachJtiOnce(revocations);
    expect(since(await provider.tokenCalls(), from.calls)).toEqual([]);
    expect(await auth.getTokens()).toBeNull();

    // The provider did revoke them: the refresh token is refused, the access token no longer active.
    const refresh = await axios.post(
      tokenURL(),
      new URLSearchParams({
        grant_type: 'refresh_token',
        refresh_token: signedIn.refresh_token!,
        ...assertionForm(byHand('app-pkjwt')()),
      }),
      { validateStatus: () => true },
    );
    expect(refresh.status).toBe(400);
    expect(refresh.data).toMatchObject({ error: 'invalid_grant' });
    expect(await introspect(signedIn.access_token)).toMatchObject({ active: false });
  });

  it('client_credentials: logout revokes the access token, one call with hint access_token; the token is then no longer active', async () => {
    const clock = manualClock(Date.now());
    const api = axios.create({ baseURL: resource.url });
    const auth = attachTokenAuth(api, {
      authBaseURL: provider.issuer,
      ...oauth2ClientCredentials({
        tokenPath: '/token',
        clientId: 'svc-rs256',
        clientAuthentication: privateKeyJwt({ key: pemOf(rsa), algorithm: 'RS256', kid: 'rs-1' }),
        revocationPath: '/token/revocation',
      }),
      clock: clock.now,
    });
    await api.get('/prime');
    const { access } = (await auth.getTokens())!;
    const from = (await provider.revocations()).length;

    await auth.logout();

    expect((await provider.revocations()).slice(from)).toEqual([
      {
        token: access,
        tokenTypeHint: 'access_token',
        clientId: 'svc-rs256',
        clientAuthMethod: 'private_key_jwt',
        assertionJti: expect.any(String) as string,
        certificate: null,
        status: 200,
        error: null,
      },
    ]);
    expect(await introspect(access)).toMatchObject({ active: false });
  });
});
