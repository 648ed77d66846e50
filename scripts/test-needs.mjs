// What `npm test` needs beyond npm: Debian's redis-server and redis-cli (the Redis store's suites start their own
// servers, and form a Cluster with redis-cli) and Chromium (the browser suites). Run first by `npm test`: silent when
// they are there; installs them with apt-get, saying so in one line, when it can (root, and apt-get present);
// otherwise fails once, naming the command to run. `.ci/run` calls `npm test`, so CI and a newcomer install alike.
import { execFileSync, spawnSync } from 'node:child_process';
import { accessSync, constants } from 'node:fs';

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

const missing = [];
if (!found('redis-server', 'REDIS_SERVER_PATH') || !found('redis-cli', 'REDIS_CLI_PATH')) missing.push('redis-server');
// CHROMIUM_PATH names a Chromium of the user's own, which apt-get cannot provide.
if (!executable(chromium))
  missing.push(process.env.CHROMIUM_PATH ? `a Chromium at CHROMIUM_PATH (${chromium})` : 'chromium');

if (missing.length > 0) {
  const packages = missing.filter((name) => name === 'redis-server' || name === 'chromium');
  const command = `apt-get install -y --no-install-recommends ${packages.join(' ')}`;
  const canInstall =
    packages.length === missing.length && process.getuid?.() === 0 && onPath('apt-get') && process.platform === 'linux';
  if (!canInstall) {
    const how = onPath('apt-get') ? `run \`sudo ${command}\`` : 'install them with your package manager';
    console.error(`npm test needs ${missing.join(' and ')}: ${how}, then npm test again.`);
    process.exit(1);
  }
  console.log(`npm test: installing ${packages.join(' and ')} with apt-get (the Redis and browser suites need them)`);
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
