// How axios-token-keeper/otel is set up and stopped, with the real OpenTelemetry SDK and an attachment on the emulator
// over real HTTP: nothing recorded once stopped, attachments told apart by their attributes on one tracer and meter,
// the global providers by default, and what it refuses, naming it.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { metrics, trace } from '@opentelemetry/api';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { MeterProvider } from '@opentelemetry/sdk-metrics';
import axios from 'axios';
import { instrumentTokenAuth } from 'axios-token-keeper/otel';
import type { TokenAuthTelemetryOptions } from 'axios-token-keeper/otel';
import { attachTokenAuth } from '../lib/index.js';
import type { TokenAuth } from '../lib/index.js';
import { closeEmulatorsAfterEach, e2e } from './helpers/emulator.js';
import { ACCOUNT, by, CollectingReader, ORDERS, telemetry } from './helpers/otel.js';

closeEmulatorsAfterEach();

describe('instrumentTokenAuth', () => {
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
