// Which failed login and token calls go again, and after how long: axios-retry on the private instance the token
// calls go through, with the plugin's rules, so that its retries are axios-retry's and not a copy of them.
import axiosRetry, { exponentialDelay, isNetworkError, retryAfter } from 'axios-retry';
import type { AxiosError, AxiosInstance } from 'axios';

/** How a login or token call is retried: the plugin's `tokenRetries`, `tokenRetryDelayMs` and `tokenTimeoutMs`. */
export interface RetryPolicy {
  retries: number;
  delayMs: number;
  timeoutMs: number;
}

/**
 * Whether a failed attempt goes again: a network fault another try may cure (a connection refused or dropped: axios-
 * retry's `isNetworkError`, which leaves out timeouts, cancels and what would fail again at once, a name that does not
 * resolve or a certificate not trusted) but for an answer too large to read, which axios reports without its response;
 * or an answer of 429 or 5xx, unless its `Retry-After` asks for longer than `timeoutMs`. POST is not idempotent, but a
 * token call that failed this way produced no token we could lose.
 */
export function isRetried(error: AxiosError, { timeoutMs }: Pick<RetryPolicy, 'timeoutMs'>): boolean {
  const status = error.response?.status;
  if (status === undefined) return isNetworkError(error) && error.code !== 'ERR_BAD_RESPONSE';
  return (status === 429 || status >= 500) && retryAfter(error) <= timeoutMs;
}

/**
 * Retries the calls of `instance` as `policy` says: `policy.retries` times at most, the wait before retry `n` (from 1)
 * `policy.delayMs` doubled `n - 1` times, or `Retry-After` when longer, plus up to 20% of it at random, so that clients
 * refused together do not come back together. Each retry passes the instance's request interceptors again, and has
 * the whole `timeoutMs`.
 */
export function retryCalls(instance: AxiosInstance, policy: RetryPolicy): void {
  axiosRetry(instance, {
    retries: policy.retries,
    retryCondition: (error) => isRetried(error, policy),
    retryDelay: (retry, error) => exponentialDelay(retry - 1, error, policy.delayMs),
    shouldResetTimeout: true,
  });
}
