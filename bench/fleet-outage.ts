// `npm run bench:fleet -- --outage [10,100,1000]`: what a Redis outage costs the account, from 10 to 1,000 holders,
// under each `whenStoreDown` policy.
//
// N holders run as P processes (--processes, 10, or N when fewer) of N / P attachments each (fleet-holders-worker.ts,
// each attachment with a RedisTokenStore and connections of its own), on one redis-server, with the plugin's defaults
// but `whenStoreDown`. The emulator runs in a process of its own. For each N and each policy ('wait', the default, and
// 'go-alone'), a fleet logs in (one round: every holder fires one request at once), then, for each outage length
// (3 s, 12 s, then 30 s), redis-server is paused (SIGSTOP, as a paused VM or a partition without resets), every
// access token is refused from then on (the emulator's expiry control), and every holder fires one request at once;
// redis-server answers again when the outage ends. It reports, per outage: the token calls during it and in all
// (logins, refreshes), the refresh tokens refused (spent ones), the requests served and failed (by error code), and
// how long the requests waited (p50, p99, max). Between outages, a round with the tokens valid. It exits 1 when a
// refresh token was refused, or when under 'wait' a token call went out during an outage, or a 3 s outage cost more
// than one token call. Results: bench/results/fleet-outage.json (fleet-outage-quick.json for other sizes).
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { startRedisServer } from '../harness/redis-server.js';
import { openFileLimit, startHolders } from './fleet-holders.js';
import { BENCH_PASSWORD, BENCH_USER, startRemoteEmulator } from './remote-emulator.js';
import { markdownTable } from './report.js';
import { percentile, round } from './stats.js';

export interface OutageOptions {
  sizes: readonly number[];
  processes: number;
  machine: string;
  /** The documented sizes: the results may replace the committed figures. */
  standard: boolean;
}

/** The outages, in the order each fleet goes through them. */
const OUTAGES_MS = [3_000, 12_000, 30_000] as const;
const POLICIES = ['wait', 'go-alone'] as const;

export interface OutageResult {
  policy: (typeof POLICIES)[number];
  holders: number;
  outageMs: number;
  /** Logins and token calls while Redis was paused, and from the pause until every request had settled. */
  during: { logins: number; refreshes: number };
  total: { logins: number; refreshes: number };
  /** Login and token calls the service refused: a refresh token sent after it was spent. */
  refused: number;
  served: number;
  failed: number;
  errors: Record<string, number>;
  /** From the pause to each request's end, ms. */
  waitedMs: { p50: number; p99: number; max: number };
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

async function measurePolicy(
  policy: OutageResult['policy'],
  holders: number,
  processes: number,
): Promise<OutageResult[]> {
  const redis = await startRedisServer();
  const emulator = await startRemoteEmulator();
  const results: OutageResult[] = [];
  try {
    const fleet = await startHolders(holders, Math.min(processes, holders), {
      emulatorUrl: emulator.url,
      target: { url: redis.url },
      prefix: `bench-outage:${holders}:${policy}`,
      username: BENCH_USER,
      password: BENCH_PASSWORD,
      whenStoreDown: policy,
    });
    try {
      const first = await fleet.round();
      if (first.holders.some((holder) => !holder.ok)) throw new Error(`${holders} holders could not log in.`);
      for (const outageMs of OUTAGES_MS) {
        // The fleet on one valid pair again, the store answering.
        await fleet.round();
        const before = await emulator.counters();
        redis.pause();
        const pausedAt = Date.now();
        await emulator.expire();
        const round$ = fleet.round();
        await sleep(outageMs - (Date.now() - pausedAt));
        const during = await emulator.counters();
        redis.resume();
        const { holders: seen } = await round$;
        const after = await emulator.counters();
        const waited = seen.map((holder) => holder.doneAt - pausedAt);
        const errors: Record<string, number> = {};
        for (const holder of seen) if (holder.error) errors[holder.error] = (errors[holder.error] ?? 0) + 1;
        results.push({
          policy,
          holders,
          outageMs,
          during: { logins: during.logins - before.logins, refreshes: during.refreshes - before.refreshes },
          total: { logins: after.logins - before.logins, refreshes: after.refreshes - before.refreshes },
          refused: after.rejected - before.rejected,
          served: seen.filter((holder) => holder.ok).length,
          failed: seen.filter((holder) => !holder.ok).length,
          errors,
          waitedMs: {
            p50: round(percentile(waited, 50), 0),
            p99: round(percentile(waited, 99), 0),
            max: round(Math.max(...waited), 0),
          },
        });
      }
    } finally {
      await fleet.stop();
    }
  } finally {
    redis.resume();
    await emulator.close();
    await redis.stop();
  }
  return results;
}

function table(results: readonly OutageResult[]): string {
  return markdownTable(
    [
      'whenStoreDown',
      'holders',
      'Redis paused',
      'token calls in the outage',
      'token calls in all',
      'spent refresh tokens sent',
      'requests served / failed',
      'waited p50 / p99 / max',
    ],
    results.map((r) => [
      `'${r.policy}'`,
      r.holders.toLocaleString('en-US'),
      `${r.outageMs / 1000} s`,
      `${r.during.logins + r.during.refreshes} (${r.during.logins} logins)`,
      `${r.total.logins + r.total.refreshes} (${r.total.logins} logins)`,
      String(r.refused),
      `${r.served.toLocaleString('en-US')} / ${r.failed.toLocaleString('en-US')}${
        r.failed > 0
          ? ` (${Object.entries(r.errors)
              .map(([code, count]) => `${count} ${code}`)
              .join(', ')})`
          : ''
      }`,
      `${(r.waitedMs.p50 / 1000).toFixed(1)} / ${(r.waitedMs.p99 / 1000).toFixed(1)} / ${(r.waitedMs.max / 1000).toFixed(1)} s`,
    ]),
  );
}

export async function outageBenchmark(options: OutageOptions): Promise<void> {
  const largest = Math.max(...options.sizes);
  const limit = openFileLimit();
  console.log(
    `Fleet benchmark, outage: ${options.sizes.join(', ')} holders in ${options.processes} processes, Redis paused ${OUTAGES_MS.map((ms) => `${ms / 1000} s`).join(', ')} as the tokens expire, under 'wait' and 'go-alone'; ulimit -n ${limit}; ${options.machine}`,
  );
  if (limit < largest + 100)
    throw new Error(`ulimit -n is ${limit}: ${largest} holders need about ${largest + 100} open files (raise it).`);
  const results: OutageResult[] = [];
  for (const size of options.sizes)
    for (const policy of POLICIES) {
      const measured = await measurePolicy(policy, size, options.processes);
      results.push(...measured);
      for (const r of measured)
        console.log(
          `  '${policy}', ${size} holders, ${r.outageMs / 1000} s: ${r.total.logins} logins and ${r.total.refreshes} refreshes, ${r.refused} refused, ${r.failed} failed, waited p99 ${r.waitedMs.p99} ms`,
        );
    }
  console.log(`\n${table(results)}\n`);
  await mkdir(join(__dirname, 'results'), { recursive: true });
  const name = options.standard ? 'fleet-outage' : 'fleet-outage-quick';
  await writeFile(
    join(__dirname, 'results', `${name}.json`),
    `${JSON.stringify({ machine: options.machine, date: new Date().toISOString(), results }, null, 2)}\n`,
  );
  const wrong: string[] = [];
  for (const r of results) {
    const at = `'${r.policy}', ${r.holders} holders, ${r.outageMs / 1000} s`;
    if (r.refused > 0) wrong.push(`${at}: ${r.refused} refresh tokens refused`);
    if (r.policy === 'wait' && r.during.logins + r.during.refreshes > 0)
      wrong.push(`${at}: ${r.during.logins + r.during.refreshes} token calls while Redis was paused`);
    if (r.outageMs <= 3_000 && r.total.logins + r.total.refreshes > 1)
      wrong.push(`${at}: ${r.total.logins + r.total.refreshes} token calls`);
  }
  if (wrong.length > 0) {
    console.error(`Not one careful fleet: ${wrong.join('; ')}`);
    process.exitCode = 1;
  }
}
