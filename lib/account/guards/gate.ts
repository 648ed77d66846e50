// A gate: what every call that generates a token passes. It may refuse the call before it leaves, count each attempt
// as it leaves, and learn from how the call ended. The guards that are gates are listed in guards.ts.
import type { TokenAuthError } from '../../contract/errors.js';
import type { TokenOperation } from '../../contract/store.js';

/** A call that generates a token, as the gates are asked about it. */
export interface GuardedCall {
  readonly operation: TokenOperation;
  /** Who asked for it: the client rule (`auto`), or the user's `auth.login()` or `auth.refresh()`. */
  readonly mode: 'auto' | 'login' | 'refresh';
  /** A sign-in a person typed (credentials given to `auth.login()`): neither the budget nor the pause is theirs. */
  readonly typed: boolean;
  /** The refresh token it sends; undefined for a login, or for the refresh token the browser keeps in a cookie. */
  readonly refreshToken?: string | undefined;
}

/** A gate of an account. Every method is optional: a gate has what its rule needs. */
export interface Gate {
  /** Why `call` may not go now; undefined when it may. Asked before the call, and again as each attempt leaves. */
  refuse?(call: GuardedCall): TokenAuthError | undefined;
  /** An attempt of `call` leaves, first try or retry, having passed every gate. */
  spend?(call: GuardedCall): void;
  /** `call` ended: refused by the service with `error` (a TokenAuthError), or with a pair (no error). */
  learn?(call: GuardedCall, error?: TokenAuthError): void;
}
