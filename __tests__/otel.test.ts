import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { metrics, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import type { Attributes, SpanStatus } from '@opentelemetry/api';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { DataPointType, MeterProvider, MetricReader } from '@opentelemetry/sdk-metrics';
import axios from 'axios';
import { instrumentTokenAuth } from 'axios-token-keeper/otel';
import type { TokenAuthTelemetryOptions } from 'axios-token-keeper/otel';
import { attachTokenAuth, isTokenAuthError } from '../lib/index.js';
import type { TokenAuth } from '../lib/index.js';
import type { TokenServiceEmulator } from '../lib/emulator/index.js';
import { closeEmulatorsAfterEach, e2e, E2E_PASSWORD, E2E_USER } from './helpers/emulator.js';
import { burst, fulfilled, manualClock, until } from './helpers/flow.js';
import { failureOf } from './helpers/settled.js';
import { expectNoLeaks, pairSpellings, spellingsOf } from './helpers/scan-secrets.js';
import type { Secret } from './helpers/scan-secrets.js';

// The spans and metrics of axios-token-keeper/otel, recorded by the real OpenTelemetry SDK (an in-memory span
// exporter, a metric reader collected on demand), of an attachment on the emulator over real HTTP.
closeEmulatorsAfterEach();

const ORDERS = '/allocation/api/v1/tracking/order-list';
/** What every span and point of the attachment under test carries, as a user would tell attachments apart. */
const ACCOUNT = { 'token_keeper.account': 'orders' };
const UNSET: SpanStatus = { code: SpanStatusCode.UNSET };

/** A metric reader that collects when asked; nothing exports by itself. */
class CollectingReader extends MetricReader {
  protected override onShutdown(): Promise<void> {
    return Promise.resolve();
  }

  protected override onForceFlush(): Promise<void> {
    return Promise.resolve();
  }
}

/** One point of a metric as a test reads it: its attributes, and its value (a histogram's count and sum). */
interface Point {
  attributes: Attributes;
  value: number | { count: number; sum: number | undefined };
}

/** A tracer and a meter of the real SDK, and what they recorded. */
function telemetry() {
  const exporter = new InMemorySpanExporter();
  const tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  const reader = new CollectingReader();
  const meterProvider = new MeterProvider({ readers: [reader] });
  return {
    tracer: tracerProvider.getTracer('otel.test'),
    meter: meterProvider.getMeter('otel.test'),
    spans: (): ReadableSpan[] => exporter.getFinishedSpans(),
    /** The points of every metric now, by metric name. */
    async points(): Promise<Record<string, Point[]>> {
      const { resourceMetrics, errors } = await reader.collect();
      expect(errors).toEqual([]);
      const byName: Record<string, Point[]> = {};
      for (const scope of resourceMetrics.scopeMetrics) {
        for (const metric of scope.metrics) {
          byName[metric.descriptor.name] = metric.dataPoints.map(({ attributes, value }) => ({
            attributes,
            value:
              metric.dataPointType === DataPointType.HISTOGRAM
                ? { count: (value as { count: number }).count, sum: (value as { sum?: number }).sum }
                : (value as number),
          }));
        }
      }
      return byName;
    },
  };
}

/** A span as the test compares it: what an exporter would send, but its times and ids. */
function viewOf(span: ReadableSpan) {
  return { name: span.name, kind: span.kind, attributes: span.attributes, status: span.status, events: span.events };
}

/** A span of the attachment as `viewOf` shows it: CLIENT, the account's attributes and `attributes`, no event. */
function expectedSpan(operation: 'login' | 'refresh', attributes: Attributes, status: SpanStatus = UNSET) {
  const name = operation === 'login' ? 'axios-token-keeper login' : 'axios-token-keeper token';
  return {
    name,
    kind: SpanKind.CLIENT,
    attributes: { ...ACCOUNT, 'token_keeper.operation': operation, ...attributes },
    status,
    events: [],
  };
}

/** The attributes of a metric point of the attachment, for one operation and outcome. */
function by(operation: 'login' | 'refresh', outcome: 'success' | 'failure'): Attributes {
  return { ...ACCOUNT, 'token_keeper.operation': operation, 'token_keeper.outcome': outcome };
}

/** The tokens a run handed out, as they came back to the service: Bearer headers and refresh tokens sent. */
function tokensSeenBy(service: TokenServiceEmulator): string[] {
  const tokens = new Set<string>();
  for (const call of service.calls) {
    const bearer = /^Bearer (\S+)$/.exec(call.authorization ?? '')?.[1];
    if (bearer) tokens.add(bearer);
    const refresh = /"refresh_token":"([^"]+)"/.exec(call.body)?.[1];
    if (refresh) tokens.add(refresh);
  }
  return [...tokens];
}

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

  it('puts no secret and no URL in any span or metric point', async () => {
    const { emulator: service, api, auth } = await e2e({ tokenRetries: 1 });
    const otel = telemetry();
    instrumentTokenAuth(auth, { ...otel, attributes: ACCOUNT });

    // A login, a 503 retried, a refused refresh and its login, a wrong password rejected.
    await api.get(ORDERS);
    service.inject('token', { status: 503, body: { detail: 'busy' } });
    service.expireAccessTokens();
    await api.get(ORDERS);
    service.expireAccessTokens();
    service.revokeRefreshTokens();
    await api.get(ORDERS);
    const rejected = await failureOf(auth.login({ username: E2E_USER, password: 'wr0ng: pässwort' }), isTokenAuthError);

    expect(rejected.code).toBe('LOGIN_REJECTED');
    const spans = otel.spans();
    expect(spans.map((span) => [span.name, span.attributes['token_keeper.attempts']])).toEqual([
      ['axios-token-keeper login', 1],
      ['axios-token-keeper token', 2],
      ['axios-token-keeper token', 1],
      ['axios-token-keeper login', 1],
      ['axios-token-keeper login', 1],
    ]);
    const tokens = tokensSeenBy(service);
    expect(tokens.length).toBeGreaterThanOrEqual(4);
    const secrets: Secret[] = [
      ...spellingsOf('password', E2E_PASSWORD),
      ...pairSpellings('username:password', E2E_USER, E2E_PASSWORD),
      ...spellingsOf('wrong password', 'wr0ng: pässwort'),
      ...pairSpellings('username:wrong password', E2E_USER, 'wr0ng: pässwort'),
      ...tokens.flatMap((token, index) => spellingsOf(`token #${index + 1}`, token)),
    ];
    const recorded = { spans: spans.map(viewOf), points: await otel.points() };
    expectNoLeaks(recorded, secrets);
    const text = JSON.stringify(recorded);
    expect(text).not.toContain(service.url.replace(/^http:\/\//, ''));
    expect(text).not.toContain('/auth/api/v1/accounts');
  });

  it('records nothing more once stopped: no span, no point, no observation', async () => {
    const { api, auth } = await e2e();
    const otel = telemetry();
    const stop = instrumentTokenAuth(auth, { ...otel, attributes: ACCOUNT });
    await api.get(ORDERS);
    const before = await otel.points();

    stop();
    stop();
    await auth.refresh();
    await auth.login();
    const after = await otel.points();

    expect(auth.stats()).toMatchObject({ logins: 2, refreshes: 1, budget: { login: 8, refresh: 29 } });
    expect(otel.spans()).toHaveLength(1);
    expect(after['token_keeper.token_calls']).toEqual([{ attributes: by('login', 'success'), value: 1 }]);
    // The SDK keeps reporting the last value it observed; the budget spent since is not observed.
    expect(before['token_keeper.budget.remaining']!.map(({ value }) => value)).toEqual([9, 30]);
    expect(after['token_keeper.budget.remaining']).toEqual(before['token_keeper.budget.remaining']);
    expect(after['token_keeper.requests.waiting']).toEqual(before['token_keeper.requests.waiting']);
  });

  it('tells attachments apart by their attributes on one tracer and meter', async () => {
    const otel = telemetry();
    const rigs = [await e2e(), await e2e()];
    rigs.forEach(({ auth }, index) =>
      instrumentTokenAuth(auth, { ...otel, attributes: { 'token_keeper.account': `account-${index}` } }),
    );

    await rigs[0]!.api.get(ORDERS);
    await rigs[1]!.api.get(ORDERS);
    await rigs[1]!.auth.refresh();

    const calls = (await otel.points())['token_keeper.token_calls']!;
    expect(
      calls.map(({ attributes, value }) => [
        attributes['token_keeper.account'],
        attributes['token_keeper.operation'],
        value,
      ]),
    ).toEqual([
      ['account-0', 'login', 1],
      ['account-1', 'login', 1],
      ['account-1', 'refresh', 1],
    ]);
  });

  it('uses the global providers by default, as axios-token-keeper at the package version', async () => {
    const exporter = new InMemorySpanExporter();
    trace.setGlobalTracerProvider(new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }));
    const reader = new CollectingReader();
    metrics.setGlobalMeterProvider(new MeterProvider({ readers: [reader] }));
    try {
      const { api, auth } = await e2e();
      instrumentTokenAuth(auth);
      await api.get(ORDERS);

      const { version } = JSON.parse(readFileSync(join(__dirname, '..', 'package.json'), 'utf8')) as {
        version: string;
      };
      expect(exporter.getFinishedSpans().map((span) => span.instrumentationScope)).toEqual([
        { name: 'axios-token-keeper', version },
      ]);
      const { resourceMetrics } = await reader.collect();
      expect(resourceMetrics.scopeMetrics.map(({ scope }) => scope)).toEqual([
        expect.objectContaining({ name: 'axios-token-keeper', version }),
      ]);
    } finally {
      trace.disable();
      metrics.disable();
    }
  });

  it('refuses what it cannot work with, naming it', () => {
    const auth = attachTokenAuth(axios.create({ baseURL: 'http://127.0.0.1:1' }), {
      credentials: { username: 'u', password: 'p' },
    });
    const bad = (first: unknown, options?: unknown) => () =>
      instrumentTokenAuth(first as TokenAuth, options as TokenAuthTelemetryOptions);

    expect(bad({})).toThrow(
      new TypeError(
        'instrumentTokenAuth: the first argument must be what `attachTokenAuth(instance, options)` returns.',
      ),
    );
    expect(bad(auth, null)).toThrow('`options` must be an object: { tracer?, meter?, attributes? }');
    expect(bad(auth, { tracer: {} })).toThrow('`tracer` must be an OpenTelemetry Tracer');
    expect(bad(auth, { meter: trace.getTracer('x') })).toThrow('`meter` must be an OpenTelemetry Meter');
    expect(bad(auth, { attributes: 'orders' })).toThrow('`attributes` must be an object');
    expect(bad(auth, { attributes: { account: { name: 'orders' } } })).toThrow(
      '`attributes` `account` must be a string, a number, a boolean or an array of one of them.',
    );
    auth.eject();
  });
});
