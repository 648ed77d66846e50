import { TokenAuthError } from './errors.js';
import type { Credentials, CredentialsSource } from './types.js';

/**
 * What keeps `value` from being sent as HTTP Basic, as a predicate of "the credentials", or undefined when nothing
 * does. One rule for both places that
 * check: attach time, for credentials given as an object, and every login, for what a function returns.
 */
export function credentialsProblem(value: unknown): string | undefined {
  const record = value as { username?: unknown; password?: unknown } | null | undefined;
  // Name what is wrong, never the values: one of them is a password.
  const wrong = (['username', 'password'] as const).flatMap((field) => {
    const given = record?.[field];
    if (given === undefined) return [`\`${field}\` is undefined (is the environment variable it comes from set?)`];
    if (typeof given !== 'string') return [`\`${field}\` is ${given === null ? 'null' : `a ${typeof given}`}`];
    return given === '' ? [`\`${field}\` is empty`] : [];
  });
  if (wrong.length > 0) return `must have a string \`username\` and a string \`password\`, but ${wrong.join(' and ')}`;
  if ((record as Credentials).username.includes(':'))
    return 'cannot be sent: the username contains ":", which HTTP Basic cannot carry (RFC 7617); the password may contain it';
  return undefined;
}

/**
 * Resolves the credentials for one login: the object as given, or what the function returns. Fails with
 * `NO_CREDENTIALS`, naming the problem, when there are none to send; a function's own error becomes its `cause`,
 * through `redact` (it might quote a token).
 */
export async function credentialsFor(source: CredentialsSource, redact: (error: Error) => Error): Promise<Credentials> {
  let value: unknown;
  try {
    value = typeof source === 'function' ? await source() : source;
  } catch (error) {
    throw new TokenAuthError(
      'NO_CREDENTIALS',
      'The `credentials` function threw, so the plugin cannot log in; see `cause`.',
      {
        cause: error instanceof Error ? redact(error) : undefined,
      },
    );
  }
  if (value === null || value === undefined)
    throw new TokenAuthError(
      'NO_CREDENTIALS',
      'The `credentials` function gave no { username, password }, so the plugin cannot log in.',
    );
  const problem = credentialsProblem(value);
  if (problem !== undefined)
    throw new TokenAuthError('NO_CREDENTIALS', `The credentials ${problem}, so the plugin cannot log in.`);
  return value as Credentials;
}
