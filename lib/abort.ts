import { CanceledError } from 'axios';
import type { InternalAxiosRequestConfig } from 'axios';
import { ABORTED, settle } from './deadline.js';

/**
 * Waits for `promise` on behalf of one request: if the request is aborted (AbortSignal or CancelToken) first,
 * it rejects at once as axios' CanceledError (or the CancelToken's own reason), while the shared promise goes on for
 * the others.
 */
export function abortable<T>(promise: Promise<T>, config: InternalAxiosRequestConfig): Promise<T> {
  const { signal, cancelToken } = config;
  if (!signal && !cancelToken) return promise;
  return untilAborted(promise, config);
}

async function untilAborted<T>(promise: Promise<T>, config: InternalAxiosRequestConfig): Promise<T> {
  const { signal, cancelToken } = config;
  // One signal for both ways axios aborts a request.
  const aborted = new AbortController();
  const abort = (): void => aborted.abort();
  if (signal?.aborted || cancelToken?.reason) abort();
  signal?.addEventListener?.('abort', abort);
  cancelToken?.subscribe(abort);
  try {
    const outcome = await settle(promise, { signal: aborted.signal });
    if (outcome !== ABORTED) return outcome as T;
    // eslint-disable-next-line @typescript-eslint/only-throw-error -- as axios: the CancelToken's own reason
    throw cancelToken?.reason ?? new CanceledError<unknown>(undefined, config);
  } finally {
    signal?.removeEventListener?.('abort', abort);
    cancelToken?.unsubscribe(abort);
  }
}

/** Throws as axios would for a request aborted before it started, so that it starts no login or renewal. */
export function throwIfCanceled(config: InternalAxiosRequestConfig): void {
  // eslint-disable-next-line @typescript-eslint/only-throw-error -- as axios: a CanceledError, typed as Cancel
  if (config.cancelToken?.reason) throw config.cancelToken.reason;
  if (config.signal?.aborted) throw new CanceledError<unknown>(undefined, config);
}

/** Whether `promise` fulfils: true, or false once it rejects. */
export function succeeds(promise: Promise<unknown>): Promise<boolean> {
  return promise.then(
    () => true,
    () => false,
  );
}
