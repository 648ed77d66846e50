// The errors of the token calls carry no secret: a rejected or unreadable login, a refused or unreadable token call, a
// 500 that echoes the Basic header or the refresh token, in the error, its cause chain, the events and the console;
// and Mask.axiosError, which cleans what axios keeps of a call.
import { AxiosError as AxiosErrorClass, AxiosHeaders } from 'axios';
import { isTokenAuthError } from '../lib/index.js';
import type { TokenAuthError } from '../lib/index.js';
import { Mask } from '../lib/support/redact.js';
import { axiosCause, BASIC, BASIC_PART, events, leakCheckForFile } from './helpers/leak-checks.js';
import { basicHeader, credentialSecrets, expectNoLeaks, recordEvents, secretsOf } from './helpers/scan-secrets.js';
import { LOGIN, PASSWORD, TOKEN, USERNAME } from './helpers/service.js';
import { rig } from './helpers/setup.js';
import { failureOf } from './helpers/settled.js';

const expectNothingLeaked = leakCheckForFile();

describe('errors from the login call', () => {
  it('LOGIN_REJECTED for a wrong password carries neither that password nor its Basic header', async () => {
    const wrong = 'wr0ng: pässwort';
    const { service, api, auth } = rig({ credentials: { username: USERNAME, password: wrong } });
    const recorded = recordEvents(auth);

    const error = await failureOf(api.get('/orders'), isTokenAuthError);

    expect(error.code).toBe('LOGIN_REJECTED');
    expect(error.status).toBe(401);
    const cause = axiosCause(error);
    expect(cause.response?.status).toBe(401);
    // What was sent stays home: the cause names the call, without the Basic header, the body or the query.
    expect(cause.config).toEqual({ method: 'post', url: `${service.authBase}${LOGIN}` });
    expect(service.counters.loginCalls).toBe(1);
    expect(service.counters.dataCalls).toBe(0);
    expect(service.received[0]?.authorization).toBe(basicHeader(USERNAME, wrong));
    expect(events(recorded)).toEqual(['failure:LOGIN_REJECTED']);
    expectNothingLeaked(error, recorded, [...secretsOf(service), ...credentialSecrets(USERNAME, wrong)]);
  });

  it('LOGIN_REJECTED hides the Basic header when the 401 answer echoes it', async () => {
    const { service, api, auth } = rig();
    const recorded = recordEvents(auth);
    service.loginFaults.push([
      401,
      { detail: `Credentials not accepted: ${BASIC}`, seen: { authorization: BASIC, credentials: BASIC_PART } },
    ]);

    const error = await failureOf(api.get('/orders'), isTokenAuthError);

    expect(error.code).toBe('LOGIN_REJECTED');
    expect(error.message).toContain('Credentials not accepted');
    expect(axiosCause(error).response?.status).toBe(401);
    expect(events(recorded)).toEqual(['failure:LOGIN_REJECTED']);
    expectNothingLeaked(error, recorded, secretsOf(service));
  });

  it('LOGIN_REJECTED hides the password when the 401 answer echoes the credentials it decoded', async () => {
    const { service, api, auth } = rig();
    const recorded = recordEvents(auth);
    service.loginFaults.push([
      401,
      { detail: `No account matches ${USERNAME}:${PASSWORD}`, username: USERNAME, password: PASSWORD },
    ]);

    const error = await failureOf(api.get('/orders'), isTokenAuthError);

    expect(error.code).toBe('LOGIN_REJECTED');
    expect(error.message).toContain('No account matches');
    expect(events(recorded)).toEqual(['failure:LOGIN_REJECTED']);
    expectNothingLeaked(error, recorded, secretsOf(service));
  });

  it('TOKEN_RESPONSE_INVALID names the keys of a login answer it cannot read, not their values', async () => {
    const { service, api, auth } = rig();
    const recorded = recordEvents(auth);
    const odd = ['tok-9f8e7d6c-not-for-logs', 'sess-1a2b3c4d-not-for-logs'];
    service.loginFaults.push([200, { token: odd[0], user: { id: 7, session: odd[1] } }]);

    const error = await failureOf(api.get('/orders'), isTokenAuthError);

    expect(error.code).toBe('TOKEN_RESPONSE_INVALID');
    expect(error.message).toContain('keys token, user.id, user.session');
    expect(service.counters.loginCalls).toBe(1);
    expect(service.counters.dataCalls).toBe(0);
    expect(events(recorded)).toEqual(['failure:TOKEN_RESPONSE_INVALID']);
    expectNothingLeaked(error, recorded, secretsOf(service, odd));
  });

  it('TOKEN_SERVICE_UNAVAILABLE for a 500 (no retries) hides the Basic header the 500 page echoes', async () => {
    const { service, api, auth } = rig({ tokenRetries: 0 });
    const recorded = recordEvents(auth);
    service.loginFaults.push([
      500,
      { detail: `upstream refused the request with Authorization: ${BASIC}`, headers: { authorization: BASIC } },
    ]);

    const error = await failureOf(api.get('/orders'), isTokenAuthError);

    expect(error.code).toBe('TOKEN_SERVICE_UNAVAILABLE');
    expect(error.status).toBe(500);
    expect(error.message).toContain('HTTP 500');
    expect(axiosCause(error).response?.status).toBe(500);
    expect(service.counters.loginCalls).toBe(1);
    expect(events(recorded)).toEqual(['failure:TOKEN_SERVICE_UNAVAILABLE']);
    expectNothingLeaked(error, recorded, secretsOf(service));
  });
});

describe('errors from the token call', () => {
  /** Logs in, then makes the access token stale so that the next request needs the token call. */
  async function primed(options = {}) {
    const setup = rig(options);
    const recorded = recordEvents(setup.auth);
    await setup.api.get('/prime');
    setup.service.expireAccessTokens();
    return { ...setup, recorded, refresh1: setup.service.issued[1]! };
  }

  it('REFRESH_REJECTED then a failed login: neither error carries the refresh token, the password or the Basic header', async () => {
    const { service, api, recorded, refresh1 } = await primed();
    service.tokenFaults.push([401, { detail: `Refresh token ${refresh1} was revoked`, refresh_token: refresh1 }]);
    service.users.set(USERNAME, 'changed by an administrator');

    const error = await failureOf(api.post('/orders', { qty: 1 }), isTokenAuthError);

    expect(error.code).toBe('LOGIN_REJECTED');
    expect(events(recorded)).toEqual(['login', 'failure:REFRESH_REJECTED', 'failure:LOGIN_REJECTED']);
    const refreshFailure = (recorded[1]?.payload as { error: TokenAuthError }).error;
    expect(refreshFailure.message).toContain('was revoked');
    expect(axiosCause(refreshFailure).config).toEqual({ method: 'post', url: `${service.authBase}${TOKEN}` });
    expect([service.counters.loginCalls, service.counters.refreshCalls, service.counters.dataCalls]).toEqual([2, 1, 2]);
    expect(service.issued).toHaveLength(2);
    expectNothingLeaked(error, recorded, secretsOf(service));
  });

  it('TOKEN_RESPONSE_INVALID names the keys of a token answer it cannot read, not their values', async () => {
    const { service, api, recorded } = await primed();
    const odd = 'eyJhbGciOi.not-for-logs.c2lnbmF0dXJl';
    service.tokenFaults.push([200, { status: true, data: { jwt: odd } }]);

    const error = await failureOf(api.get('/orders'), isTokenAuthError);

    expect(error.code).toBe('TOKEN_RESPONSE_INVALID');
    expect(error.message).toContain('keys status, data.jwt');
    expect(service.counters.refreshCalls).toBe(1);
    expect(events(recorded)).toEqual(['login', 'failure:TOKEN_RESPONSE_INVALID']);
    expectNothingLeaked(error, recorded, secretsOf(service, [odd]));
  });

  it('TOKEN_SERVICE_UNAVAILABLE for a 500 whose body echoes the refresh token hides it everywhere', async () => {
    const { service, api, recorded, refresh1 } = await primed({ tokenRetries: 0 });
    service.tokenFaults.push([
      500,
      {
        detail: `cannot refresh ${refresh1} right now`,
        request: { refresh_token: refresh1 },
        raw: `{"refresh_token":"${refresh1}"}`,
      },
    ]);

    const error = await failureOf(api.get('/orders'), isTokenAuthError);

    expect(error.code).toBe('TOKEN_SERVICE_UNAVAILABLE');
    expect(error.status).toBe(500);
    expect(error.message).toContain('cannot refresh');
    expect(axiosCause(error).response?.status).toBe(500);
    expect([service.counters.loginCalls, service.counters.refreshCalls]).toEqual([1, 1]);
    expect(events(recorded)).toEqual(['login', 'failure:TOKEN_SERVICE_UNAVAILABLE']);
    expectNothingLeaked(error, recorded, secretsOf(service));
  });
});

describe('Mask.axiosError', () => {
  it('cleans a low-level cause that quotes the Basic header, and the cause stack axios keeps under a symbol', () => {
    // What an intercepting proxy or a debugging agent may say when it drops the connection.
    const low = Object.assign(new Error(`proxy dropped POST ${LOGIN} (Authorization: ${BASIC})`), {
      code: 'ECONNRESET',
    });
    const config = { url: LOGIN, method: 'post', headers: new AxiosHeaders({ Authorization: BASIC }) };
    const original = AxiosErrorClass.from(low, 'ECONNRESET', config as never, {});

    const redacted = new Mask([BASIC, BASIC_PART, PASSWORD]).axiosError(original);

    expectNoLeaks(redacted, credentialSecrets(USERNAME, PASSWORD));
    expect(redacted).toBeInstanceOf(AxiosErrorClass);
    expect(redacted.code).toBe('ECONNRESET');
    expect((redacted.cause as Error).message).toBe(`proxy dropped POST ${LOGIN} (Authorization: [REDACTED])`);
    expect(redacted.config?.headers.Authorization).toBe('Basic [REDACTED]');
    // The original is left as it was, for whoever else holds it.
    expect(original.config?.headers.Authorization).toBe(BASIC);
  });
});
