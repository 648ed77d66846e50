// What the tests of axios-token-keeper/otel (otel-*.test.ts) share: the real OpenTelemetry SDK (an in-memory span
// exporter, a metric reader collected on demand), and the spans and points of an attachment as a test compares them.
import { SpanKind, SpanStatusCode } from '@opentelemetry/api';
import type { Attributes, SpanStatus } from '@opentelemetry/api';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { DataPointType, MeterProvider, MetricReader } from '@opentelemetry/sdk-metrics';

/** The path the requests go to. */
export const ORDERS = '/allocation/api/v1/tracking/order-list';
/** What every span and point of the attachment under test carries, as a user would tell attachments apart. */
export const ACCOUNT = { 'token_keeper.account': 'orders' };
const UNSET: SpanStatus = { code: SpanStatusCode.UNSET };

/** A metric reader that collects when asked; nothing exports by itself. */
export class CollectingReader extends MetricReader {
  protected override onShutdown(): Promise<void> {
    return Promise.resolve();
  }

  protected override onForceFlush(): Promise<void> {
    return Promise.resolve();
  }
}

/** One point of a metric as a test reads it: its attributes, and its value (a histogram's count and sum). */
export interface Point {
  attributes: Attributes;
  value: number | { count: number; sum: number | undefined };
}

/** A tracer and a meter of the real SDK, and what they recorded. */
export function telemetry() {
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
export function viewOf(span: ReadableSpan) {
  return { name: span.name, kind: span.kind, attributes: span.attributes, status: span.status, events: span.events };
}

/** A span of the attachment as `viewOf` shows it: CLIENT, the account's attributes and `attributes`, no event. */
export function expectedSpan(operation: 'login' | 'refresh', attributes: Attributes, status: SpanStatus = UNSET) {
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
export function by(operation: 'login' | 'refresh', outcome: 'success' | 'failure'): Attributes {
  return { ...ACCOUNT, 'token_keeper.operation': operation, 'token_keeper.outcome': outcome };
}
