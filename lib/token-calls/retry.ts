// The retries of the login and token calls: which failures may go again, and how long to wait before they do. The
// rules are axios-retry's (4.5), which the plugin used before, written out so that a browser app does not ship it.
// A leaf: it imports nothing from above.
import { isAxiosError } from 'axios';
import type { AxiosError } from 'axios';

/**
 * Codes of a call that got no answer, for which another try is not made: one that would fail the same way again at
 * once (a name that does not resolve, a network out of reach, a certificate that is not trusted: is-retry-allowed's
 * list (2.2.0), through which axios-retry decides, whose certificate codes all name a CERT, CRL, ISSUER or
 * LEAF_SIGNATURE); a timeout (the service may still be working on the call, and each wait already cost
 * `tokenTimeoutMs`); a cancellation; and an answer too large to read, which axios reports without its response.
 */
const NOT_RETRIED =
  /CERT|CRL|ISSUER|LEAF_SIGNATURE|^(ENOTFOUND|ENETUNREACH|OUT_OF_MEM|INVALID_CA|INVALID_PURPOSE|PATH_LENGTH_EXCEEDED|HOSTNAME_MISMATCH|ECONNABORTED|ERR_CANCELED|ERR_BAD_RESPONSE)$/;

/** How a login or token call is retried: the plugin's `tokenRetries`, `tokenRetryDelayMs` and `tokenTimeoutMs`. */
export interface RetryPolicy {
  retries: number;
  delayMs: number;
  timeoutMs: number;
}

/** A call that failed without an answer, in a way another try may cure (a connection refused or dropped). */
export function isNetworkFault(error: AxiosError): boolean {
  return error.response === undefined && !!error.code && !NOT_RETRIED.test(error.code);
}

/** How long the answer's `Retry-After` asks to wait, in seconds or until an HTTP date; 0 without one. */
function retryAfterMs(error: AxiosError): number {
  // axios gives a response header as a string (Node keeps the first of repeated Retry-After headers).
  const header: unknown = error.response?.headers['retry-after'];
  if (typeof header !== 'string' || header === '') return 0;
  const ms = (Number(header) || 0) * 1000 || (new Date(header).valueOf() || 0) - Date.now();
  return Math.max(0, ms);
}

/**
 * Runs `attempt`, and again after a failure that may be passing, `policy.retries` times at most: a network fault, or
 * an answer of 429 or 5xx, unless its `Retry-After` asks for longer than `policy.timeoutMs`. POST is not idempotent,
 * but a token call that failed this way produced no token we could lose. Anything else (a 4xx, a timeout, an error
 * `attempt` throws itself, such as the budget's refusal) ends the retries with that error. The wait before retry `n`
 * (from 0) is `policy.delayMs` doubled `n` times, or `Retry-After` when longer, plus up to 20% of it at random so that
 * clients refused together do not come back together.
 */
export async function withRetries<T>(attempt: () => Promise<T>, policy: RetryPolicy): Promise<T> {
  for (let retry = 0; ; retry += 1) {
    try {
      return await attempt();
    } catch (error) {
      if (retry >= policy.retries || !isAxiosError(error)) throw error;
      const status = error.response?.status;
      const passing = status === undefined ? isNetworkFault(error) : status === 429 || status >= 500;
      const asked = retryAfterMs(error);
      if (!passing || asked > policy.timeoutMs) throw error;
      const delay = Math.max(2 ** retry * policy.delayMs, asked);
      await new Promise((resolve) => setTimeout(resolve, delay + delay * 0.2 * Math.random()));
    }
  }
}
