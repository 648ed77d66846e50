// Connection errors carry no secret: logins dropped until the retries are spent, no token service listening, a token
// call reset mid-answer, a dropped data call, over real sockets against the emulator.
import axios from 'axios';
import type { AxiosError } from 'axios';
import nock from 'nock';
import { attachTokenAuth, isTokenAuthError } from '../lib/index.js';
import { closeEmulatorsAfterEach, emulator, E2E_PASSWORD, E2E_USER } from './helpers/emulator.js';
import { axiosCause, events, leakCheckForFile } from './helpers/leak-checks.js';
import { recordEvents, secretsOf } from './helpers/scan-secrets.js';
import { failureOf } from './helpers/settled.js';

const expectNothingLeaked = leakCheckForFile();

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
