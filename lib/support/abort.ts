// A request's own bounds while it waits on something the plugin shares (a renewal, a read of the store): its abort
// (AbortSignal or CancelToken) and its axios `timeout`, which bounds the whole request, its waits and its replay
// included, as the app (or an ingress in front of it) expects.
import { AxiosError, CanceledError } from 'axios';
import type { AxiosAdapter, AxiosResponse, InternalAxiosRequestConfig } from 'axios';
import { ABORTED, settle, TIMED_OUT } from './deadline.js';

/** When the request must be done (epoch ms by the attachment's clock), on its config: no state of this module's. */
const DEADLINE = Symbol('axios-token-keeper.deadline');
type Bounded = InternalAxiosRequestConfig & { [DEADLINE]?: number };

/** The time now, by the attachment's `clock`. */
export type Clock = () => number;

/** Starts the clock of `config`'s `timeout`, if it has one, at `now`. */
export function startDeadline(config: InternalAxiosRequestConfig, now: number): void {
  if (config.timeout) (config as Bounded)[DEADLINE] = now + config.timeout;
}

/** The error axios gives a request whose `timeout` ran out, as its adapters make it. */
function timedOut(config: InternalAxiosRequestConfig): AxiosError {
  const code = config.transitional?.clarifyTimeoutError ? 'ETIMEDOUT' : 'ECONNABORTED';
  return new AxiosError(config.timeoutErrorMessage || `timeout of ${config.timeout}ms exceeded`, code, config);
}

/**
 * What a request waiting on a shared promise says when its `timeout` runs out: undefined for axios' own error. It may
 * take a moment to tell (a store call under way that may be failing).
 */
export type TimedOut = (config: InternalAxiosRequestConfig) => Error | undefined | Promise<Error | undefined>;

/**
 * Waits for `promise` on behalf of one request: if the request is aborted (AbortSignal or CancelToken) first, it
 * rejects at once as axios' CanceledError (or the CancelToken's own reason), and once its `timeout` runs out as axios'
 * timeout error (or what `timedOut` says the wait ran out on), while the shared promise goes on for the others.
 */
export function abortable<T>(
  promise: Promise<T>,
  config: InternalAxiosRequestConfig,
  bounds: { clock: Clock; timedOut?: TimedOut },
): Promise<T> {
  const { signal, cancelToken } = config;
  if (!signal && !cancelToken && (config as Bounded)[DEADLINE] === undefined) return promise;
  return untilAborted(promise, config, bounds);
}

async function untilAborted<T>(
  promise: Promise<T>,
  config: InternalAxiosRequestConfig,
  { clock, timedOut: why }: { clock: Clock; timedOut?: TimedOut },
): Promise<T> {
  const { signal, cancelToken } = config;
  // One signal for both ways axios aborts a request.
  const aborted = new AbortController();
  const abort = (): void => aborted.abort();
  if (signal?.aborted || cancelToken?.reason) abort();
  signal?.addEventListener?.('abort', abort);
  cancelToken?.subscribe(abort);
  const deadline = (config as Bounded)[DEADLINE];
  try {
    const ms = deadline === undefined ? Infinity : deadline - clock();
    const outcome = await settle(promise, { signal: aborted.signal, ms });
    if (outcome === TIMED_OUT) throw (await why?.(config)) ?? timedOut(config);
    if (outcome !== ABORTED) return outcome;
    // eslint-disable-next-line @typescript-eslint/only-throw-error -- as axios: the CancelToken's own reason
    throw cancelToken?.reason ?? new CanceledError<unknown>(undefined, config);
  } finally {
    signal?.removeEventListener?.('abort', abort);
    cancelToken?.unsubscribe(abort);
  }
}

/**
 * Sends `config` through `adapter` within what is left of its `timeout` after the waits before (the adapter is given
 * the rest, and says "timeout of {the request's own} ms exceeded" as axios would); at once when nothing is left.
 */
export function sendWithin(
  adapter: AxiosAdapter,
  config: InternalAxiosRequestConfig,
  clock: Clock,
): Promise<AxiosResponse> {
  const deadline = (config as Bounded)[DEADLINE];
  if (deadline === undefined) return adapter(config);
  const left = deadline - clock();
  if (left <= 0) return Promise.reject(timedOut(config));
  const { timeout, timeoutErrorMessage } = config;
  config.timeoutErrorMessage = timeoutErrorMessage || `timeout of ${timeout}ms exceeded`;
  config.timeout = Math.ceil(left);
  // The caller's config is as it was once the send is over: a retry of its own starts from its own timeout.
  return adapter(config).finally(() => {
    config.timeout = timeout;
    config.timeoutErrorMessage = timeoutErrorMessage;
  });
}

/** Throws as axios would for a request aborted before it started, so that it starts no login or renewal. */
export function throwIfCanceled(config: InternalAxiosRequestConfig): void {
  // eslint-disable-next-line @typescript-eslint/only-throw-error -- as axios: a CanceledError, typed as Cancel
  if (config.cancelToken?.reason) throw config.cancelToken.reason;
  if (config.signal?.aborted) throw new CanceledError<unknown>(undefined, config);
}
