// The client authentications of axios-token-keeper/client-auth, one call at a time on nock: what each login, token and
// revocation call carries (an assertion a verifier accepts, made fresh for each attempt), what is refused at
// construction or attach with the fix named, and that no key or secret shows in any error. The same methods against a
// real provider, over real TLS for mTLS, are in interop-oauth2-client-auth.test.ts.
import axios from 'axios';
import nock from 'nock';
import { webcrypto } from 'node:crypto';
import { attachTokenAuth, isTokenAuthError } from '../lib/index.js';
import type { TokenAuthOptions } from '../lib/index.js';
import { oauth2ClientCredentials, oauth2Password } from '../lib/presets.js';
import { clientSecretJwt, privateKeyJwt, tlsClientAuth } from '../lib/client-auth/index.js';
import type { ClientKeyAlgorithm } from '../lib/client-auth/index.js';
import { ASSERTION_LIFETIME_SEC, ASSERTION_TYPE } from '../lib/client-auth/assertion.js';
import { expectNoLeaks, recordEvents } from './helpers/scan-secrets.js';
import { API } from './helpers/service.js';

const TOKEN_URL = `${API}/oauth2/token`;
const CLIENT_SECRET = 'csjwt-secret-9f1c2e7a5b3d4c6e8f0a1b2c3d4e5f60';

/** What the token route received: each form, and each Authorization header. */
interface Seen {
  forms: URLSearchParams[];
  authorizations: Array<string | undefined>;
}

/** A route on nock answering `reply(index)` for each call, recording what it got. */
function route(path: string, reply: (index: number, form: URLSearchParams) => [number, unknown]): Seen {
  const seen: Seen = { forms: [], authorizations: [] };
  nock(API)
    .persist()
    .post(path)
    .reply(function (this: nock.ReplyFnContext, _uri: string, body: unknown) {
      const form = new URLSearchParams(typeof body === 'string' ? body : '');
      seen.forms.push(form);
      seen.authorizations.push(this.req.headers.authorization);
      return reply(seen.forms.length - 1, form);
    });
  return seen;
}

/** Data calls that accept any bearer token. */
function resources(): void {
  nock(API)
    .persist()
    .get(/^\/orders/)
    .reply(200, { ok: true });
}

function attach(options: TokenAuthOptions) {
  const api = axios.create({ baseURL: API });
  return { api, auth: attachTokenAuth(api, { tokenRetryDelayMs: 1, ...options }) };
}

const serial = { value: 0 };
const tokens = (): [number, unknown] => {
  serial.value += 1;
  return [200, { access_token: `acc-${serial.value}`, refresh_token: `ref-${serial.value}`, expires_in: 600 }];
};

/** WebCrypto's names of each algorithm, to make a key and to verify with it. */
const PARAMS = {
  RS256: {
    key: { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256', modulusLength: 2048, publicExponent: new Uint8Array([1, 0, 1]) },
    verify: { name: 'RSASSA-PKCS1-v1_5' },
  },
  PS256: {
    key: { name: 'RSA-PSS', hash: 'SHA-256', modulusLength: 2048, publicExponent: new Uint8Array([1, 0, 1]) },
    verify: { name: 'RSA-PSS', saltLength: 32 },
  },
  ES256: { key: { name: 'ECDSA', namedCurve: 'P-256' }, verify: { name: 'ECDSA', hash: 'SHA-256' } },
  EdDSA: { key: { name: 'Ed25519' }, verify: { name: 'Ed25519' } },
} as const;

/** A key pair of `algorithm` made by WebCrypto, the private half in each form privateKeyJwt takes. */
async function keysOf(algorithm: ClientKeyAlgorithm) {
  const { privateKey, publicKey } = (await webcrypto.subtle.generateKey(PARAMS[algorithm].key, true, [
    'sign',
    'verify',
  ])) as CryptoKeyPair;
  const der = Buffer.from(await webcrypto.subtle.exportKey('pkcs8', privateKey)).toString('base64');
  return {
    algorithm,
    cryptoKey: privateKey,
    publicKey,
    jwk: await webcrypto.subtle.exportKey('jwk', privateKey),
    pem: `-----BEGIN PRIVATE KEY-----\n${der.match(/.{1,64}/g)!.join('\n')}\n-----END PRIVATE KEY-----\n`,
  };
}

/** What a verifier holds: the public key of a pair, or the HS256 secret. */
type Verifier = Awaited<ReturnType<typeof keysOf>> | { secret: string };

interface Claims {
  iss: string;
  sub: string;
  aud: string;
  jti: string;
  iat: number;
  exp: number;
}

/** `assertion` verified as WebCrypto verifies a JWS: its header and claims; throws when the signature is wrong. */
async function verified(assertion: string, by: Verifier) {
  const [header, payload, signature] = assertion.split('.') as [string, string, string];
  const input = new TextEncoder().encode(`${header}.${payload}`);
  const bytes = Buffer.from(signature, 'base64url');
  const ok =
    'secret' in by
      ? await webcrypto.subtle.verify(
          'HMAC',
          await webcrypto.subtle.importKey(
            'raw',
            new TextEncoder().encode(by.secret),
            { name: 'HMAC', hash: 'SHA-256' },
            false,
            ['verify'],
          ),
          bytes,
          input,
        )
      : await webcrypto.subtle.verify(PARAMS[by.algorithm].verify, by.publicKey, bytes, input);
  if (!ok) throw new Error('the assertion does not verify');
  const decode = (part: string): unknown => JSON.parse(Buffer.from(part, 'base64url').toString('utf8'));
  return { header: decode(header) as Record<string, unknown>, payload: decode(payload) as Claims };
}

/** The assertion of a form, verified: its header and claims, checked to be the client's, for the token endpoint. */
async function verifiedAssertion(form: URLSearchParams, by: Verifier, clientId = 'svc', audience = TOKEN_URL) {
  expect(form.get('client_assertion_type')).toBe(ASSERTION_TYPE);
  const result = await verified(form.get('client_assertion')!, by);
  expect(result.payload).toMatchObject({ iss: clientId, sub: clientId, aud: audience });
  return result;
}

describe('privateKeyJwt: a fresh assertion signed by the client key on every call and every retry', () => {
  describe.each<[ClientKeyAlgorithm, 'cryptoKey' | 'jwk' | 'pem']>([
    ['RS256', 'pem'],
    ['PS256', 'jwk'],
    ['ES256', 'cryptoKey'],
    ['ES256', 'pem'],
    ['EdDSA', 'jwk'],
  ])('%s, the key given as %s', (algorithm, form) => {
    it('signs what the public key verifies: iss = sub = the client id, aud the token endpoint, a uuid jti, exp 55 s after iat, the kid; the secret and Basic header never sent', async () => {
      const keys = await keysOf(algorithm);
      const token = route('/oauth2/token', tokens);
      resources();
      const key = keys[form];
      const { api } = attach({
        authBaseURL: API,
        ...oauth2ClientCredentials({
          tokenPath: '/oauth2/token',
          clientId: 'svc',
          clientAuthentication: privateKeyJwt({ key, kid: 'k-7', ...(form === 'pem' && { algorithm }) }),
        }),
      });

      await api.get('/orders');

      expect(token.forms).toHaveLength(1);
      const sent = token.forms[0]!;
      expect(sent.get('grant_type')).toBe('client_credentials');
      expect(sent.get('client_id')).toBe('svc');
      expect(sent.has('client_secret')).toBe(false);
      expect(token.authorizations).toEqual([undefined]);
      const { header, payload } = await verifiedAssertion(sent, keys);
      expect(header).toEqual({ alg: algorithm, typ: 'JWT', kid: 'k-7' });
      expect(payload.jti).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
      expect(payload.exp - payload.iat).toBe(ASSERTION_LIFETIME_SEC);
      expect(Math.abs(payload.iat - Date.now() / 1000)).toBeLessThan(30);
    });
  });

  it('each attempt of a retried call, and each later call, carries its own assertion: four calls, four jtis', async () => {
    const keys = await keysOf('ES256');
    // The first attempt of the login fails 503 and is retried; then a refresh, whose first attempt fails too.
    const token = route('/oauth2/token', (index) => (index === 0 || index === 2 ? [503, {}] : tokens()));
    resources();
    const { auth } = attach({
      authBaseURL: API,
      ...oauth2Password({
        tokenPath: '/oauth2/token',
        clientId: 'svc',
        clientAuthentication: privateKeyJwt({ key: keys.jwk }),
      }),
      credentials: { username: 'jane', password: 'jane-password-1' },
    });

    await auth.login();
    await auth.refresh();

    expect(token.forms.map((form) => form.get('grant_type'))).toEqual([
      'password',
      'password',
      'refresh_token',
      'refresh_token',
    ]);
    const payloads = await Promise.all(token.forms.map(async (form) => (await verifiedAssertion(form, keys)).payload));
    expect(new Set(payloads.map((payload) => payload.jti)).size).toBe(4);
    // The failed attempt's assertion left the config: the retry's form holds one assertion, not two.
    expect(token.forms.map((form) => form.getAll('client_assertion').length)).toEqual([1, 1, 1, 1]);
  });

  it('`audience` replaces the token endpoint in `aud` (a provider that wants its issuer), and `header` adds to the header (Entra’s certificate thumbprint)', async () => {
    const keys = await keysOf('RS256');
    const token = route('/oauth2/token', tokens);
    resources();
    const { api } = attach({
      authBaseURL: API,
      ...oauth2ClientCredentials({
        tokenPath: '/oauth2/token',
        clientId: 'svc',
        clientAuthentication: privateKeyJwt({
          key: keys.cryptoKey,
          audience: 'https://issuer.test/',
          header: { x5t: 'hOBcHZi846VCHSJbFAs26Go9VTQ' },
        }),
      }),
    });

    await api.get('/orders');

    const { header } = await verifiedAssertion(token.forms[0]!, keys, 'svc', 'https://issuer.test/');
    expect(header).toEqual({ alg: 'RS256', typ: 'JWT', x5t: 'hOBcHZi846VCHSJbFAs26Go9VTQ' });
  });

  it('refuses at construction what cannot sign, naming the fix and never the key', async () => {
    const rsa = await keysOf('RS256');
    const ec = await keysOf('ES256');
    const refusals: Array<[unknown, RegExp]> = [
      [{ key: rsa.pem.replace(/PRIVATE KEY/g, 'RSA PRIVATE KEY') }, /PKCS#1.*openssl pkcs8 -topk8 -nocrypt/],
      [{ key: rsa.pem.replace(/PRIVATE KEY/g, 'ENCRYPTED PRIVATE KEY') }, /encrypted PEM/],
      [{ key: 'not a key' }, /PKCS#8 PEM/],
      [{ key: { ...ec.jwk, d: undefined } }, /without its private part \(`d`\)/],
      [{ key: { kty: 'EC', crv: 'P-384', d: 'x', x: 'y', y: 'z' } }, /RSA, EC P-256 or Ed25519/],
      [{ key: ec.jwk, algorithm: 'RS256' }, /EC P-256 key, which cannot sign RS256: give `algorithm: 'ES256'`/],
      [{ key: rsa.pem, algorithm: 'ES256' }, /RSA key, which cannot sign ES256: give `algorithm: 'RS256'`/],
      [{ key: rsa.jwk, algorithm: 'HS256' }, /`algorithm` must be 'RS256', 'PS256', 'ES256' or 'EdDSA'/],
      [{ key: rsa.publicKey }, /must be the private key/],
      [{ key: rsa.jwk, kid: '' }, /`kid` must be/],
      [{ key: rsa.jwk, audience: 7 }, /`audience` must be/],
      [{ key: rsa.jwk, header: { alg: 'none' } }, /`header.alg` is set by privateKeyJwt itself/],
      [{ key: rsa.jwk, header: { x5t: 1 } }, /`header.x5t` must be a string, got a number/],
      [{ key: 42 }, /`key` must be a CryptoKey, a private JWK or PKCS#8 PEM text, got a number/],
    ];
    for (const [options, message] of refusals) {
      let thrown: unknown;
      try {
        privateKeyJwt(options as never);
      } catch (error) {
        thrown = error;
      }
      expect(thrown).toBeInstanceOf(TypeError);
      expect((thrown as Error).message).toMatch(message);
      expect((thrown as Error).message).toMatch(/^privateKeyJwt: /);
      expectNoLeaks(thrown, [
        { name: 'the RSA PEM body', value: rsa.pem.split('\n').slice(1, -2).join('') },
        { name: "the RSA key's d", value: rsa.jwk.d! },
        { name: "the EC key's d", value: ec.jwk.d! },
      ]);
    }
  });

  it('a refused assertion: LOGIN_REJECTED after one call, and nothing of the key or the assertion in the error or any event, even where the answer quotes them', async () => {
    const keys = await keysOf('RS256');
    const quoted: string[] = [];
    route('/oauth2/token', (_index, form) => {
      quoted.push(form.get('client_assertion')!);
      return [
        401,
        { error: 'invalid_client', detail: `bad assertion ${form.get('client_assertion')} for key ${keys.pem}` },
      ];
    });
    const { api, auth } = attach({
      authBaseURL: API,
      ...oauth2ClientCredentials({
        tokenPath: '/oauth2/token',
        clientId: 'svc',
        clientAuthentication: privateKeyJwt({ key: keys.pem }),
      }),
    });
    const events = recordEvents(auth);

    const error = await api.get('/orders').catch((caught: unknown) => caught);

    expect(isTokenAuthError(error) && error.code).toBe('LOGIN_REJECTED');
    expect(quoted).toHaveLength(1);
    const secrets = [
      { name: 'the assertion sent', value: quoted[0]! },
      { name: 'the PEM', value: keys.pem },
      { name: 'the PEM body', value: keys.pem.split('\n').slice(1, -2).join('') },
    ];
    expectNoLeaks(error, secrets);
    expectNoLeaks(events, secrets);
  });

  it('a key the platform cannot import fails the login before anything is sent, saying so, the key nowhere', async () => {
    const keys = await keysOf('RS256');
    const token = route('/oauth2/token', tokens);
    // A JWK whose private parts are not a key: its shape passes the checks, WebCrypto refuses it.
    const broken = { ...keys.jwk, d: 'AAAA', p: 'AAAA' };
    const { api } = attach({
      authBaseURL: API,
      ...oauth2ClientCredentials({
        tokenPath: '/oauth2/token',
        clientId: 'svc',
        clientAuthentication: privateKeyJwt({ key: broken }),
      }),
    });

    const error = await api.get('/orders').catch((caught: unknown) => caught);

    expect(isTokenAuthError(error) && error.code).toBe('TOKEN_SERVICE_UNAVAILABLE');
    expect(String((error as Error).cause)).toMatch(/privateKeyJwt: the key could not sign RS256 \(OperationError/);
    expect(token.forms).toHaveLength(0);
    expectNoLeaks(error, [{ name: "the key's n", value: keys.jwk.n! }]);
  });
});

describe('clientSecretJwt: an HS256 assertion, the secret never sent', () => {
  it('signs with the client secret, which goes in no form and no header', async () => {
    const token = route('/oauth2/token', tokens);
    resources();
    const { api } = attach({
      authBaseURL: API,
      ...oauth2ClientCredentials({
        tokenPath: '/oauth2/token',
        clientId: 'svc',
        clientSecret: CLIENT_SECRET,
        clientAuthentication: clientSecretJwt(),
      }),
    });

    await api.get('/orders');

    const { header } = await verifiedAssertion(token.forms[0]!, { secret: CLIENT_SECRET });
    expect(header).toEqual({ alg: 'HS256', typ: 'JWT' });
    expect(token.forms[0]!.has('client_secret')).toBe(false);
    expect(token.authorizations).toEqual([undefined]);
    expect(token.forms[0]!.toString()).not.toContain(encodeURIComponent(CLIENT_SECRET));
  });

  it('without `clientSecret`: refused by the preset, and at attach when set by hand', () => {
    expect(() =>
      oauth2ClientCredentials({ tokenPath: '/t', clientId: 'svc', clientAuthentication: clientSecretJwt() }),
    ).toThrow(/needs the client's `clientSecret`/);
    expect(() =>
      attach({
        credentials: { username: 'u', password: 'p' },
        clientAuthentication: { method: clientSecretJwt(), clientId: 'svc' },
      }),
    ).toThrow(/clientSecretJwt: the assertion is signed with the client's secret: give the preset `clientSecret`/);
  });
});

describe('tlsClientAuth: refused at attach where no certificate can be presented', () => {
  const options = (agent?: unknown): TokenAuthOptions => ({
    authBaseURL: API,
    ...oauth2ClientCredentials({
      tokenPath: '/oauth2/token',
      clientId: 'svc',
      clientAuthentication: tlsClientAuth({ httpsAgent: agent }),
    }),
  });

  it('no httpsAgent on the instance or the option', () => {
    expect(() => attach(options())).toThrow(
      /tlsClientAuth: no client certificate: give the axios instance an `httpsAgent`/,
    );
  });

  it('an httpsAgent without a certificate', () => {
    expect(() => attach(options({ options: {} }))).toThrow(/the `httpsAgent` holds no client certificate/);
  });

  it('a token service on plain http', () => {
    const api = axios.create({ baseURL: 'http://127.0.0.1:9' });
    expect(() =>
      attachTokenAuth(api, {
        ...oauth2ClientCredentials({
          tokenPath: '/t',
          clientId: 'svc',
          clientAuthentication: tlsClientAuth({ httpsAgent: { options: { cert: 'c' } } }),
        }),
      }),
    ).toThrow(/the token calls go to http:\/\/127\.0\.0\.1:9\/t: give an https `authBaseURL`/);
  });

  it('takes the instance’s own agent when given none, and names the method the provider registers', () => {
    const api = axios.create({ baseURL: API, httpsAgent: { options: { cert: 'c', key: 'k' } } });
    expect(() =>
      attachTokenAuth(api, {
        ...oauth2ClientCredentials({ tokenPath: '/t', clientId: 'svc', clientAuthentication: tlsClientAuth() }),
      }),
    ).not.toThrow();
    expect(tlsClientAuth().method).toBe('tls_client_auth');
    expect(tlsClientAuth({ selfSigned: true }).method).toBe('self_signed_tls_client_auth');
  });
});

describe('presets: the client fields each method sends', () => {
  it('client_credentials needs no secret with a key, and sends none', () => {
    const options = oauth2ClientCredentials({
      tokenPath: '/t',
      clientId: 'svc',
      clientAuthentication: tlsClientAuth(),
    });
    const { data, headers } = options.loginRequest!({ username: 'svc', password: 'unused' }, undefined);
    expect(String(data)).toBe('grant_type=client_credentials&client_id=svc');
    expect(headers).toEqual({});
  });

  it('`grantParams` go in the login’s form (Auth0’s `audience`), not in the token call’s', () => {
    const options = oauth2ClientCredentials({
      tokenPath: '/t',
      clientId: 'svc',
      clientSecret: CLIENT_SECRET,
      clientAuthentication: 'body',
      grantParams: { audience: 'https://orders.example.com' },
    });
    const login = options.loginRequest!({ username: 'svc', password: CLIENT_SECRET }, undefined);
    expect(Object.fromEntries(login.data as URLSearchParams)).toEqual({
      audience: 'https://orders.example.com',
      grant_type: 'client_credentials',
      client_id: 'svc',
      client_secret: CLIENT_SECRET,
    });
    expect(String(options.refreshRequest!('ref-1', undefined).data)).not.toContain('audience');
    expect(() => oauth2Password({ tokenPath: '/t', clientId: 'svc', grantParams: { audience: 1 } as never })).toThrow(
      /`grantParams` must be an object of strings/,
    );
  });

  it('refuses a `clientAuthentication` that is no method, and a blank `revocationPath`', () => {
    expect(() => oauth2Password({ tokenPath: '/t', clientId: 'svc', clientAuthentication: 'jwt' as never })).toThrow(
      /`clientAuthentication` must be 'basic', 'body' or a method of axios-token-keeper\/client-auth/,
    );
    expect(() => oauth2Password({ tokenPath: '/t', clientId: 'svc', revocationPath: '' })).toThrow(
      /`revocationPath` must be/,
    );
  });
});

describe('revocation on auth.logout() (RFC 7009), through revocationPath', () => {
  function revocable(options: Partial<Parameters<typeof oauth2Password>[0]> = {}) {
    route('/oauth2/token', tokens);
    resources();
    return attach({
      authBaseURL: API,
      ...oauth2Password({
        tokenPath: '/oauth2/token',
        clientId: 'app',
        clientSecret: CLIENT_SECRET,
        revocationPath: '/oauth2/revoke',
        ...options,
      }),
      credentials: { username: 'jane', password: 'jane-password-1' },
    });
  }

  it('revokes the refresh token, then the access token, once each, with the client authentication', async () => {
    const revoked = route('/oauth2/revoke', () => [200, {}]);
    const { auth } = revocable();
    await auth.login();
    const held = (await auth.getTokens())!;

    await auth.logout();

    expect(revoked.forms.map((form) => Object.fromEntries(form))).toEqual([
      { token: held.refresh, token_type_hint: 'refresh_token' },
      { token: held.access, token_type_hint: 'access_token' },
    ]);
    const basic = `Basic ${Buffer.from(`app:${CLIENT_SECRET}`).toString('base64')}`;
    expect(revoked.authorizations).toEqual([basic, basic]);
    expect(await auth.getTokens()).toBeNull();
  });

  it('with privateKeyJwt each revocation carries its own assertion; revokeAccessToken: false revokes the refresh token alone', async () => {
    const keys = await keysOf('ES256');
    const revoked = route('/oauth2/revoke', () => [200, {}]);
    const { auth } = revocable({
      clientSecret: undefined,
      clientAuthentication: privateKeyJwt({ key: keys.jwk }),
      revokeAccessToken: false,
    });
    await auth.login();

    await auth.logout();

    expect(revoked.forms.map((form) => form.get('token_type_hint'))).toEqual(['refresh_token']);
    expect(revoked.forms[0]!.get('client_id')).toBe('app');
    // Its audience is the token endpoint, as on every call: RFC 7523's, which providers take at revocation too.
    const { payload } = await verifiedAssertion(revoked.forms[0]!, keys, 'app');
    expect(payload.jti).toEqual(expect.any(String));
  });

  it('a refused revocation is reported once, the access token is still revoked, and the tokens are dropped all the same', async () => {
    const revoked = route('/oauth2/revoke', (index) =>
      index === 0 ? [400, { error: 'invalid_request', detail: 'refresh token unknown' }] : [200, {}],
    );
    const { auth } = revocable();
    await auth.login();
    const held = (await auth.getTokens())!;
    const events = recordEvents(auth);

    const error = await auth.logout().catch((caught: unknown) => caught);

    expect(isTokenAuthError(error) && error.code).toBe('LOGOUT_REJECTED');
    expect(revoked.forms.map((form) => form.get('token_type_hint'))).toEqual(['refresh_token', 'access_token']);
    expect(await auth.getTokens()).toBeNull();
    expect(events.filter((event) => event.event === 'failure')).toHaveLength(1);
    const secrets = [
      { name: 'the refresh token', value: held.refresh! },
      { name: 'the access token', value: held.access },
      { name: 'the client secret', value: CLIENT_SECRET },
    ];
    expectNoLeaks(error, secrets);
    expectNoLeaks(events, secrets);
  });

  it('nothing held: no revocation call', async () => {
    const revoked = route('/oauth2/revoke', () => [200, {}]);
    const { auth } = revocable();

    await auth.logout();

    expect(revoked.forms).toHaveLength(0);
  });
});
