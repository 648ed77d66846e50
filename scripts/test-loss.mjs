// `npm run test:loss [-- --times N] [--store redis|postgres]`: the scenarios in which the shared store loses data or
// stops (issues 31, 38 and 45), N times in a row, each run printing, per scenario, the refresh tokens sent a second time (spent), the requests that failed and the logins
// after the fleet's first, then a total. The scenarios are jest tests (they assert the same figures); each reports
// its figures to the file named by LOSS_REPORT (__tests__/helpers/loss-report.ts):
// - redis-server SIGKILLed mid-renewal and restarted empty (redis-restart.test.ts);
// - the same while a process holds the lock with its token call in flight (redis-restart.test.ts), restarted at once
//   and 1.2 s later (a try at the lock falls in the outage);
// - redis-server restarted from a snapshot taken before the last rotation: an older pair, its refresh token spent,
//   comes back (redis-restart.test.ts);
// - the master of the account's slot of a Cluster killed mid-traffic (redis-cluster.test.ts);
// - the master of a Sentinel deployment killed mid-traffic (redis-sentinel.test.ts);
// - PostgreSQL paused 12 s as the tokens expire, and restarted (a fast shutdown, and a crash) while a process holds the
//   lock with the pair read, and its primary crashed mid-renewal with a synchronous standby promoted
//   (postgres-fleet.test.ts, issue 45).
// Goes on after a failed run, so that every run's figures are seen; exits 1 if any failed.
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const args = process.argv.slice(2);
const at = args.indexOf('--times');
const times = at === -1 ? 1 : Number(args[at + 1]);
if (!Number.isInteger(times) || times < 1) {
  console.error(`test:loss: --times takes a whole number of runs, 1 or more; got ${args[at + 1]}.`);
  process.exit(2);
}

/** Each scenario: the file of its test, the words of its name, and the reports its run writes. */
const SCENARIOS = [
  { file: 'redis-restart.test.ts', name: 'renewal right after the restart logs in once', reports: 1 },
  // Two outages: the lost lock, and the restart 1.2 s later.
  {
    file: 'redis-restart.test.ts',
    name: 'restarts empty while the lock holder renews loses no request; the lost lock',
    reports: 2,
  },
  {
    file: 'redis-restart.test.ts',
    name: 'restarts empty while the lock holder renews restarted 1.2 s after it was killed',
    reports: 1,
  },
  { file: 'redis-restart.test.ts', name: 'restarts from a snapshot taken before the last rotation', reports: 1 },
  { file: 'redis-cluster.test.ts', name: 'killed mid-traffic and its replica takes over', reports: 1 },
  {
    file: 'redis-sentinel.test.ts',
    name: 'master is killed mid-traffic and a sentinel promotes the replica',
    reports: 1,
  },
  { file: 'postgres-fleet.test.ts', name: 'the server paused 12 s as the tokens expire', reports: 1 },
  // A fast shutdown, and a crash.
  { file: 'postgres-fleet.test.ts', name: 'a restart of the server', reports: 2 },
  { file: 'postgres-fleet.test.ts', name: 'the primary crashes as the tokens expire', reports: 1 },
];
// `--store redis` or `--store postgres`: that store's scenarios alone.
const storeAt = args.indexOf('--store');
const store = storeAt === -1 ? undefined : args[storeAt + 1];
if (store !== undefined && store !== 'redis' && store !== 'postgres') {
  console.error(`test:loss: --store takes redis or postgres; got ${store}.`);
  process.exit(2);
}
const chosen = SCENARIOS.filter((scenario) => store === undefined || scenario.file.startsWith(store));
const FILES = [...new Set(chosen.map((scenario) => `__tests__/${scenario.file}`))];
const NAMES = chosen.map((scenario) => scenario.name);
const REPORTS = chosen.reduce((sum, scenario) => sum + scenario.reports, 0);
const pattern = NAMES.map((name) => name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('|');

const dir = mkdtempSync(join(tmpdir(), 'token-keeper-loss-'));
const totals = { runs: 0, passed: 0, spent: 0, failed: 0, maxLogins: 0 };
try {
  for (let run = 1; run <= times; run += 1) {
    const report = join(dir, `run-${run}.jsonl`);
    writeFileSync(report, '');
    const started = Date.now();
    const jest = spawnSync(
      process.execPath,
      ['node_modules/jest/bin/jest.js', '--runInBand', ...FILES, '-t', pattern],
      { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, LOSS_REPORT: report }, encoding: 'utf8' },
    );
    const seconds = Math.round((Date.now() - started) / 1000);
    const lines = readFileSync(report, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line));
    const ok = jest.status === 0 && lines.length === REPORTS;
    totals.runs += 1;
    if (ok) totals.passed += 1;
    console.log(`test:loss: run ${run} of ${times} ${ok ? 'passed' : 'FAILED'} in ${seconds} s`);
    for (const { scenario, spent, failed, logins } of lines) {
      totals.spent += spent;
      totals.failed += failed;
      totals.maxLogins = Math.max(totals.maxLogins, logins);
      console.log(`  spent ${spent}  failed ${failed}  logins ${logins}  ${scenario}`);
    }
    if (!ok) {
      // The whole of jest's output, kept for reading (.tmp/ is ignored by git), and its failures' first lines here.
      const output = jest.stdout + jest.stderr;
      mkdirSync('.tmp', { recursive: true });
      const kept = join('.tmp', `test-loss-run-${run}.log`);
      writeFileSync(kept, output);
      const failures = output
        .split('\n  ●')
        .slice(1)
        .map((block) => `  ●${block.split('\n').slice(0, 14).join('\n')}`);
      console.log(`${failures.join('\n')}\n  (jest's output: ${kept})`);
    }
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
console.log(
  `test:loss: ${totals.passed} of ${totals.runs} run(s) passed; spent refresh tokens ${totals.spent}, failed ` +
    `requests ${totals.failed}, at most ${totals.maxLogins} login(s) after the first in a scenario`,
);
process.exit(totals.passed === totals.runs ? 0 : 1);
