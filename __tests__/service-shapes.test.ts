import axios from 'axios';
import nock from 'nock';
import { attachTokenAuth, isTokenAuthError, MemoryTokenStore } from '../lib/index.js';
import type { TokenAuthOptions } from '../lib/index.js';
import { oauth2ClientCredentials, oauth2Password, simpleJwt } from '../lib/presets.js';
import { expectNoLeaks } from './helpers/scan-secrets.js';
import { API, PASSWORD, USERNAME } from './helpers/service.js';
import { burst, fulfilled, manualClock } from './helpers/setup.js';

// Token services shaped other than HTTP Basic: what the login sends, pairs handed in, one-off credentials, presets.

const credentials = { username: USERNAME, password: PASSWORD };
const CLIENT_SECRET = 'client-secret-value-42';

/** What a stand-in service received on one route: bodies as text, and the Authorization header. */
interface Seen {
  bodies: string[];
  authorizations: (string | undefined)[];
}

/** A token route on nock answering `reply` for each call, recording what it got. */
function route(path: string, reply: (body: string, index: number) => [number, unknown]): Seen {
  const seen: Seen = { bodies: [], authorizations: [] };
  nock(API)
    .persist()
    .post(path)
    .reply(function (this: nock.ReplyFnContext, _uri: string, body: unknown) {
      const text = typeof body === 'string' ? body : JSON.stringify(body);
      seen.bodies.push(text);
      seen.authorizations.push(this.req.headers.authorization);
      return reply(text, seen.bodies.length - 1);
    });
  return seen;
}

/** Data calls that accept exactly the access tokens in `valid`. */
function resources(valid: Set<string>): { sent: (string | undefined)[] } {
  const sent: (string | undefined)[] = [];
  nock(API)
    .persist()
    .get(/^\/orders/)
    .reply(function (this: nock.ReplyFnContext) {
      const authorization = this.req.headers.authorization;
      sent.push(authorization);
      return valid.has(authorization?.replace(/^Bearer /, '') ?? '') ? [200, { ok: true }] : [401, { detail: 'no' }];
    });
  return { sent };
}

function attach(options: TokenAuthOptions) {
  const api = axios.create({ baseURL: API });
  return { api, auth: attachTokenAuth(api, { tokenRetryDelayMs: 1, ...options }) };
}

describe('loginRequest: the whole login request, when it is not HTTP Basic', () => {
  it('sends JSON { username, password } with no Basic header, and shares the login among concurrent requests', async () => {
    const login = route('/api/token/', () => [200, { access: 'acc-json-1', refresh: 'ref-json-1' }]);
    const data = resources(new Set(['acc-json-1']));
    const { api } = attach({ ...simpleJwt(), credentials });

    const results = await burst(5, (i) => api.get(`/orders/${i}`));

    expect(fulfilled(results)).toBe(5);
    expect(login.bodies).toEqual([JSON.stringify({ username: USERNAME, password: PASSWORD })]);
    expect(login.authorizations).toEqual([undefined]);
    expect(data.sent).toEqual(Array(5).fill('Bearer acc-json-1'));
  });

  it('a refused login: LOGIN_REJECTED after one attempt, the password nowhere in the error', async () => {
    const login = route('/api/token/', () => [
      401,
      { detail: `No active account found with the given credentials (${PASSWORD})` },
    ]);
    const { api } = attach({ ...simpleJwt(), credentials });

    const error = await api.get('/orders').catch((e: unknown) => e);

    expect(isTokenAuthError(error) && error.code).toBe('LOGIN_REJECTED');
    expect(login.bodies).toHaveLength(1);
    expectNoLeaks(error, [{ name: 'the password', value: PASSWORD }]);
  });

  it('keeps none of a form it sent (client secret, password) in the error, and the service’s answer masked', async () => {
    route('/oauth/token', () => [400, { error: 'invalid_grant', error_description: `bad ${CLIENT_SECRET}` }]);
    const { api } = attach({
      ...oauth2Password({
        tokenPath: '/oauth/token',
        clientId: 'orders-app',
        clientSecret: CLIENT_SECRET,
        clientAuthentication: 'body',
      }),
      credentials,
    });

    const error = await api.get('/orders').catch((e: unknown) => e);

    expect(isTokenAuthError(error) && error.code).toBe('LOGIN_REJECTED');
    expectNoLeaks(error, [
      { name: 'the password', value: PASSWORD },
      { name: 'the client secret', value: CLIENT_SECRET },
    ]);
    const cause = (error as { cause?: { config?: object; response?: { data?: unknown } } }).cause;
    expect(cause?.config).not.toHaveProperty('data');
    expect(cause?.config).not.toHaveProperty('headers');
    expect(cause?.response?.data).toEqual({ error: 'invalid_grant', error_description: 'bad [REDACTED]' });
  });
});

describe('what the token calls carry in the query stays out of messages', () => {
  it('a password sent as query parameters: the refused login names the address without its query', async () => {
    nock(API).post('/login').query(true).reply(401, { detail: 'no' });
    const { api } = attach({
      loginPath: '/login',
      loginRequest: ({ username, password }) => ({ params: { username, password } }),
      credentials,
    });

    const error = await api.get('/orders').catch((e: unknown) => e);

    expect(isTokenAuthError(error) && error.code).toBe('LOGIN_REJECTED');
    expect((error as Error).message).toContain(`POST ${API}/login,`);
    expectNoLeaks(error, [{ name: 'the password', value: PASSWORD }]);
  });

  it('a refresh token sent as a query parameter: the failure event does not carry it', async () => {
    const clock = manualClock();
    route('/auth/api/v1/accounts/login', () => [200, { access: 'acc-q', refresh: 'ref-query-secret', expires_in: 60 }]);
    nock(API).post('/auth/api/v1/accounts/token').query(true).reply(400, { detail: 'bad' });
    resources(new Set(['acc-q']));
    const { api, auth } = attach({
      refreshRequest: (refreshToken) => ({ params: { refresh_token: refreshToken } }),
      credentials,
      clock: clock.now,
      tokenRetries: 0,
    });
    const failures: unknown[] = [];
    auth.on('failure', (event) => failures.push(event));
    await api.get('/orders');
    clock.advance(60_000);

    await api.get('/orders').catch(() => undefined);

    expect(failures).toContainEqual(expect.objectContaining({ operation: 'refresh', code: 'REFRESH_REJECTED' }));
    expectNoLeaks(failures, [{ name: 'the refresh token', value: 'ref-query-secret' }]);
  });
});

describe('presets', () => {
  it('oauth2Password: a form with the grant, the scope and Basic client authentication; renewed through the refresh token', async () => {
    const clock = manualClock();
    let serial = 0;
    const token = route('/oauth/token', () => {
      serial += 1;
      return [200, { access_token: `acc-${serial}`, refresh_token: `ref-${serial}`, expires_in: 300 }];
    });
    resources(new Set(['acc-1', 'acc-2']));
    const { api } = attach({
      ...oauth2Password({
        tokenPath: '/oauth/token',
        clientId: 'orders app',
        clientSecret: 's3cr:t',
        scope: 'orders:read',
      }),
      credentials,
      clock: clock.now,
    });

    await api.get('/orders');
    clock.advance(300_000);
    await api.get('/orders');

    const [login, refresh] = token.bodies.map((body) => Object.fromEntries(new URLSearchParams(body)));
    expect(login).toEqual({ grant_type: 'password', username: USERNAME, password: PASSWORD, scope: 'orders:read' });
    expect(refresh).toEqual({ grant_type: 'refresh_token', refresh_token: 'ref-1' });
    // RFC 6749 §2.3.1: id and secret form-encoded, then joined for Basic.
    const basic = `Basic ${Buffer.from('orders+app:s3cr%3At').toString('base64')}`;
    expect(token.authorizations).toEqual([basic, basic]);
  });

  it('oauth2ClientCredentials: the client logs in with its id and secret, and again at each expiry when no refresh token comes', async () => {
    const clock = manualClock();
    let serial = 0;
    const token = route('/oauth/token', () => [200, { access_token: `acc-${(serial += 1)}`, expires_in: 60 }]);
    resources(new Set(['acc-1', 'acc-2']));
    const { api, auth } = attach({
      ...oauth2ClientCredentials({ tokenPath: '/oauth/token', clientId: 'batch', clientSecret: CLIENT_SECRET }),
      clock: clock.now,
    });

    expect(fulfilled(await burst(3, () => api.get('/orders')))).toBe(3);
    clock.advance(60_000);
    expect(fulfilled(await burst(3, () => api.get('/orders')))).toBe(3);

    expect(token.bodies.map((body) => new URLSearchParams(body).get('grant_type'))).toEqual([
      'client_credentials',
      'client_credentials',
    ]);
    expect(auth.stats()).toMatchObject({ logins: 2, refreshes: 0 });
  });

  it('OAuth2 renewals through the shared endpoint count as token calls, not logins: twelve 5-minute tokens an hour', async () => {
    const clock = manualClock();
    let serial = 0;
    route('/oauth/token', () => [
      200,
      { access_token: `acc-${(serial += 1)}`, refresh_token: `ref-${serial}`, expires_in: 300 },
    ]);
    const valid = new Set<string>();
    resources(valid);
    for (let i = 1; i <= 20; i += 1) valid.add(`acc-${i}`);
    const password = attach({
      ...oauth2Password({ tokenPath: '/oauth/token', clientId: 'app', clientSecret: CLIENT_SECRET }),
      credentials,
      clock: clock.now,
    });

    for (let minute = 0; minute < 60; minute += 5) {
      expect((await password.api.get('/orders')).status).toBe(200);
      clock.advance(5 * 60_000);
    }

    expect(password.auth.stats()).toMatchObject({ logins: 1, refreshes: 11, failures: 0 });
  });

  it('oauth2ClientCredentials allows a login per renewal at the token calls’ rate: twelve 5-minute tokens an hour', async () => {
    const clock = manualClock();
    let serial = 0;
    route('/oauth/token', () => [200, { access_token: `acc-${(serial += 1)}`, expires_in: 300 }]);
    const valid = new Set<string>();
    resources(valid);
    for (let i = 1; i <= 20; i += 1) valid.add(`acc-${i}`);
    const { api, auth } = attach({
      ...oauth2ClientCredentials({ tokenPath: '/oauth/token', clientId: 'batch', clientSecret: CLIENT_SECRET }),
      clock: clock.now,
    });

    for (let minute = 0; minute < 60; minute += 5) {
      expect((await api.get('/orders')).status).toBe(200);
      clock.advance(5 * 60_000);
    }

    expect(auth.stats()).toMatchObject({ logins: 12, refreshes: 0, failures: 0 });
  });

  it('refuses an OAuth2 client without what it needs, naming it', () => {
    expect(() => oauth2ClientCredentials({ tokenPath: '/oauth/token', clientId: 'batch' })).toThrow(/`clientSecret`/);
    expect(() => oauth2Password({ tokenPath: '', clientId: 'app' })).toThrow(/`tokenPath` and a `clientId`/);
  });
});

describe('pairs and credentials handed in', () => {
  it('setTokens(): held and written to the store, so another instance on it uses the pair; its expiry read as an answer’s', async () => {
    const clock = manualClock();
    const store = new MemoryTokenStore();
    const data = resources(new Set(['handed-in']));
    const first = attach({ store, clock: clock.now });
    const second = attach({ store, clock: clock.now });

    await first.auth.setTokens({ access: 'handed-in', refresh: 'handed-refresh', expiresIn: 600 });

    expect(fulfilled(await burst(3, (i) => second.api.get(`/orders/${i}`)))).toBe(3);
    expect(store.get()).toEqual({ access: 'handed-in', refresh: 'handed-refresh', expiresAt: clock.now() + 600_000 });
    expect(data.sent).toEqual(Array(3).fill('Bearer handed-in'));
    await expect(first.auth.setTokens({ access: '' })).rejects.toThrow(/non-empty `access`/);
  });

  it('without credentials, a login the plugin needs fails with NO_CREDENTIALS, meaning "sign in again"', async () => {
    const { api } = attach({});

    const error = await api.get('/orders').catch((e: unknown) => e);

    expect(isTokenAuthError(error) && error.code).toBe('NO_CREDENTIALS');
    expect((error as Error).message).toMatch(
      /sign in again .*`auth\.login\(credentials\)` or `auth\.setTokens\(tokens\)`/,
    );
  });

  it('login(credentials): a sign-in form’s credentials, used once and not kept', async () => {
    const login = route('/api/token/', () => [200, { access: 'acc-form', refresh: 'ref-form' }]);
    route('/api/token/refresh/', () => [401, { detail: 'Token is blacklisted', code: 'token_not_valid' }]);
    const valid = new Set(['acc-form']);
    resources(valid);
    const { api, auth } = attach(simpleJwt());

    await auth.login(credentials);
    expect((await api.get('/orders')).status).toBe(200);
    valid.clear();
    const error = await api.get('/orders').catch((e: unknown) => e);

    // The refresh token was refused and no credentials were kept: the app must sign in again.
    expect(isTokenAuthError(error) && error.code).toBe('NO_CREDENTIALS');
    expect(login.bodies).toHaveLength(1);
  });
});
