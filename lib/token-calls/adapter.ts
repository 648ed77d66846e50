// The adapter of the token calls' private instance: the call layers (the scheme's, a client authentication's) over the
// platform's adapter, each call bounded by a clock of the plugin's own.
import { AxiosError } from 'axios';
import type { AxiosAdapter } from 'axios';
import { settle } from '../support/deadline.js';
import type { CallLayer } from './scheme.js';

/** `adapter` with `layers` laid over it, the first outermost. */
export function layered(adapter: AxiosAdapter, ...layers: Array<CallLayer | undefined>): AxiosAdapter {
  return layers.reduceRight<AxiosAdapter>((next, layer) => (layer ? layer(next) : next), adapter);
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
