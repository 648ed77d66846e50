import { CanceledError } from 'axios';
import type { InternalAxiosRequestConfig } from 'axios';

/**
 * Waits for `promise` on behalf of one request: if the request is aborted (AbortSignal or CancelToken) first,
 * it rejects at once as axios' CanceledError, while the shared promise goes on for the others.
 */
export function abortable<T>(promise: Promise<T>, config: InternalAxiosRequestConfig): Promise<T> {
  const { signal, cancelToken } = config;
  if (!signal && !cancelToken) return promise;
  const canceled = () => new CanceledError<unknown>(undefined, config);
  if (signal?.aborted || cancelToken?.reason) return Promise.reject(cancelToken?.reason ?? canceled());
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(canceled());
    const onCancel = (reason: unknown) => reject(reason);
    signal?.addEventListener?.('abort', onAbort);
    cancelToken?.subscribe(onCancel);
    promise.then(resolve, reject).finally(() => {
      signal?.removeEventListener?.('abort', onAbort);
      cancelToken?.unsubscribe(onCancel);
    });
  });
}

/** Throws as axios would for a request aborted before it started, so that it starts no login or renewal. */
export function throwIfCanceled(config: InternalAxiosRequestConfig): void {
  if (config.cancelToken?.reason) throw config.cancelToken.reason;
  if (config.signal?.aborted) throw new CanceledError<unknown>(undefined, config);
}
