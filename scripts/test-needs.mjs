// What `npm test` needs beyond npm: Debian's redis-server and redis-cli (the Redis store's suites start their own
// servers, and form a Cluster with redis-cli), Debian's postgresql and pgbouncer (the Postgres suites start their own
// servers, and a PgBouncer in transaction mode before one) and Chromium (the browser suites). Run first by `npm test`:
// silent when they are there; installs them with apt-get, saying so in one line, when it can (root, and apt-get
// present); otherwise fails once, naming the command to run. `.ci/run` calls `npm test`, so CI and a newcomer install
// alike.
import { execFileSync, spawnSync } from 'node:child_process';
import { accessSync, constants, readdirSync } from 'node:fs';
import { join } from 'node:path';

const chromium = process.env.CHROMIUM_PATH || '/usr/bin/chromium';

/** Whether `command` is on PATH. */
function onPath(command) {
  return spawnSync('sh', ['-c', `command -v ${command}`], { stdio: 'ignore' }).status === 0;
}

function executable(file) {
  try {
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** A program named by its environment variable (the harness's REDIS_SERVER_PATH, REDIS_CLI_PATH), else on PATH. */
const found = (command, variable) => (process.env[variable] ? executable(process.env[variable]) : onPath(command));

/**
 * Whether the PostgreSQL server's programs are there, where harness/postgres-server.ts looks: in POSTGRES_BIN_DIR when
 * set, else in Debian's /usr/lib/postgresql/<major>/bin, whichever major (they are not on PATH).
 */
function postgresFound() {
  const hasServer = (dir) => executable(join(dir, 'initdb')) && executable(join(dir, 'postgres'));
  if (process.env.POSTGRES_BIN_DIR) return hasServer(process.env.POSTGRES_BIN_DIR);
  try {
    return readdirSync('/usr/lib/postgresql').some((major) => hasServer(join('/usr/lib/postgresql', major, 'bin')));
  } catch {
    return false;
  }
}

/** PgBouncer where the harness looks: PGBOUNCER_PATH when set, else on PATH or in /usr/sbin, where Debian puts it. */
const pgbouncerFound = () =>
  process.env.PGBOUNCER_PATH
    ? executable(process.env.PGBOUNCER_PATH)
    : onPath('pgbouncer') || executable('/usr/sbin/pgbouncer');

/** "a", "a and b", "a, b and c". */
const listed = (names) => (names.length < 2 ? names.join('') : `${names.slice(0, -1).join(', ')} and ${names.at(-1)}`);

// Each missing program, named by its Debian package; one the user's own variable points at is named by that variable,
// since apt-get cannot put a program there.
const missing = [];
if (!found('redis-server', 'REDIS_SERVER_PATH') || !found('redis-cli', 'REDIS_CLI_PATH')) missing.push('redis-server');
if (!postgresFound())
  missing.push(
    process.env.POSTGRES_BIN_DIR ? `a PostgreSQL at POSTGRES_BIN_DIR (${process.env.POSTGRES_BIN_DIR})` : 'postgresql',
  );
if (!pgbouncerFound())
  missing.push(
    process.env.PGBOUNCER_PATH ? `a pgbouncer at PGBOUNCER_PATH (${process.env.PGBOUNCER_PATH})` : 'pgbouncer',
  );
if (!executable(chromium))
  missing.push(process.env.CHROMIUM_PATH ? `a Chromium at CHROMIUM_PATH (${chromium})` : 'chromium');

if (missing.length > 0) {
  const packages = missing.filter((name) => ['redis-server', 'postgresql', 'pgbouncer', 'chromium'].includes(name));
  const command = `apt-get install -y --no-install-recommends ${packages.join(' ')}`;
  const canInstall =
    packages.length === missing.length && process.getuid?.() === 0 && onPath('apt-get') && process.platform === 'linux';
  if (!canInstall) {
    const how = onPath('apt-get') ? `run \`sudo ${command}\`` : 'install them with your package manager';
    console.error(`npm test needs ${listed(missing)}: ${how}, then npm test again.`);
    process.exit(1);
  }
  console.log(
    `npm test: installing ${listed(packages)} with apt-get (the Redis, Postgres and browser suites need them)`,
  );
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  const install = () => execFileSync('sh', ['-c', command], { env, stdio: ['ignore', 'ignore', 'inherit'] });
  try {
    install();
  } catch {
    // A fresh machine's package lists may be stale or empty.
    try {
      execFileSync('apt-get', ['update'], { env, stdio: ['ignore', 'ignore', 'inherit'] });
      install();
    } catch {
      console.error(`npm test: \`${command}\` failed (above); fix that and run npm test again.`);
      process.exit(1);
    }
  }
}
