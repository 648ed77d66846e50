// `npm run test:axios-range [-- oldest|newest] [-- jest arguments]`: the core and fault tests on both ends of the peer
// range, each a run of jest with one axios for everything (jest.config.js maps 'axios' to AXIOS_PACKAGE): the oldest,
// the dev dependency `axios-oldest` (npm:axios@ the range's lower bound, which __tests__/axios-versions.test.ts holds to
// lib/support/axios-version.ts), and the newest, the repository's own `axios` (the lockfile's, which `npm test` runs on too).
// CI runs `oldest`: `npm test` is the newest's run.
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(join(root, 'package.json'));

/**
 * The core and fault tests: everything a request, a renewal and a token call go through, on nock and on the emulator,
 * none that needs Redis, Chromium or other processes (their clients and browsers bring their own axios or none).
 */
const CORE = [
  'abort',
  'access-token',
  'accounts',
  'budget',
  'concurrency',
  'cookie-refresh',
  'e2e',
  'edges',
  'errors',
  'faults',
  'interceptors',
  'login',
  'misconfiguration',
  'options',
  'origins',
  'parse',
  'proactive',
  'renewal-policy',
  'replay',
  'rotation',
  'secrets',
  'service-shapes',
  'sign-in',
  'token-client',
  'axios-versions',
].map((name) => `__tests__/${name}.test.ts`);

const ENDS = {
  oldest: dirname(require.resolve('axios-oldest/package.json')),
  newest: dirname(require.resolve('axios/package.json')),
};

const args = process.argv.slice(2);
const named = args.filter((arg) => arg in ENDS);
const jestArgs = args.filter((arg) => !(arg in ENDS));
let failed = false;
for (const end of named.length > 0 ? named : Object.keys(ENDS)) {
  const { version } = require(join(ENDS[end], 'package.json'));
  console.log(`== axios ${version} (the ${end} of the range)`);
  const run = spawnSync(process.execPath, [require.resolve('jest/bin/jest'), ...CORE, ...jestArgs], {
    cwd: root,
    stdio: 'inherit',
    env: { ...process.env, AXIOS_PACKAGE: ENDS[end] },
  });
  if (run.status !== 0) {
    console.log(`== axios ${version}: FAILED`);
    failed = true;
  }
}
process.exitCode = failed ? 1 : 0;
