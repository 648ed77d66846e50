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
  // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- as axios: the CancelToken's own reason
  if (signal?.aborted || cancelToken?.reason) return Promise.reject(cancelToken?.reason ?? canceled());
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(canceled());
    // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- as axios: the CancelToken's reason
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
