// The package packed once per `npm test`, as npm publishes it (scripts/runtimes.mjs consumer: its prepack build, in a
// copy of the working tree), for the suites that use it as a consumer does (package.test.ts, runtimes.test.ts): each
// built it again before, tsc twice, in its own worker.
//
// jest's globalSetup makes the run's folder, .tmp/packed-<its pid> (the workers' parent, or the process of a run in
// band: an environment variable set here does not reach the workers) and, for a run of the whole suite,
// starts the pack at once, so that it overlaps with the first files rather than holding up a worker later; a run of
// chosen files starts it from the first suite that asks (__tests__/helpers/packed.ts). globalTeardown stops a pack
// still running, and removes the folder.
//
// `node scripts/test-pack.js DIR` packs into DIR/consumer and writes DIR/done (the exit code) when it ends, its output
// in DIR/pack.log; a second call for the same DIR does nothing (DIR/started is made by one call alone).
const { spawn } = require('node:child_process');
const { mkdirSync, openSync, rmSync, writeFileSync } = require('node:fs');
const { setPriority } = require('node:os');
const { join } = require('node:path');

const root = join(__dirname, '..');

/** Starts the pack into `dir` unless it was started; the child, or undefined when another call started it. */
function startPack(dir) {
  try {
    mkdirSync(join(dir, 'started'));
  } catch {
    return undefined;
  }
  const log = openSync(join(dir, 'pack.log'), 'w');
  const child = spawn(process.execPath, [join(__dirname, 'runtimes.mjs'), 'consumer', join(dir, 'consumer')], {
    cwd: root,
    stdio: ['ignore', log, log],
  });
  // Below the suites in the scheduler's order: the pack has minutes before the first suite asks, they have none.
  try {
    // Not without a pid (the spawn failed): setPriority(undefined, 10) would lower this process.
    if (child.pid !== undefined) setPriority(child.pid, 10);
  } catch {
    // A platform that cannot lower it: the pack competes as it is.
  }
  child.on('error', (error) => writeFileSync(join(dir, 'done'), `spawn failed: ${error.message}`));
  child.on('exit', (code, signal) => writeFileSync(join(dir, 'done'), String(code ?? signal)));
  return child;
}

/** The pack folder of the jest run whose main process is `pid`. */
const packDirOf = (pid) => join(root, '.tmp', `packed-${pid}`);

let running;

async function globalSetup(globalConfig) {
  mkdirSync(join(root, '.tmp'), { recursive: true });
  const dir = packDirOf(process.pid);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir);
  if (!globalConfig.testPathPatterns?.isSet?.()) running = startPack(dir);
}

async function globalTeardown() {
  const dir = packDirOf(process.pid);
  if (running && running.exitCode === null && running.signalCode === null) {
    const ended = new Promise((resolve) => running.once('exit', resolve));
    running.kill('SIGTERM');
    await ended;
  }
  rmSync(dir, { recursive: true, force: true });
}

module.exports = globalSetup;
module.exports.globalTeardown = globalTeardown;

if (require.main === module) {
  const child = startPack(process.argv[2]);
  child?.on('exit', (code) => (process.exitCode = code ?? 1));
}
