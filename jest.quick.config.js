// `npm run test:quick`: every suite that needs no redis-server, PostgreSQL, Chromium, workerd or child process, for the
// loop of whoever changes the code; `npm test` stays the whole suite. A suite needs one of them when it, or a helper or
// harness it imports (followed through relative imports), names one of NEEDS: so a new suite that starts Redis or
// PostgreSQL leaves the quick loop by itself.
const { existsSync, readdirSync, readFileSync } = require('node:fs');
const { dirname, join, resolve } = require('node:path');
const base = require('./jest.config.js');

const NEEDS =
  /node:child_process|playwright|miniflare|scripts\/runtimes|harness\/(redis-[a-z-]+|postgres-server|fleet|cold-start|upstash-rest)\.js|oauth2\/oidc\.js/;

/** Whether `file`, or a file it imports by a relative path outside lib/, names one of NEEDS. */
function needs(file, seen = new Set()) {
  if (seen.has(file) || !existsSync(file)) return false;
  seen.add(file);
  const text = readFileSync(file, 'utf8');
  if (NEEDS.test(text)) return true;
  for (const [, path] of text.matchAll(/from '(\.{1,2}\/[^']+)\.js'/g)) {
    const next = resolve(dirname(file), `${path}.ts`);
    if (!next.includes(`${join(__dirname, 'lib')}`) && needs(next, seen)) return true;
  }
  return false;
}

const tests = join(__dirname, '__tests__');
const slow = readdirSync(tests).filter((name) => name.endsWith('.test.ts') && needs(join(tests, name)));

/** @type {import('jest').Config} */
module.exports = {
  ...base,
  testPathIgnorePatterns: ['/node_modules/', ...slow.map((name) => `/__tests__/${name.replace(/\./g, '\\.')}$`)],
  // No suite of the quick loop uses the packed package: nothing to pack.
  globalSetup: undefined,
  globalTeardown: undefined,
};
