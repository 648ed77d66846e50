import { TokenAuthError } from '../contract/errors.js';
import type { Credentials, CredentialsSource } from '../contract/calls.js';

/**
 * What keeps `value` from being sent, as a predicate of "the credentials", or undefined when nothing does. One rule
 * for both places that check: attach time, for credentials given as an object, and every login, for what a function
 * returns or `auth.login()` is given. `basic`: they go as HTTP Basic, which cannot carry a ':' in the username.
 */
export function credentialsProblem(value: unknown, basic: boolean): string | undefined {
  const record = value as { username?: unknown; password?: unknown } | null | undefined;
  // Name what is wrong, never the values: one of them is a password.
  const wrong = (['username', 'password'] as const).flatMap((field) => {
    const given = record?.[field];
    if (given === undefined) return [`\`${field}\` is undefined (is the environment variable it comes from set?)`];
    if (typeof given !== 'string') return [`\`${field}\` is ${given === null ? 'null' : `a ${typeof given}`}`];
    return given === '' ? [`\`${field}\` is empty`] : [];
  });
  if (wrong.length > 0) return `must have a string \`username\` and a string \`password\`, but ${wrong.join(' and ')}`;
  if (basic && (record as Credentials).username.includes(':'))
    return 'cannot be sent: the username contains ":", which HTTP Basic cannot carry (RFC 7617); the password may contain it';
  return undefined;
}

/**
 * The credentials for one login: those `given` to `auth.login()`, else the option's object, else what its function
 * returns. Fails with `NO_CREDENTIALS`, naming the problem, when there are none to send; a function's own error
 * becomes its `cause`, through `redact` (it might quote a token).
 */
export async function credentialsFor(
  source: CredentialsSource | undefined,
  given: Credentials | undefined,
  { account, basic, redact }: { account: string | undefined; basic: boolean; redact: (error: Error) => Error },
): Promise<Credentials> {
  let value: unknown = given;
  const of = account === undefined ? '' : ` for account "${account}"`;
  if (given === undefined && source === undefined)
    throw new TokenAuthError(
      'NO_CREDENTIALS',
      `The plugin holds no usable tokens${of} and has no \`credentials\` to log in with: sign in again and hand the ` +
        'result over with `auth.login(credentials)` or `auth.setTokens(tokens)`, or pass the `credentials` option.',
    );
  try {
    if (given === undefined) value = typeof source === 'function' ? await source(account) : source;
  } catch (error) {
    throw new TokenAuthError(
      'NO_CREDENTIALS',
      `The \`credentials\` function threw${of}, so the plugin cannot log in; see \`cause\`.`,
      {
        cause: error instanceof Error ? redact(error) : undefined,
      },
    );
  }
  if (value === null || value === undefined)
    throw new TokenAuthError(
      'NO_CREDENTIALS',
      `The \`credentials\` function gave no { username, password }${of}, so the plugin cannot log in` +
        (account === undefined ? '.' : ': have it answer for every account a request may name.'),
    );
  const problem = credentialsProblem(value, basic);
  if (problem !== undefined)
    throw new TokenAuthError('NO_CREDENTIALS', `The credentials${of} ${problem}, so the plugin cannot log in.`);
  return value as Credentials;
}
