import { runInNewContext } from 'node:vm';
import { isTokenAuthError, TokenAuthError } from '../lib/index.js';

describe('TokenAuthError', () => {
  it('has a constant name, a code, a status and the original error as cause', () => {
    const cause = new Error('socket hang up');
    const error = new TokenAuthError('TOKEN_SERVICE_UNAVAILABLE', 'The token service could not be reached.', {
      cause,
      status: 503,
    });

    expect(error).toBeInstanceOf(Error);
    expect([error.name, error.code, error.status, error.cause]).toEqual([
      'TokenAuthError',
      'TOKEN_SERVICE_UNAVAILABLE',
      503,
      cause,
    ]);
  });
});

describe('isTokenAuthError', () => {
  it('recognises one from another realm (another bundle or a vm context), where instanceof fails', () => {
    const foreign = runInNewContext(`
      class TokenAuthError extends Error { constructor() { super('refused'); this.name = 'TokenAuthError'; this.code = 'LOGIN_REJECTED'; } }
      new TokenAuthError();
    `) as unknown;

    expect(foreign instanceof TokenAuthError).toBe(false);
    expect(isTokenAuthError(foreign)).toBe(true);
  });

  it.each([
    ['a plain Error', new Error('x')],
    ['an object named like it but without a code', { name: 'TokenAuthError' }],
    ['null', null],
    ['a string', 'TokenAuthError'],
  ])('rejects %s', (_name, value) => {
    expect(isTokenAuthError(value)).toBe(false);
  });
});
