// The adapter of the token calls' private instance: each call with its DPoP proof (with `dpop`), each bounded by a
// clock of the plugin's own.
import { AxiosError } from 'axios';
import type { AxiosAdapter } from 'axios';
import type { DpopLink } from '../dpop/link.js';
import { settle } from '../support/deadline.js';

/** `adapter`, with `dpop` each call sent with its proof. */
export function withProofs(adapter: AxiosAdapter, dpop: DpopLink | undefined): AxiosAdapter {
  return dpop ? dpop.wrap(adapter) : adapter;
}

/**
 * `adapter`, each call of it bounded by a clock of the plugin's own: axios' `timeout` is not enough, since before 1.16
 * its Node adapter times a call without redirects from the socket on, so a connection that never completes (a host
 * that drops packets) waits for the system, minutes, not `tokenTimeoutMs`. The call ends as axios would end it.
 */
export function bounded(adapter: AxiosAdapter, timeoutMs: number): AxiosAdapter {
  return async (config) => {
    const abort = new AbortController();
    // On the config itself, which the error of a failed attempt carries to the retry: taken off after the attempt.
    config.signal = abort.signal;
    try {
      const answer = await settle(adapter(config), { ms: timeoutMs });
      if (typeof answer !== 'symbol') return answer;
      abort.abort();
      throw new AxiosError(`timeout of ${timeoutMs}ms exceeded`, AxiosError.ECONNABORTED, config);
    } finally {
      delete config.signal;
    }
  };
}
