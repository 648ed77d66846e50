// `npm run emulator -- --port 8080 --access-ttl 30s`: the token-service emulator, standalone, for curl.
import { parseArgs } from 'node:util';
import { startEmulator } from '../lib/emulator/index.js';
import { parseCount, parseDuration } from './duration.js';

const { values } = parseArgs({
  options: {
    port: { type: 'string', default: '8080' },
    host: { type: 'string', default: '127.0.0.1' },
    'access-ttl': { type: 'string', default: '45m' },
    'refresh-ttl': { type: 'string', default: '720h' },
    user: { type: 'string', default: 'demo' },
    password: { type: 'string', default: 'demo-password' },
    jwt: { type: 'boolean', default: false },
    'no-rotation': { type: 'boolean', default: false },
    cors: { type: 'boolean', default: false },
  },
});

async function main(): Promise<void> {
  const emulator = await startEmulator({
    host: values.host,
    port: values.port === '0' ? 0 : parseCount(values.port, 'port'),
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
      '',
    ].join('\n'),
  );
  const stop = () => void emulator.close().then(() => process.exit(0));
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(2);
});
