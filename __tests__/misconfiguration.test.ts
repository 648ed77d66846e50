import { createServer } from 'node:net';
import axios from 'axios';
import nock from 'nock';
import { attachTokenAuth, isTokenAuthError } from '../lib/index.js';
import { API, LOGIN, PASSWORD, USERNAME } from './helpers/service.js';
import { rig } from './helpers/setup.js';
import { failureOf } from './helpers/settled.js';

// A wrong address, a missing secret or plain http: errors that name what the user got wrong and how to fix it.

const credentials = { username: USERNAME, password: PASSWORD };

describe('a login or token call with no such endpoint (404, 405) is a configuration error', () => {
  it('a wrong `loginPath`: the full URL and the option to check, never the credentials; then a pause that says until when', async () => {
    const login = nock(API).post('/api/v2/login').reply(404, { detail: 'Not found.' });
    const api = axios.create({ baseURL: API });
    attachTokenAuth(api, { credentials, loginPath: '/api/v2/login' });

    const error = await failureOf(api.get('/orders'), isTokenAuthError);

    expect(error.code).toBe('TOKEN_ENDPOINT_NOT_FOUND');
    expect(error.status).toBe(404);
    expect(error.message).toBe(
      'The token service has no login call at https://api.test/api/v2/login (HTTP 404: "Not found."). ' +
        'Check `authBaseURL` and `loginPath`. No `authBaseURL` was given, so the token calls go to the ' +
        "instance's `baseURL`; pass `authBaseURL` if the token service lives elsewhere.",
    );
    expect(error.message).not.toMatch(/credentials/i);
    expect(login.isDone()).toBe(true);

    // The same address would answer the same: automatic logins pause, and the error says so.
    const again = await failureOf(api.get('/orders'), isTokenAuthError);
    expect(again.code).toBe('TOKEN_ENDPOINT_NOT_FOUND');
    expect(again.message).toMatch(/^Automatic logins are paused until [\dT:.-]+Z \(60 s more, `loginCooldownMs`\)/);
    expect(again.message).toContain('https://api.test/api/v2/login');
    expect(again.cause).toBe(error);
  });

  it('a wrong `tokenPath` (405): names it and the `authBaseURL` given, and does not fall back to a login', async () => {
    const { service, api, auth } = rig({ authBaseURL: API, tokenPath: '/auth/api/v1/accounts/refresh' });
    nock(API).post('/auth/api/v1/accounts/refresh').reply(405, { detail: 'Method "POST" not allowed.' });
    await api.get('/orders');
    service.expireAccessTokens();

    const error = await failureOf(api.get('/orders'), isTokenAuthError);

    expect(error.code).toBe('TOKEN_ENDPOINT_NOT_FOUND');
    expect(error.message).toBe(
      'The token service has no token call at https://api.test/auth/api/v1/accounts/refresh ' +
        '(HTTP 405: "Method "POST" not allowed."). Check `authBaseURL` and `tokenPath`.',
    );
    expect(service.counters.loginCalls).toBe(1);
    expect(auth.stats()).toMatchObject({ logins: 1, refreshes: 0, failures: 1 });
  });

  it('a login answered 401 is still a rejection of the credentials', async () => {
    const { api } = rig({ credentials: { username: USERNAME, password: 'wrong' } });

    const error = await failureOf(api.get('/orders'), isTokenAuthError);

    expect(error.code).toBe('LOGIN_REJECTED');
    expect(error.message).toContain(`POST ${API}${LOGIN}`);
    expect(error.message).toMatch(/Check the `credentials`/);
  });
});

describe('an unreachable token service is named by host and port', () => {
  it('a closed port on the loopback', async () => {
    nock.enableNetConnect('127.0.0.1');
    const port = await closedPort();
    const api = axios.create({ baseURL: `http://127.0.0.1:${port}` });
    attachTokenAuth(api, { credentials, tokenRetries: 0 });

    const error = await failureOf(api.get('/orders'), isTokenAuthError);

    expect(error.code).toBe('TOKEN_SERVICE_UNAVAILABLE');
    expect(error.message).toMatch(
      new RegExp(
        `^The token service at 127\\.0\\.0\\.1:${port} could not be reached: POST http://127\\.0\\.0\\.1:${port}${LOGIN} failed \\(ECONNREFUSED\\)\\.`,
      ),
    );
    expect(error.message).toContain('No `authBaseURL` was given');
  });

  it('the scheme’s own port spelt out, and no word of `baseURL` when `authBaseURL` was given', async () => {
    nock('https://auth.test').post(LOGIN).delay(300).reply(200, {});
    const api = axios.create({ baseURL: API });
    attachTokenAuth(api, { credentials, authBaseURL: 'https://auth.test', tokenTimeoutMs: 50 });

    const error = await failureOf(api.get('/orders'), isTokenAuthError);

    expect(error.message).toBe(
      `The token service at auth.test:443 could not be reached: POST https://auth.test${LOGIN} timed out after 50 ms.`,
    );
  });
});

describe('bad input at attach time names the fix', () => {
  it('a plain-http `baseURL` says the token calls go there, and how to send them elsewhere', () => {
    const attach = () => attachTokenAuth(axios.create({ baseURL: 'http://api.example.com/v1' }), { credentials });

    expect(attach).toThrow(
      "attachTokenAuth: the instance's `baseURL` http://api.example.com is plain http://, and with no `authBaseURL` the login and token calls go there too",
    );
    expect(attach).toThrow(/pass `authBaseURL` where the token service answers on https:\/\//);
  });

  it('a plain-http `authBaseURL` given is named as such', () => {
    const attach = () =>
      attachTokenAuth(axios.create({ baseURL: API }), { credentials, authBaseURL: 'http://auth.example.com' });

    expect(attach).toThrow(/^attachTokenAuth: `authBaseURL` http:\/\/auth\.example\.com is plain http:\/\//);
  });

  it.each<[string, Record<string, unknown>, string]>([
    [
      'an unset variable for the password',
      { username: USERNAME, password: undefined },
      '`password` is undefined (is the environment variable it comes from set?)',
    ],
    ['an empty username', { username: '', password: PASSWORD }, '`username` is empty'],
    ['a numeric password', { username: USERNAME, password: 1234 }, '`password` is a number'],
    [
      'neither',
      { username: null },
      '`username` is null and `password` is undefined (is the environment variable it comes from set?)',
    ],
  ])('credentials with %s say which is wrong, never its value', (_, given, which) => {
    const attach = () => attachTokenAuth(axios.create({ baseURL: API }), { credentials: given as never });

    expect(attach).toThrow(
      `attachTokenAuth: \`credentials\` must have a string \`username\` and a string \`password\`, but ${which}.`,
    );
  });

  it('a credentials function that returns an empty password fails its login with NO_CREDENTIALS, saying so', async () => {
    const { service, api } = rig({ credentials: () => ({ username: USERNAME, password: '' }) });

    const error = await failureOf(api.get('/orders'), isTokenAuthError);

    expect(error.code).toBe('NO_CREDENTIALS');
    expect(error.message).toBe(
      'The credentials must have a string `username` and a string `password`, but `password` is empty, so the plugin cannot log in.',
    );
    expect(service.received).toHaveLength(0);
  });
});

/** A loopback port nothing listens on: one the system just gave out and took back. */
function closedPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}
