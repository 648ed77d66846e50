/**
 * The emulator as a command, shipped as the package's `axios-token-keeper-emulator` bin (and run by this repository's
 * `npm run emulator`): `--help` for its flags. Node only.
 */
import { startEmulator } from './server.js';
import { runCommand } from './command-line.js';
import type { Flags } from './command-line.js';
import { DURATIONS, parseDuration, parsePort } from './durations.js';

const usage = (program: string): string => `Usage: ${program} [options]

Runs the token-service emulator on its own until Ctrl-C: the login, the token call, and any other path as a
protected resource, for curl, your app or the examples. Exits 1 when it cannot listen, 2 on a mistake in the
command.

Options:
  --port <n>            port to listen on, 0 for any free one (default 8080)
  --host <address>      address to listen on (default 127.0.0.1)
  --access-ttl <time>   access-token lifetime (default 45m)
  --refresh-ttl <time>  refresh-token lifetime (default 720h)
  --user <name>         the username that may log in (default demo)
  --password <text>     its password (default demo-password)
  --jwt                 issue JWTs with an exp claim instead of opaque tokens
  --no-rotation         keep the refresh token on a token call instead of issuing a new one
  --cors                answer CORS preflights and allow any origin, for a browser app
  -h, --help            this text

${DURATIONS}
`;

const OPTIONS = {
  port: { type: 'string', default: '8080' },
  host: { type: 'string', default: '127.0.0.1' },
  'access-ttl': { type: 'string', default: '45m' },
  'refresh-ttl': { type: 'string', default: '720h' },
  user: { type: 'string', default: 'demo' },
  password: { type: 'string', default: 'demo-password' },
  jwt: { type: 'boolean', default: false },
  'no-rotation': { type: 'boolean', default: false },
  cors: { type: 'boolean', default: false },
} as const;

async function main(values: Flags<typeof OPTIONS>, quickStart: string): Promise<void> {
  const emulator = await startEmulator({
    host: values.host,
    port: parsePort(values.port),
    accessTtlMs: parseDuration(values['access-ttl'], 'access-ttl'),
    refreshTtlMs: parseDuration(values['refresh-ttl'], 'refresh-ttl'),
    users: { [values.user]: values.password },
    tokenFormat: values.jwt ? 'jwt' : 'opaque',
    rotateRefreshTokens: !values['no-rotation'],
    cors: values.cors,
    log: false,
  });
  const basic = Buffer.from(`${values.user}:${values.password}`).toString('base64');
  process.stdout.write(
    [
      `Token-service emulator on ${emulator.url} (access tokens live ${values['access-ttl']}). Ctrl-C stops it.`,
      `  curl -X POST -H 'Authorization: Basic ${basic}' ${emulator.url}/auth/api/v1/accounts/login`,
      `  curl -X POST -H 'Content-Type: application/json' -d '{"refresh_token":"<refresh>"}' ${emulator.url}/auth/api/v1/accounts/token`,
      `  curl -H 'Authorization: Bearer <access>' ${emulator.url}/allocation/api/v1/tracking/order-list`,
      'The Quick start against it:',
      `  API_URL=${emulator.url} API_USERNAME=${values.user} API_PASSWORD=${values.password} npx tsx ${quickStart}`,
      '',
    ].join('\n'),
  );
  const stop = () => void emulator.close().then(() => process.exit(0));
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

/** Runs the emulator command; `program` is how the usage names it, `quickStart` where the Quick start's file is. */
export function runEmulatorCommand(program: string, quickStart: string, args = process.argv.slice(2)): void {
  runCommand(usage(program), OPTIONS, (values) => main(values, quickStart), args);
}
