// The errors of a token that fell due while the store was down: nothing was sent to the token service.
import { TokenAuthError } from '../contract/errors.js';

/**
 * The error of a token that was due while the store was down, for as long as a request (or the renewal) could wait:
 * nothing was sent to the token service. `cause`: the store's error (masked); `bound`: what ended the wait.
 */
export function storeUnavailable(cause: unknown, bound: string): TokenAuthError {
  return new TokenAuthError(
    'STORE_UNAVAILABLE',
    `A token was due while the token store was down, and ${bound}; no token is generated without the store's word ` +
      "(`whenStoreDown: 'wait'`), so nothing was sent to the token service. The store's error is the `cause`. " +
      "Pass a longer `storeOutageWaitMs` to wait out longer outages, or `whenStoreDown: 'go-alone'` to serve " +
      'requests through them at the cost of one login per holder.',
    { cause },
  );
}

/** The error of a renewal whose lock's lease lapsed before its token call `times` times in a row. */
export function leaseLapsedTooOften(times: number): TokenAuthError {
  return new TokenAuthError(
    'STORE_UNAVAILABLE',
    `The token store's lock lapsed before the token call could go, ${times} times in a row: this holder stalls ` +
      "(a blocked event loop, a frozen process) for longer than the lock's lease, so it sent no token call on the " +
      'strength of a lock another holder may have taken. Give the store a longer `lockTtlMs`, or find the stall.',
  );
}
