import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { root } from './helpers/scripts.js';

// scripts/test-needs.mjs, which `npm test` runs first, on a PATH of a shell alone: no redis-server, no apt-get. The
// PostgreSQL and PgBouncer it looks for outside PATH (in Debian's folders) are pointed elsewhere by their variables.
const script = join(root, 'scripts', 'test-needs.mjs');
const bare = mkdtempSync(join(tmpdir(), 'test-needs-'));
symlinkSync('/bin/sh', join(bare, 'sh'));
afterAll(() => rmSync(bare, { recursive: true, force: true }));

function run(env: NodeJS.ProcessEnv): { status: number | null; stdout: string; stderr: string } {
  const { status, stdout, stderr } = spawnSync(process.execPath, [script], { env: { ...env }, encoding: 'utf8' });
  return { status, stdout, stderr };
}

it('says nothing and succeeds when redis-server, redis-cli, PostgreSQL, PgBouncer and Chromium are there', () => {
  expect(run({ PATH: process.env.PATH })).toEqual({ status: 0, stdout: '', stderr: '' });
});

it('fails once, naming what is missing and the command, when it cannot install', () => {
  const result = run({
    PATH: bare,
    POSTGRES_BIN_DIR: join(root, 'no-such-postgresql'),
    PGBOUNCER_PATH: join(root, 'no-such-pgbouncer'),
    CHROMIUM_PATH: join(root, 'no-such-chromium'),
  });

  expect(result.status).toBe(1);
  expect(result.stdout).toBe('');
  expect(result.stderr).toBe(
    `npm test needs redis-server, a PostgreSQL at POSTGRES_BIN_DIR (${join(root, 'no-such-postgresql')}), ` +
      `a pgbouncer at PGBOUNCER_PATH (${join(root, 'no-such-pgbouncer')}) and a Chromium at CHROMIUM_PATH ` +
      `(${join(root, 'no-such-chromium')}): install them with your package manager, then npm test again.\n`,
  );
});
