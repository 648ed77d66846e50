// `npm run test:busy [-- --times N] [-- jest arguments]`: the suite (or the files named) with a busy loop on every
// core beside it, as on a machine that is doing other work: a test that passes only when the machine is quiet fails
// here. Run it before a change that touches timing. `--times N` runs it N times in a row, stopping at the first
// failure; `--loops N` sets the number of busy loops (default: one per core).
import { spawn, spawnSync } from 'node:child_process';
import { availableParallelism } from 'node:os';

const args = process.argv.slice(2);
/** Takes `--name N` out of the arguments; the rest go to jest. */
function take(name, fallback) {
  const at = args.indexOf(name);
  if (at === -1) return fallback;
  const value = Number(args[at + 1]);
  if (!Number.isInteger(value) || value < 0) {
    console.error(`test:busy: ${name} takes a whole number, got ${args[at + 1]}.`);
    process.exit(2);
  }
  args.splice(at, 2);
  return value;
}
const times = take('--times', 1);
const loops = take('--loops', availableParallelism());

const busy = Array.from({ length: loops }, () => spawn(process.execPath, ['-e', 'for (;;) {}'], { stdio: 'ignore' }));
const stop = () => {
  for (const loop of busy) loop.kill('SIGKILL');
};
process.on('exit', stop);
for (const signal of ['SIGINT', 'SIGTERM'])
  process.on(signal, () => {
    stop();
    process.exit(130);
  });

console.log(`test:busy: ${loops} busy loop(s) beside ${times} run(s) of npm test ${args.join(' ')}`.trimEnd());
let status = 0;
for (let run = 1; run <= times && status === 0; run += 1) {
  const started = Date.now();
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
  status = spawnSync(npm, ['test', '--', ...args], { stdio: 'inherit' }).status ?? 1;
  const seconds = Math.round((Date.now() - started) / 1000);
  console.log(`test:busy: run ${run} of ${times} ${status === 0 ? 'passed' : 'FAILED'} in ${seconds} s`);
}
process.exit(status);
