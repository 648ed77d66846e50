import axios, { AxiosError as AxiosErrorClass, AxiosHeaders } from 'axios';
import type { AxiosError } from 'axios';
import nock from 'nock';
import { attachTokenAuth, isTokenAuthError, MemoryTokenStore } from '../lib/index.js';
import { Mask } from '../lib/support/redact.js';
import { closeEmulatorsAfterEach, emulator, E2E_PASSWORD, E2E_USER } from './helpers/emulator.js';
import type { TokenAuthError } from '../lib/index.js';
import {
  basicHeader,
  captureConsole,
  causeChain,
  credentialSecrets,
  expectNoLeaks,
  findLeaks,
  recordEvents,
  secretsOf,
} from './helpers/scan-secrets.js';
import type { Recorded, Secret } from './helpers/scan-secrets.js';
import { API, FakeTokenService, LOGIN, PASSWORD, TOKEN, USERNAME } from './helpers/service.js';
import { rig, until, useNock } from './helpers/setup.js';
import { failureOf } from './helpers/settled.js';

useNock();

let consoleCalls: unknown[][];
beforeEach(() => {
  consoleCalls = captureConsole();
});
afterEach(() => {
  jest.restoreAllMocks();
});

const BASIC = basicHeader();
const BASIC_PART = BASIC.slice('Basic '.length);

/**
 * Scans everything that reached the user (the error and each link of its cause chain, every event payload, and
 * console output), wherever a secret can be reached in it, and fails naming each place one was found.
 */
function expectNothingLeaked(error: unknown, events: Recorded[], secrets: Secret[]): void {
  const leaks = [
    ...causeChain(error).flatMap((link, index) =>
      findLeaks(link, secrets, { reachable: true }).map((leak) => ({ in: `cause chain [${index}]`, ...leak })),
    ),
    ...events.flatMap(({ event, payload }, index) =>
      findLeaks(payload, secrets, { reachable: true }).map((leak) => ({ in: `event ${index} (${event})`, ...leak })),
    ),
    ...findLeaks(consoleCalls, secrets, { reachable: true }).map((leak) => ({ in: 'console', ...leak })),
  ];
  expect(leaks).toEqual([]);
  // The library reports through events, never through the console.
  expect(consoleCalls).toEqual([]);
}

/** The axios error the plugin keeps as `cause`, with its config (where axios keeps headers, auth and data). */
function axiosCause(error: TokenAuthError): AxiosError {
  const cause = error.cause as AxiosError;
  expect(axios.isAxiosError(cause)).toBe(true);
  expect(cause.config).toBeDefined();
  return cause;
}

function events(recorded: Recorded[]): string[] {
  return recorded.map(({ event, payload }) =>
    event === 'failure' ? `failure:${(payload as { code: string }).code}` : event,
  );
}

/** Which secrets each call to the service carried in any header or its body, in the order received. */
function carried(service: FakeTokenService): Array<[string, string, string[]]> {
  const names = new Map<string, string>([
    [PASSWORD, 'password'],
    [BASIC_PART, 'basic'],
  ]);
  service.issued.forEach((token, index) =>
    names.set(token, `${index % 2 === 0 ? 'access' : 'refresh'}${Math.floor(index / 2) + 1}`),
  );
  return service.received.map((entry) => {
    const text = `${JSON.stringify(entry.headers)}\n${entry.body}`;
    return [entry.route, entry.path, [...names].filter(([secret]) => text.includes(secret)).map(([, name]) => name)];
  });
}

describe('which call carries which secret', () => {
  it('sends the Basic header to the login call alone, each refresh token to the token call alone, and access tokens to data calls alone', async () => {
    const { service, api } = rig();

    await api.get('/a');
    service.expireAccessTokens();
    await api.post('/b', { note: 'hello' });
    service.expireAccessTokens();
    await api.get('/c');

    expect(service.issued).toHaveLength(6);
    expect(carried(service)).toEqual([
      ['login', LOGIN, ['basic']],
      ['data', '/a', ['access1']],
      ['data', '/b', ['access1']],
      ['token', TOKEN, ['refresh1']],
      ['data', '/b', ['access2']],
      ['data', '/c', ['access2']],
      ['token', TOKEN, ['refresh2']],
      ['data', '/c', ['access3']],
    ]);
    const [access1, refresh1, access2, refresh2, access3] = service.issued;
    expect(service.received.map((entry) => entry.authorization)).toEqual([
      BASIC,
      `Bearer ${access1}`,
      `Bearer ${access1}`,
      undefined,
      `Bearer ${access2}`,
      `Bearer ${access2}`,
      undefined,
      `Bearer ${access3}`,
    ]);
    const tokenBodies = service.received
      .filter((entry) => entry.route === 'token')
      .map((entry) => JSON.parse(entry.body) as unknown);
    expect(tokenBodies).toEqual([{ refresh_token: refresh1 }, { refresh_token: refresh2 }]);
    expect(service.received.filter((entry) => entry.route === 'data').map((entry) => entry.body)).toEqual([
      '',
      '{"note":"hello"}',
      '{"note":"hello"}',
      '',
      '',
    ]);
  });
});

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

describe('axios errors of data calls that reach the caller', () => {
  it('a 401 the replay did not cure is a masked AxiosError that user code can still read and retry', async () => {
    const { service, api, auth } = rig();
    const recorded = recordEvents(auth);
    await api.get('/prime');
    service.alwaysUnauthorized.add('/reports/7');

    const error = (await failureOf(api.post('/reports/7', { format: 'pdf' }))) as AxiosError;

    expect(axios.isAxiosError(error)).toBe(true);
    expect(isTokenAuthError(error)).toBe(false);
    expect(error.response?.status).toBe(401);
    expect(error.request).toBeTruthy();
    expect(error.config?.headers.Authorization).toMatch(/^Bearer \S/);
    expect(service.received.filter((entry) => entry.path === '/reports/7')).toHaveLength(2);
    expect(service.counters.refreshCalls).toBe(1);
    expect(events(recorded)).toEqual(['login', 'refresh', 'replay']);
    expectNothingLeaked(error, recorded, secretsOf(service));

    // The user retries with the config from the error: the plugin puts the current token back on it.
    service.alwaysUnauthorized.delete('/reports/7');
    const retried = await api.request(error.config!);
    const current = (await auth.getTokens())?.access;

    expect(retried.status).toBe(200);
    expect(retried.data).toMatchObject({ method: 'POST', path: '/reports/7', body: '{"format":"pdf"}' });
    expect(service.received.at(-1)).toMatchObject({ path: '/reports/7', authorization: `Bearer ${current}` });
    expect(current).toBe(service.issued[2]);
    expect(service.counters.refreshCalls).toBe(1);
    expect(auth.stats()).toMatchObject({ logins: 1, refreshes: 1, replays: 1, failures: 0 });
  });

  it('masks the token wherever a custom applyToken put it (another header, the query)', async () => {
    const { service, api, auth } = rig({
      applyToken: (config, access) => {
        config.headers.set('X-Api-Token', access);
        config.params = { ...(config.params as Record<string, unknown> | undefined), access_token: access };
      },
    });
    const recorded = recordEvents(auth);

    // The fake service wants a Bearer header, so it refuses this token and its successor: the replay's 401 reaches the caller.
    const error = (await failureOf(api.get('/reports', { params: { year: 2026 } }))) as AxiosError;

    expect(axios.isAxiosError(error)).toBe(true);
    expect(error.response?.status).toBe(401);
    expect(error.config?.params).toMatchObject({ year: 2026 });
    expect(error.config?.headers['X-Api-Token']).toEqual(expect.any(String));
    expect(
      service.received.filter((entry) => entry.route === 'data').map((entry) => entry.headers['x-api-token']),
    ).toEqual([service.issued[0], service.issued[2]]);
    expect(events(recorded)).toEqual(['login', 'refresh', 'replay']);
    expectNothingLeaked(error, recorded, secretsOf(service));
  });

  it('an error other than 401 of a request that carried the token is masked as well', async () => {
    nock(API).get('/unstable').reply(503, { detail: 'maintenance' });
    const { service, api, auth } = rig();
    const recorded = recordEvents(auth);
    await api.get('/prime');

    const error = (await failureOf(api.get('/unstable'))) as AxiosError;

    expect(axios.isAxiosError(error)).toBe(true);
    expect(error.response?.status).toBe(503);
    expect(error.request).toBeTruthy();
    expect(error.config?.headers.Authorization).toMatch(/^Bearer \S/);
    expect(events(recorded)).toEqual(['login']);
    expect(service.issued).toHaveLength(2);
    expectNothingLeaked(error, recorded, secretsOf(service));
  });

  it('a request aborted while it waits for the renewal its 401 started does not carry the refused token', async () => {
    const { service, api, auth } = rig();
    const recorded = recordEvents(auth);
    await api.get('/prime');
    service.expireAccessTokens();
    service.tokenDelayMs = 50;
    const controller = new AbortController();

    const pending = failureOf(api.get('/orders', { signal: controller.signal }));
    await until(() => service.counters.refreshCalls === 1);
    controller.abort();
    const error = (await pending) as AxiosError;

    expect(axios.isCancel(error)).toBe(true);
    expect(service.received.filter((entry) => entry.path === '/orders')).toHaveLength(1);
    await until(() => service.issued.length === 4);
    expectNothingLeaked(error, recorded, secretsOf(service));
  });
});

describe('event payloads', () => {
  it('login, refresh, load, replay, failure and logout carry no secret', async () => {
    const store = new MemoryTokenStore();
    const first = rig({ store, tokenRetries: 0 });
    const second = rig({ store, tokenRetries: 0 }, first.service);
    const { service } = first;
    const firstEvents = recordEvents(first.auth);
    const secondEvents = recordEvents(second.auth);

    await first.api.get('/one');
    service.expireAccessTokens();
    await first.api.get('/two');
    service.expireAccessTokens();
    service.tokenFaults.push([503, { detail: `busy, retry ${service.issued[3]} later` }]);
    const error = await failureOf(second.api.get('/three'));
    await first.auth.logout();

    expect(events(firstEvents)).toEqual(['login', 'refresh', 'replay', 'logout']);
    expect(events(secondEvents)).toEqual(['load', 'load', 'failure:TOKEN_SERVICE_UNAVAILABLE']);
    expect(service.issued).toHaveLength(4);
    expectNothingLeaked(error, [...firstEvents, ...secondEvents], secretsOf(service));
  });
});

// Connection errors come from real sockets (the emulator dropping or resetting them, a port nobody listens on):
// nock's simulated socket errors are unreliable in nock 14.
describe('connection errors, over real sockets', () => {
  closeEmulatorsAfterEach();
  beforeEach(() => {
    nock.enableNetConnect('127.0.0.1');
  });

  const credentials = { username: E2E_USER, password: E2E_PASSWORD };
  const emulatorSecrets = (issued: string[]) => secretsOf({ issued }, [], [E2E_USER, E2E_PASSWORD]);

  it('TOKEN_SERVICE_UNAVAILABLE after dropped login connections, retries spent, hides the credentials', async () => {
    const service = await emulator();
    service.inject('login', 'drop', 2);
    const api = axios.create({ baseURL: service.url });
    const auth = attachTokenAuth(api, { credentials, tokenRetries: 1, tokenRetryDelayMs: 1 });
    const recorded = recordEvents(auth);

    const error = await failureOf(api.get('/orders'), isTokenAuthError);

    expect(error.code).toBe('TOKEN_SERVICE_UNAVAILABLE');
    expect(axiosCause(error).code).toBe('ECONNRESET');
    expect(service.counters.tokenCalls).toBe(2);
    expect(events(recorded)).toEqual(['failure:TOKEN_SERVICE_UNAVAILABLE']);
    expectNothingLeaked(error, recorded, emulatorSecrets([]));
  });

  it('TOKEN_SERVICE_UNAVAILABLE when nothing listens at the token service, hides the credentials', async () => {
    const data = await emulator();
    const gone = await emulator();
    const authBaseURL = gone.url;
    await gone.close();
    const api = axios.create({ baseURL: data.url });
    const auth = attachTokenAuth(api, { credentials, authBaseURL, tokenRetries: 1, tokenRetryDelayMs: 1 });
    const recorded = recordEvents(auth);

    const error = await failureOf(api.get('/orders'), isTokenAuthError);

    expect(error.code).toBe('TOKEN_SERVICE_UNAVAILABLE');
    expect(axiosCause(error).code).toBe('ECONNREFUSED');
    expect(data.calls).toEqual([]);
    expectNothingLeaked(error, recorded, emulatorSecrets([]));
  });

  it('TOKEN_SERVICE_UNAVAILABLE after a token call reset mid-answer hides the refresh token that was in the body', async () => {
    const service = await emulator();
    const api = axios.create({ baseURL: service.url });
    const auth = attachTokenAuth(api, { credentials, tokenRetries: 0 });
    const recorded = recordEvents(auth);
    await api.get('/prime');
    const tokens = await auth.getTokens();
    service.expireAccessTokens();
    service.inject('token', 'reset');

    const error = await failureOf(api.get('/orders'), isTokenAuthError);

    expect(error.code).toBe('TOKEN_SERVICE_UNAVAILABLE');
    expect(error.message).toMatch(
      /answered POST http:\/\/127\.0\.0\.1:\d+\/auth\/api\/v1\/accounts\/token with an answer that was cut off/,
    );
    expect(service.calls.filter((call) => call.route === 'token').map((call) => call.body)).toEqual([
      JSON.stringify({ refresh_token: tokens?.refresh }),
    ]);
    expect(events(recorded)).toEqual(['login', 'failure:TOKEN_SERVICE_UNAVAILABLE']);
    expectNothingLeaked(error, recorded, emulatorSecrets([tokens!.access, tokens!.refresh!]));
  });

  it('a dropped data call that carried the token reaches the caller masked, and usable', async () => {
    const service = await emulator();
    const api = axios.create({ baseURL: service.url });
    const auth = attachTokenAuth(api, { credentials });
    const recorded = recordEvents(auth);
    await api.get('/prime');
    const tokens = await auth.getTokens();
    service.inject('data', 'drop');

    const error = (await failureOf(api.get('/flaky'))) as AxiosError;

    expect(axios.isAxiosError(error)).toBe(true);
    expect(error.code).toBe('ECONNRESET');
    expect(error.request).toBeTruthy();
    expect(error.config?.headers.Authorization).toBe('Bearer [REDACTED]');
    expect((await api.request(error.config!)).status).toBe(200);
    expectNothingLeaked(error, recorded, emulatorSecrets([tokens!.access, tokens!.refresh!]));
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
