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
  if (signal?.aborted) return Promise.reject(canceled());
  if (cancelToken?.reason) return Promise.reject(cancelToken.reason);
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
