/**
 * OpenTelemetry spans and metrics of an attachment, on their own subpath so that the main entry never loads
 * `@opentelemetry/api` (an optional peer dependency): {@link instrumentTokenAuth}.
 *
 * @module axios-token-keeper/otel
 */
import { metrics, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import type { Attributes, AttributeValue, Meter, ObservableCallback, Tracer } from '@opentelemetry/api';
import type { TokenAuthError } from './contract/errors.js';
import type { TokenAuth, TokenCallReport } from './contract/handle.js';
import type { TokenOperation } from './contract/store.js';

/** The instrumentation scope's name: the default tracer's and meter's. */
const SCOPE = 'axios-token-keeper';
/** The package's version, for the instrumentation scope; a test checks it against package.json. */
const VERSION = '0.1.0';

/** Options of {@link instrumentTokenAuth}. All are optional. */
export interface TokenAuthTelemetryOptions {
  /**
   * Records the spans.
   * @default trace.getTracer('axios-token-keeper', VERSION), from the global tracer provider
   */
  tracer?: Tracer;
  /**
   * Records the metrics.
   * @default metrics.getMeter('axios-token-keeper', VERSION), from the global meter provider
   */
  meter?: Meter;
  /**
   * Added to every span and metric point, to tell several attachments apart (the account or the service it calls).
   * Never put a secret here.
   * @default {}
   *
   * @example
   * attributes: { 'token_keeper.account': 'svc-orders' }
   */
  attributes?: Attributes;
}

/** Span names, by the call's operation. */
const SPAN_NAMES: Record<TokenOperation, string> = {
  login: 'axios-token-keeper login',
  refresh: 'axios-token-keeper token',
};

/**
 * Histogram boundaries of the call durations, in seconds: OpenTelemetry's for HTTP client durations, up to the
 * default `tokenTimeoutMs` (15 s) with its retries.
 */
const DURATION_BOUNDARIES = [0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10, 30, 60];
/** Histogram boundaries of the callers that waited for one call: one, a few, a burst. */
const WAITING_BOUNDARIES = [0, 1, 2, 5, 10, 20, 50, 100, 200, 500, 1000];

/** A URL in an error's message, which a span must not carry: the address of the token service or its path. */
const URL_IN_TEXT = /\b[a-z][a-z0-9+.-]*:\/\/[^\s,;)"']*/gi;

/**
 * Records an attachment's login and token calls as OpenTelemetry spans and metrics, from its events and `stats()`;
 * returns the function that stops it (it removes the listeners and the observable callbacks; calling it again does
 * nothing).
 *
 * Spans: one per login (`axios-token-keeper login`) and one per token call (`axios-token-keeper token`), retries
 * included, of kind CLIENT, recorded when the call ends with the time it started. Their attributes:
 * `token_keeper.operation` (`login` or `refresh`), `token_keeper.outcome` (`success` or `failure`),
 * `token_keeper.reason` (the `RenewalReason`), `token_keeper.attempts`, `token_keeper.waiting` (the callers that
 * waited for the renewal), `http.response.status_code` when an answer ended the call, `token_keeper.rotated` on a
 * token call that succeeded, and on a failure `error.type` (the `TokenAuthErrorCode`) with the status ERROR and the
 * error's message without its URLs. No span carries a secret, a URL or a query.
 *
 * Metrics: `token_keeper.token_calls` (counter, by operation and outcome), `token_keeper.renewal.duration`
 * (histogram, seconds, by operation and outcome), `token_keeper.requests.waited` (histogram of the callers that
 * waited for each call), `token_keeper.requests.waiting` (observable up-down counter: the callers waiting now),
 * `token_keeper.replays` (counter, by `http.request.method`) and, unless `tokenBudget` is `false`,
 * `token_keeper.budget.remaining` (observable gauge, by operation).
 *
 * @example
 * const auth = attachTokenAuth(api, { credentials });
 * const stop = instrumentTokenAuth(auth, { attributes: { 'token_keeper.account': 'svc-orders' } });
 * // … and on shutdown:
 * stop();
 */
export function instrumentTokenAuth(auth: TokenAuth, options: TokenAuthTelemetryOptions = {}): () => void {
  const { tracer, meter, base } = checkedTelemetry(auth, options);
  const instruments = instrumentsOf(meter);
  const { waiting, budget, replays } = instruments;
  const observeWaiting: ObservableCallback = (result) => result.observe(auth.stats().waiting, base);
  const observeBudget: ObservableCallback = (result) => {
    const left = auth.stats().budget;
    if (!left) return;
    for (const operation of ['login', 'refresh'] as const)
      result.observe(left[operation], { ...base, 'token_keeper.operation': operation });
  };
  waiting.addCallback(observeWaiting);
  budget.addCallback(observeBudget);
  const ended = recorder(tracer, instruments, base);
  const stops = [
    auth.on('login', (call) => ended('login', call, {})),
    auth.on('refresh', (call) => ended('refresh', call, { 'token_keeper.rotated': call.rotated })),
    auth.on('failure', (event) => {
      // A store failure is no login or token call, nor is a logout call: their `failure` event and `stats()` report them.
      if (event.operation !== 'store' && event.operation !== 'logout') ended(event.operation, event, {}, event.error);
    }),
    auth.on('replay', ({ method }) => replays.add(1, { ...base, 'http.request.method': method })),
  ];
  let stopped = false;
  return () => {
    if (stopped) return;
    stopped = true;
    for (const stop of stops) stop();
    waiting.removeCallback(observeWaiting);
    budget.removeCallback(observeBudget);
  };
}

/** The arguments of instrumentTokenAuth, checked: the handle, the tracer and meter (or the global ones), attributes. */
function checkedTelemetry(
  auth: TokenAuth,
  options: TokenAuthTelemetryOptions,
): { tracer: Tracer; meter: Meter; base: Attributes } {
  if (typeof auth?.on !== 'function' || typeof auth.stats !== 'function') {
    throw new TypeError(
      'instrumentTokenAuth: the first argument must be what `attachTokenAuth(instance, options)` returns.',
    );
  }
  if (typeof options !== 'object' || options === null)
    throw new TypeError('instrumentTokenAuth: `options` must be an object: { tracer?, meter?, attributes? }.');
  const { tracer = trace.getTracer(SCOPE, VERSION), meter = metrics.getMeter(SCOPE, VERSION) } = options;
  if (typeof tracer?.startSpan !== 'function')
    throw new TypeError('instrumentTokenAuth: `tracer` must be an OpenTelemetry Tracer, e.g. `trace.getTracer(name)`.');
  if (typeof meter?.createCounter !== 'function')
    throw new TypeError('instrumentTokenAuth: `meter` must be an OpenTelemetry Meter, e.g. `metrics.getMeter(name)`.');
  return { tracer, meter, base: checkedAttributes(options.attributes) };
}

/** The instruments of an attachment, made on `meter`. */
function instrumentsOf(meter: Meter) {
  return {
    calls: meter.createCounter('token_keeper.token_calls', {
      description: 'Login and token calls that ended, retries included in each.',
      unit: '{call}',
    }),
    durations: meter.createHistogram('token_keeper.renewal.duration', {
      description: 'How long each login and token call took, retries included.',
      unit: 's',
      advice: { explicitBucketBoundaries: DURATION_BOUNDARIES },
    }),
    waited: meter.createHistogram('token_keeper.requests.waited', {
      description: 'Callers (requests, accessToken(), login(), refresh()) that waited for the renewal of each call.',
      unit: '{request}',
      advice: { explicitBucketBoundaries: WAITING_BOUNDARIES },
    }),
    replays: meter.createCounter('token_keeper.replays', {
      description: 'Requests sent again after their token was refused.',
      unit: '{request}',
    }),
    waiting: meter.createObservableUpDownCounter('token_keeper.requests.waiting', {
      description: 'Callers waiting for a renewal now.',
      unit: '{request}',
    }),
    budget: meter.createObservableGauge('token_keeper.budget.remaining', {
      description: 'Login and token calls tokenBudget still allows in its window.',
      unit: '{call}',
    }),
  };
}

/** What records a login or token call that ended: its span, from when it started, and its points. */
function recorder(tracer: Tracer, { calls, durations, waited }: ReturnType<typeof instrumentsOf>, base: Attributes) {
  return (operation: TokenOperation, call: TokenCallReport, extra: Attributes, failure?: TokenAuthError): void => {
    const outcome = failure ? 'failure' : 'success';
    const end = Date.now();
    const by: Attributes = { ...base, 'token_keeper.operation': operation, 'token_keeper.outcome': outcome };
    const attributes: Attributes = {
      ...by,
      'token_keeper.reason': call.reason,
      'token_keeper.attempts': call.attempts,
      'token_keeper.waiting': call.waiting,
      ...extra,
    };
    if (call.status !== undefined) attributes['http.response.status_code'] = call.status;
    if (failure) attributes['error.type'] = failure.code;
    const span = tracer.startSpan(SPAN_NAMES[operation], {
      kind: SpanKind.CLIENT,
      startTime: end - call.durationMs,
      attributes,
    });
    if (failure) span.setStatus({ code: SpanStatusCode.ERROR, message: failure.message.replace(URL_IN_TEXT, '[URL]') });
    span.end(end);
    calls.add(1, by);
    durations.record(call.durationMs / 1000, by);
    waited.record(call.waiting, by);
  };
}

/** The `attributes` option, checked: an object whose values OpenTelemetry can carry. */
function checkedAttributes(attributes: unknown): Attributes {
  if (attributes === undefined) return {};
  if (typeof attributes !== 'object' || attributes === null || Array.isArray(attributes))
    throw new TypeError(
      "instrumentTokenAuth: `attributes` must be an object, e.g. { 'token_keeper.account': 'svc-orders' }.",
    );
  for (const [key, value] of Object.entries(attributes)) {
    if (!isAttributeValue(value)) {
      throw new TypeError(
        `instrumentTokenAuth: \`attributes\` \`${key}\` must be a string, a number, a boolean or an array of one of them.`,
      );
    }
  }
  return { ...(attributes as Attributes) };
}

function isAttributeValue(value: unknown): value is AttributeValue {
  const primitive = (item: unknown) => ['string', 'number', 'boolean'].includes(typeof item);
  return primitive(value) || (Array.isArray(value) && value.every((item) => item == null || primitive(item)));
}
