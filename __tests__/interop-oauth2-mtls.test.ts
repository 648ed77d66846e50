// Mutual TLS (RFC 8705, issue 44) against panva's oidc-provider 9: tls_client_auth with certificate-bound access
// tokens, over real TLS on loopback. The provider and the API both serve HTTPS and ask every client for a certificate;
// the certificates (a CA, the servers' for 127.0.0.1, a client's and an intruder's) are made in the test. The provider
// takes the client by its certificate and the registered subject, and binds each token to the certificate
// (cnf["x5t#S256"]); the API checks that binding against the certificate of each request's own connection. A second
// client's tokens are not bound, for an app whose API asks for no certificate while its token service does. Counts are
// exact: one token call per renewal, every request of the app checked and accepted.
//
// The plugin's clock starts at the real time, as in interop-oauth2-client-auth.test.ts; the access tokens live 60 s.
import https from 'node:https';
import { createPrivateKey } from 'node:crypto';
import axios from 'axios';
import { attachTokenAuth } from 'axios-token-keeper';
import { oauth2ClientCredentials } from 'axios-token-keeper/presets';
import { tlsClientAuth } from 'axios-token-keeper/client-auth';
import { makeCertificates } from '../harness/oauth2/certs.js';
import type { TestCertificates } from '../harness/oauth2/certs.js';
import { startMtlsResourceServer } from '../harness/oauth2/mtls-resource.js';
import type { MtlsResourceServer } from '../harness/oauth2/mtls-resource.js';
import { introspector, startOidcProvider } from '../harness/oauth2/oidc.js';
import type { OidcProvider } from '../harness/oauth2/oidc.js';
import { startResourceServer } from '../harness/oauth2/resource.js';
import type { ResourceServer } from '../harness/oauth2/resource.js';
import { clientCredentialsCall, serviceClient } from './helpers/client-auth.js';
import { burst, fulfilled, manualClock } from './helpers/flow.js';
import { privateKeySecrets, since, subjects } from './helpers/oauth2.js';
import { expectNoLeaks, recordEvents } from './helpers/scan-secrets.js';

const RESOURCE_SERVER_SECRET = 'rs-secret-6d2a9f3e1b74';
const TTL_SEC = 60;

describe('tls_client_auth and certificate-bound tokens against oidc-provider 9, the provider and the API on HTTPS asking for client certificates', () => {
  let provider: OidcProvider;
  let resource: MtlsResourceServer;
  /** An API over plain HTTP that takes any active token, for the client whose tokens are not bound. */
  let plainResource: ResourceServer;
  let certs: TestCertificates;
  /** The agents a test made, destroyed after it so that no kept-alive socket outlives it. */
  const agents: https.Agent[] = [];

  beforeAll(async () => {
    certs = await makeCertificates(['svc-mtls', 'svc-mtls-unbound', 'intruder']);
    provider = await startOidcProvider({
      resourceServerSecret: RESOURCE_SERVER_SECRET,
      accessTokenTtlSec: TTL_SEC,
      recordClientAuth: true,
      tls: { ...certs.server, ca: certs.ca },
      clients: [
        serviceClient('svc-mtls', {
          token_endpoint_auth_method: 'tls_client_auth',
          tls_client_auth_subject_dn: certs.clients['svc-mtls']!.subjectDn,
          tls_client_certificate_bound_access_tokens: true,
        }),
        serviceClient('svc-mtls-unbound', {
          token_endpoint_auth_method: 'tls_client_auth',
          tls_client_auth_subject_dn: certs.clients['svc-mtls-unbound']!.subjectDn,
        }),
      ],
    });
    const introspect = introspector(provider.issuer, RESOURCE_SERVER_SECRET, { ca: certs.ca });
    resource = await startMtlsResourceServer({ tls: { ...certs.server, ca: certs.ca }, introspect });
    plainResource = await startResourceServer(async (token) => {
      const info = await introspect(token);
      return { active: info.active, subject: info.sub ?? info.client_id };
    });
  }, 30_000);

  afterEach(() => {
    for (const agent of agents.splice(0)) agent.destroy();
  });

  afterAll(async () => {
    await plainResource?.stop();
    await resource?.stop();
    await provider?.stop();
  });

  /** An agent that trusts the test's CA and presents `name`'s certificate (none without a name). */
  function agentOf(name?: 'svc-mtls' | 'svc-mtls-unbound' | 'intruder', options: https.AgentOptions = {}): https.Agent {
    const client = name && certs.clients[name]!;
    const agent = new https.Agent({ ca: certs.ca, ...(client && { key: client.key, cert: client.cert }), ...options });
    agents.push(agent);
    return agent;
  }

  describe('the provider and the API by themselves, which the tests below rely on (no plugin)', () => {
    it("tls_client_auth: a token call with the client's certificate gets a token bound to it; another certificate of the CA, or none, is refused (invalid_client)", async () => {
      const client = certs.clients['svc-mtls']!;
      const from = (await provider.tokenCalls()).length;

      const answers = [];
      for (const httpsAgent of [agentOf('svc-mtls'), agentOf('intruder'), agentOf()])
        answers.push(
          // RFC 8705 §2: no secret nor assertion, so the call names its client in the form.
          await axios.post<{ access_token?: string; error?: string }>(
            `${provider.issuer}/token`,
            new URLSearchParams({ grant_type: 'client_credentials', client_id: 'svc-mtls' }),
            { httpsAgent, validateStatus: () => true },
          ),
        );

      expect(answers.map((answer) => [answer.status, answer.data.error ?? null])).toEqual([
        [200, null],
        [401, 'invalid_client'],
        [401, 'invalid_client'],
      ]);
      const info = await introspector(provider.issuer, RESOURCE_SERVER_SECRET, { ca: certs.ca })(
        answers[0]!.data.access_token!,
      );
      expect(info).toMatchObject({ active: true, token_type: 'Bearer', cnf: { 'x5t#S256': client.thumbprint } });
      const mtls = { ...clientCredentialsCall('svc-mtls', 'tls_client_auth'), certificate: client.thumbprint };
      expect(since(await provider.tokenCalls(), from)).toEqual([
        mtls,
        { ...mtls, status: 401, error: 'invalid_client', certificate: certs.clients.intruder!.thumbprint },
        { ...mtls, status: 401, error: 'invalid_client', clientAuthMethod: 'none', certificate: null },
      ]);
    });
  });

  describe('with oauth2ClientCredentials() and tlsClientAuth()', () => {
    /** The app's instance, with the client certificate on its own httpsAgent, as every request of it carries it. */
    function serviceAccount(clientAuthentication: ReturnType<typeof tlsClientAuth>) {
      const clock = manualClock(Date.now());
      const httpsAgent = agentOf('svc-mtls', { keepAlive: true });
      const api = axios.create({ baseURL: resource.url, httpsAgent });
      const auth = attachTokenAuth(api, {
        authBaseURL: provider.issuer,
        ...oauth2ClientCredentials({ tokenPath: '/token', clientId: 'svc-mtls', clientAuthentication }),
        clock: clock.now,
      });
      return { api, auth, clock, httpsAgent };
    }

    it("the certificate of the app instance's httpsAgent: first use, then an expiry and ten concurrent requests: one token call each with the certificate, every request accepted by the binding check", async () => {
      const client = certs.clients['svc-mtls']!;
      const { api, auth, clock } = serviceAccount(tlsClientAuth());
      const recorded = recordEvents(auth);
      const from = (await provider.tokenCalls()).length;
      const seenFrom = resource.requests.length;

      await api.get('/prime');
      clock.advance(TTL_SEC * 1000);
      const results = await burst(10, (index) => api.get<{ subject: string }>(`/orders/${index}`));

      expect(fulfilled(results)).toBe(10);
      expect(subjects(results)).toEqual(Array(10).fill('svc-mtls'));
      const call = { ...clientCredentialsCall('svc-mtls', 'tls_client_auth'), certificate: client.thumbprint };
      expect(since(await provider.tokenCalls(), from)).toEqual([call, call]);
      // Each request checked against the certificate of its own connection: the one the tokens are bound to.
      const seen = resource.requests.slice(seenFrom);
      expect(seen.map(({ status, reason, certificate, bound }) => ({ status, reason, certificate, bound }))).toEqual(
        Array(11).fill({ status: 200, reason: null, certificate: client.thumbprint, bound: client.thumbprint }),
      );
      expect(auth.stats()).toMatchObject({ logins: 2, refreshes: 0, replays: 0, failures: 0 });
      expectNoLeaks(recorded, privateKeySecrets('client certificate key', createPrivateKey(client.key)));
    });

    it('the certificate of an httpsAgent given to tlsClientAuth(), the app instance with none (its API asks for none): one token call each with the certificate, every request accepted', async () => {
      const client = certs.clients['svc-mtls-unbound']!;
      const clock = manualClock(Date.now());
      const api = axios.create({ baseURL: plainResource.url });
      const auth = attachTokenAuth(api, {
        authBaseURL: provider.issuer,
        ...oauth2ClientCredentials({
          tokenPath: '/token',
          clientId: 'svc-mtls-unbound',
          // The one agent that trusts the test's CA and holds the certificate: a token call without it fails.
          clientAuthentication: tlsClientAuth({ httpsAgent: agentOf('svc-mtls-unbound') }),
        }),
        clock: clock.now,
      });
      const from = (await provider.tokenCalls()).length;
      const { accepted, refused } = plainResource.counts;

      await api.get('/prime');
      clock.advance(TTL_SEC * 1000);
      const results = await burst(10, (index) => api.get<{ subject: string }>(`/orders/${index}`));

      expect(fulfilled(results)).toBe(10);
      expect(subjects(results)).toEqual(Array(10).fill('svc-mtls-unbound'));
      const call = { ...clientCredentialsCall('svc-mtls-unbound', 'tls_client_auth'), certificate: client.thumbprint };
      expect(since(await provider.tokenCalls(), from)).toEqual([call, call]);
      expect([plainResource.counts.accepted - accepted, plainResource.counts.refused - refused]).toEqual([11, 0]);
      expect(auth.stats()).toMatchObject({ logins: 2, refreshes: 0, replays: 0, failures: 0 });
    });

    it("the plugin's bound token is refused by the API without the certificate (no_certificate) and with another of the CA's (certificate_mismatch)", async () => {
      const client = certs.clients['svc-mtls']!;
      const { api, auth, httpsAgent } = serviceAccount(tlsClientAuth());
      await api.get('/prime');
      const headers = { Authorization: `Bearer ${(await auth.getTokens())!.access}` };
      const seenFrom = resource.requests.length;

      const statuses = [];
      for (const agent of [agentOf(), agentOf('intruder'), httpsAgent])
        statuses.push(
          (await axios.get(`${resource.url}/orders/1`, { headers, httpsAgent: agent, validateStatus: () => true }))
            .status,
        );

      expect(statuses).toEqual([401, 401, 200]);
      expect(resource.requests.slice(seenFrom).map(({ reason, bound }) => ({ reason, bound }))).toEqual([
        { reason: 'no_certificate', bound: client.thumbprint },
        { reason: 'certificate_mismatch', bound: client.thumbprint },
        { reason: null, bound: client.thumbprint },
      ]);
    });
  });
});
