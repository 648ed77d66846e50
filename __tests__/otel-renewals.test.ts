// The spans and metrics of axios-token-keeper/otel for each kind of renewal, recorded by the real OpenTelemetry SDK,
// of an attachment on the emulator over real HTTP: a login, an expiry burst that waits for one token call, the callers
// waiting now, a refused refresh and the login after it, and a call the token budget refused.
import { SpanStatusCode } from '@opentelemetry/api';
import { instrumentTokenAuth } from 'axios-token-keeper/otel';
import { isTokenAuthError } from '../lib/index.js';
import { closeEmulatorsAfterEach, e2e, E2E_PASSWORD, E2E_USER } from './helpers/emulator.js';
import { burst, fulfilled, manualClock, until } from './helpers/flow.js';
import { ACCOUNT, by, expectedSpan, ORDERS, telemetry, viewOf } from './helpers/otel.js';
import { failureOf } from './helpers/settled.js';

closeEmulatorsAfterEach();

describe('instrumentTokenAuth', () => {
  it('records a login: 1 span (success, HTTP 200, 1 attempt, reason no-token) and its points', async () => {
    const { emulator: service, api, auth } = await e2e();
    const otel = telemetry();
    instrumentTokenAuth(auth, { ...otel, attributes: ACCOUNT });

    await api.get(ORDERS);

    expect(service.counters.logins).toBe(1);
    expect(otel.spans().map(viewOf)).toEqual([
      expectedSpan('login', {
        'token_keeper.outcome': 'success',
        'token_keeper.reason': 'no-token',
        'token_keeper.attempts': 1,
        'token_keeper.waiting': 1,
        'http.response.status_code': 200,
      }),
    ]);
    const points = await otel.points();
    expect(points['token_keeper.token_calls']).toEqual([{ attributes: by('login', 'success'), value: 1 }]);
    expect(points['token_keeper.renewal.duration']).toEqual([
      // eslint-disable-next-line @typescript-eslint/no-unsafe-assignment -- jest types its asymmetric matchers as any
      { attributes: by('login', 'success'), value: { count: 1, sum: expect.any(Number) } },
    ]);
    expect(points['token_keeper.requests.waited']).toEqual([
      { attributes: by('login', 'success'), value: { count: 1, sum: 1 } },
    ]);
    expect(points['token_keeper.requests.waiting']).toEqual([{ attributes: ACCOUNT, value: 0 }]);
    // The default budget: 10 login calls and 30 token calls an hour.
    expect(points['token_keeper.budget.remaining']).toEqual([
      { attributes: { ...ACCOUNT, 'token_keeper.operation': 'login' }, value: 9 },
      { attributes: { ...ACCOUNT, 'token_keeper.operation': 'refresh' }, value: 30 },
    ]);
  });

  it('records an expiry burst of 50 requests as 1 token-call span that 50 waited for', async () => {
    const clock = manualClock();
    const {
      emulator: service,
      api,
      auth,
    } = await e2e({ clock: clock.now }, { clock: clock.now, tokenFormat: 'jwt', accessTtlMs: 10 * 60_000 });
    await api.get(ORDERS);
    const otel = telemetry();
    instrumentTokenAuth(auth, { ...otel, attributes: ACCOUNT });
    // The access token is now known to be expired: every request of the burst waits for one renewal before leaving.
    clock.advance(10 * 60_000);

    const results = await burst(50, () => api.get(ORDERS));

    expect(fulfilled(results)).toBe(50);
    expect(service.counters).toMatchObject({ logins: 1, refreshes: 1, unauthorized: 0 });
    expect(otel.spans().map(viewOf)).toEqual([
      expectedSpan('refresh', {
        'token_keeper.outcome': 'success',
        'token_keeper.reason': 'expired',
        'token_keeper.attempts': 1,
        'token_keeper.waiting': 50,
        'token_keeper.rotated': true,
        'http.response.status_code': 200,
      }),
    ]);
    const points = await otel.points();
    expect(points['token_keeper.token_calls']).toEqual([{ attributes: by('refresh', 'success'), value: 1 }]);
    expect(points['token_keeper.requests.waited']).toEqual([
      { attributes: by('refresh', 'success'), value: { count: 1, sum: 50 } },
    ]);
    expect(points['token_keeper.requests.waiting']).toEqual([{ attributes: ACCOUNT, value: 0 }]);
    expect(points['token_keeper.replays']).toBeUndefined();
  });

  it('shows the callers waiting for a renewal now in token_keeper.requests.waiting', async () => {
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    // The credentials are read when the login needs them: held back, they keep the first login, and its waiters, open.
    const {
      emulator: service,
      api,
      auth,
    } = await e2e({
      credentials: async () => {
        await released;
        return { username: E2E_USER, password: E2E_PASSWORD };
      },
    });
    const otel = telemetry();
    instrumentTokenAuth(auth, { ...otel, attributes: ACCOUNT });

    const results = burst(20, () => api.get(ORDERS));
    await until(() => auth.stats().waiting === 20);
    const during = await otel.points();
    release();
    expect(fulfilled(await results)).toBe(20);
    const after = await otel.points();

    expect(service.counters.logins).toBe(1);
    expect(during['token_keeper.requests.waiting']).toEqual([{ attributes: ACCOUNT, value: 20 }]);
    expect(during['token_keeper.token_calls']).toBeUndefined();
    expect(after['token_keeper.requests.waiting']).toEqual([{ attributes: ACCOUNT, value: 0 }]);
    expect(after['token_keeper.requests.waited']).toEqual([
      { attributes: by('login', 'success'), value: { count: 1, sum: 20 } },
    ]);
  });

  it('records a refused refresh as 1 failed token span (HTTP 401), then 1 login span for refresh-rejected', async () => {
    const { emulator: service, api, auth } = await e2e();
    await api.get(ORDERS);
    const otel = telemetry();
    instrumentTokenAuth(auth, { ...otel, attributes: ACCOUNT });
    service.expireAccessTokens();
    service.revokeRefreshTokens();

    await api.get(ORDERS);

    expect(service.counters).toMatchObject({ logins: 2, refreshes: 0, rejected: 1 });
    expect(otel.spans().map(viewOf)).toEqual([
      expectedSpan(
        'refresh',
        {
          'token_keeper.outcome': 'failure',
          'token_keeper.reason': 'rejected',
          'token_keeper.attempts': 1,
          'token_keeper.waiting': 1,
          'http.response.status_code': 401,
          'error.type': 'REFRESH_REJECTED',
        },
        {
          code: SpanStatusCode.ERROR,
          // The error's message, without the token service's address.
          message: expect.stringMatching(
            /^The token service rejected the refresh token \(POST \[URL\], HTTP 401/,
          ) as string,
        },
      ),
      expectedSpan('login', {
        'token_keeper.outcome': 'success',
        'token_keeper.reason': 'refresh-rejected',
        'token_keeper.attempts': 1,
        'token_keeper.waiting': 1,
        'http.response.status_code': 200,
      }),
    ]);
    const points = await otel.points();
    expect(points['token_keeper.token_calls']).toEqual([
      { attributes: by('refresh', 'failure'), value: 1 },
      { attributes: by('login', 'success'), value: 1 },
    ]);
    expect(points['token_keeper.replays']).toEqual([
      { attributes: { ...ACCOUNT, 'http.request.method': 'GET' }, value: 1 },
    ]);
  });

  it('records a call tokenBudget refused as a failed token span of 0 attempts, and the budget left before and after', async () => {
    const { emulator: service, api, auth } = await e2e({ tokenBudget: { logins: 2, refreshes: 1 } });
    const otel = telemetry();
    instrumentTokenAuth(auth, { ...otel, attributes: ACCOUNT });
    const left = async () => (await otel.points())['token_keeper.budget.remaining']!.map(({ value }) => value);

    await api.get(ORDERS);
    const afterLogin = await left();
    service.expireAccessTokens();
    await api.get(ORDERS);
    const afterRefresh = await left();
    service.expireAccessTokens();
    const refused = await failureOf(api.get(ORDERS), isTokenAuthError);
    const afterRefusal = await left();

    expect(refused.code).toBe('TOKEN_BUDGET_EXCEEDED');
    expect(service.counters).toMatchObject({ logins: 1, refreshes: 1, tokenCalls: 2 });
    // [login, refresh] left: the refused call spent nothing.
    expect([afterLogin, afterRefresh, afterRefusal]).toEqual([
      [1, 1],
      [1, 0],
      [1, 0],
    ]);
    const spans = otel.spans().map(viewOf);
    expect(spans.map(({ name, attributes }) => [name, attributes['token_keeper.outcome']])).toEqual([
      ['axios-token-keeper login', 'success'],
      ['axios-token-keeper token', 'success'],
      ['axios-token-keeper token', 'failure'],
    ]);
    // No call left, so no answer came: no HTTP status.
    expect(spans[2]).toEqual(
      expectedSpan(
        'refresh',
        {
          'token_keeper.outcome': 'failure',
          'token_keeper.reason': 'rejected',
          'token_keeper.attempts': 0,
          'token_keeper.waiting': 1,
          'error.type': 'TOKEN_BUDGET_EXCEEDED',
        },
        { code: SpanStatusCode.ERROR, message: refused.message },
      ),
    );
    expect((await otel.points())['token_keeper.token_calls']).toEqual([
      { attributes: by('login', 'success'), value: 1 },
      { attributes: by('refresh', 'success'), value: 1 },
      { attributes: by('refresh', 'failure'), value: 1 },
    ]);
  });
});
