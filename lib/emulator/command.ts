/**
 * The emulator as a command, shipped as the package's `axios-token-keeper-emulator` bin (and run by this repository's
 * `npm run emulator`): `--help` for its flags. Node only.
 */
import { startEmulator } from './server.js';
import { runCommand, UsageError } from './command-line.js';
import type { Flags } from './command-line.js';
import { DURATIONS, parseDuration, parsePort } from './durations.js';
import type { EmulatorOptions } from './types.js';

const usage = (program: string): string => `Usage: ${program} [options]

Runs the token-service emulator on its own until Ctrl-C: the login, the token call, the logout, and any other path
as a protected resource, for curl, your app or the examples. Exits 1 when it cannot listen, 2 on a mistake in the
command.

Options:
  --port <n>            port to listen on, 0 for any free one (default 8080)
  --host <address>      address to listen on (default 127.0.0.1)
  --access-ttl <time>   access-token lifetime (default 45m)
  --refresh-ttl <time>  refresh-token lifetime (default 720h)
  --user <name:password>
                        a user who may log in; repeat it for more (default demo); a name without a password
                        gets --password's
  --password <text>     the password of a --user given without one (default demo-password)
  --jwt                 issue JWTs with an exp claim instead of opaque tokens
  --no-rotation         keep the refresh token on a token call instead of issuing a new one
  --refresh-cookie      keep the refresh token in an HttpOnly cookie instead of the JSON bodies
  --cors                answer CORS preflights and allow any origin, credentials included, for a browser app
  --dpop                require DPoP proofs (RFC 9449) on the login, the token call and data calls, and bind the
                        tokens to the proof's key (data calls then take Authorization: DPoP <access>)
  --dpop-nonce          --dpop, and every proof must carry the nonce each answer gives in its DPoP-Nonce header
  -h, --help            this text

${DURATIONS}
`;

/** The emulator command's flags. */
export const EMULATOR_FLAGS = {
  port: { type: 'string', default: '8080' },
  host: { type: 'string', default: '127.0.0.1' },
  'access-ttl': { type: 'string', default: '45m' },
  'refresh-ttl': { type: 'string', default: '720h' },
  user: { type: 'string', multiple: true, default: ['demo'] as string[] },
  password: { type: 'string', default: 'demo-password' },
  jwt: { type: 'boolean', default: false },
  'no-rotation': { type: 'boolean', default: false },
  'refresh-cookie': { type: 'boolean', default: false },
  cors: { type: 'boolean', default: false },
  dpop: { type: 'boolean', default: false },
  'dpop-nonce': { type: 'boolean', default: false },
} as const;

/**
 * Reads the `--user` flags: each `name:password`, or a bare name whose password is `--password`'s. A username cannot
 * hold a colon (Basic sends `name:password`), so the first colon ends it; the password may hold more. No message
 * repeats a value, which may hold a password.
 */
export function parseUsers(values: readonly string[], password: string): Record<string, string> {
  const users = new Map<string, string>();
  for (const value of values) {
    const colon = value.indexOf(':');
    const name = colon < 0 ? value : value.slice(0, colon);
    const secret = colon < 0 ? password : value.slice(colon + 1);
    if (!name) throw new UsageError('--user takes name:password, and the name is missing');
    if (!secret) throw new UsageError(`--user ${name}: takes a password after the colon`);
    if (users.has(name)) throw new UsageError(`--user ${name} is given twice`);
    users.set(name, secret);
  }
  return Object.fromEntries(users);
}

/** The emulator's options that the command's flags ask for; a bad value throws a UsageError that names its flag. */
export function emulatorOptions(values: Flags<typeof EMULATOR_FLAGS>): EmulatorOptions {
  return {
    host: values.host,
    port: parsePort(values.port),
    accessTtlMs: parseDuration(values['access-ttl'], 'access-ttl'),
    refreshTtlMs: parseDuration(values['refresh-ttl'], 'refresh-ttl'),
    users: parseUsers(values.user, values.password),
    tokenFormat: values.jwt ? 'jwt' : 'opaque',
    rotateRefreshTokens: !values['no-rotation'],
    refreshCookie: values['refresh-cookie'],
    cors: values.cors,
    dpop: values['dpop-nonce'] ? { requireNonce: true } : values.dpop,
    log: false,
  };
}

async function main(values: Flags<typeof EMULATOR_FLAGS>, quickStart: string): Promise<void> {
  const options = emulatorOptions(values);
  const emulator = await startEmulator(options);
  const accounts = `${emulator.url}/auth/api/v1/accounts`;
  // The first user is the one the printed commands log in as; there is always one (--user has a default).
  const users = Object.entries(options.users ?? {});
  const [user, password] = users[0]!;
  const basic = Buffer.from(`${user}:${password}`).toString('base64');
  // curl keeps the HttpOnly cookie in a jar file, as a browser would.
  const renewal = options.refreshCookie
    ? [
        `  curl -X POST -c jar.txt -H 'Authorization: Basic ${basic}' ${accounts}/login`,
        `  curl -X POST -b jar.txt -c jar.txt ${accounts}/token`,
      ]
    : [
        `  curl -X POST -H 'Authorization: Basic ${basic}' ${accounts}/login`,
        `  curl -X POST -H 'Content-Type: application/json' -d '{"refresh_token":"<refresh>"}' ${accounts}/token`,
      ];
  process.stdout.write(
    [
      `Token-service emulator on ${emulator.url} (access tokens live ${values['access-ttl']}). Ctrl-C stops it.`,
      ...(users.length > 1 ? [`Users who may log in: ${users.map(([name]) => name).join(', ')}.`] : []),
      ...renewal,
      `  curl -H 'Authorization: Bearer <access>' ${emulator.url}/allocation/api/v1/tracking/order-list`,
      ...(options.dpop
        ? ['In DPoP mode, each of these calls needs a DPoP header with a proof (RFC 9449), which curl cannot sign.']
        : []),
      // The Quick start keeps the refresh token from the JSON, which the cookie mode leaves out.
      ...(options.refreshCookie
        ? []
        : [
            'The Quick start against it:',
            `  API_URL=${emulator.url} API_USERNAME=${user} API_PASSWORD=${password} npx tsx ${quickStart}`,
          ]),
      '',
    ].join('\n'),
  );
  const stop = () => void emulator.close().then(() => process.exit(0));
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

/** Runs the emulator command; `program` is how the usage names it, `quickStart` where the Quick start's file is. */
export function runEmulatorCommand(program: string, quickStart: string, args = process.argv.slice(2)): void {
  runCommand(usage(program), EMULATOR_FLAGS, (values) => main(values, quickStart), args);
}
