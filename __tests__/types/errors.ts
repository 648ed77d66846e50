// Type tests of the error class, its closed set of codes and the guard that narrows to it.
import { expectTypeOf } from 'expect-type';
import { isTokenAuthError, TokenAuthError } from 'axios-token-keeper';
import type { TokenAuthErrorCode } from 'axios-token-keeper';

expectTypeOf<TokenAuthErrorCode>().toEqualTypeOf<
  | 'LOGIN_REJECTED'
  | 'REFRESH_REJECTED'
  | 'NO_CREDENTIALS'
  | 'TOKEN_RESPONSE_INVALID'
  | 'TOKEN_ENDPOINT_NOT_FOUND'
  | 'TOKEN_SERVICE_UNAVAILABLE'
  | 'STORE_FAILED'
  | 'STORE_UNAVAILABLE'
  | 'STORE_KEY_MISSING'
  | 'TOKEN_BUDGET_EXCEEDED'
  | 'LOGGED_OUT'
  | 'LOGOUT_REJECTED'
  | 'ACCOUNT_INVALID'
>();

expectTypeOf<TokenAuthError>().toExtend<Error>();
expectTypeOf<TokenAuthError['name']>().toEqualTypeOf<'TokenAuthError'>();
expectTypeOf<TokenAuthError['code']>().toEqualTypeOf<TokenAuthErrorCode>();
expectTypeOf<TokenAuthError['status']>().toEqualTypeOf<number | undefined>();
expectTypeOf(TokenAuthError).toBeConstructibleWith('LOGIN_REJECTED', 'Rejected.');
expectTypeOf(TokenAuthError).toBeConstructibleWith('STORE_FAILED', 'Failed.', { cause: new Error('x'), status: 500 });
expectTypeOf(isTokenAuthError).parameters.toEqualTypeOf<[unknown]>();
expectTypeOf(isTokenAuthError).guards.toEqualTypeOf<TokenAuthError>();

export function refused(): void {
  // @ts-expect-error a code outside the closed set
  void new TokenAuthError('TIMEOUT', 'Timed out.');
  // @ts-expect-error `status` is a number
  void new TokenAuthError('LOGIN_REJECTED', 'Rejected.', { status: '401' });
}

/** Narrowing works from `unknown`, as in a `catch` block, and the switch over codes is exhaustive. */
export function describe(error: unknown): string {
  // @ts-expect-error an unknown value has no `code` before the guard
  void error.code;
  if (!isTokenAuthError(error)) {
    expectTypeOf(error).toEqualTypeOf<unknown>();
    return 'other';
  }
  expectTypeOf(error).toEqualTypeOf<TokenAuthError>();
  // @ts-expect-error the code is a closed union: comparing it with a code that does not exist is a type error
  if (error.code === 'TIMEOUT') return 'never';
  switch (error.code) {
    case 'LOGIN_REJECTED':
    case 'REFRESH_REJECTED':
    case 'NO_CREDENTIALS':
    case 'TOKEN_RESPONSE_INVALID':
    case 'TOKEN_ENDPOINT_NOT_FOUND':
    case 'TOKEN_SERVICE_UNAVAILABLE':
    case 'STORE_FAILED':
    case 'STORE_UNAVAILABLE':
    case 'STORE_KEY_MISSING':
    case 'TOKEN_BUDGET_EXCEEDED':
    case 'LOGGED_OUT':
    case 'LOGOUT_REJECTED':
    case 'ACCOUNT_INVALID':
      return error.code;
    default: {
      // A code added to the union without a case above makes this assignment fail.
      const unreachable: never = error.code;
      return unreachable;
    }
  }
}
