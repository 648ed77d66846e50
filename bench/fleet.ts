// `npm run bench:fleet`: what one account costs a fleet of processes that share a store, and what sharing costs them.
//
// For each store (Redis with pub/sub, Redis polling, a file), a fleet of --processes (4) real processes fires
// --requests (100) concurrent requests each, then goes through --expiries (20) expiries: the emulator refuses the
// tokens, and every process fires its requests again. It reports:
//   token calls per expiry   the emulator's logins and refreshes after the first login, over the expiries;
//   handover                 for each process that waited while another renewed, the time from the renewer's new
//                            pair being written (its `refresh` event) to this process taking it (its `load`
//                            event): the extra latency that sharing adds, median and p99 over all waits (a
//                            process that hears of the pair through pub/sub or fs.watch before the renewer's
//                            own event fires counts as no wait);
//   expiry round latency     request latencies in the expiry rounds, in the renewing process and in the waiting
//                            ones, median and p99;
// and exits 1 when a request failed or the fleet made more than one token call per expiry. Results also go to
// bench/results/fleet.json (fleet-quick.json for other sizes). Not part of `npm test`: it measures, and
// measurements do not belong in assertions.
//
// With --together, fleets of N processes (25, 50 and 100, or the sizes given) start at once on one Redis with
// pub/sub, none holding a pair: every process fires --requests (10) requests at the same moment, then the fleet goes
// through --expiries (3) expiries. For each N it reports logins, token calls per expiry, the tries at the Redis lock
// (granted, and refused because another process held it: in all and at most in one process), the commands Redis ran
// (INFO commandstats, commands inside the store's scripts included) and, of each process's slowest request, the p50
// and the max over the processes; at the start and per expiry. It exits 1 when a request failed, the fleet logged in
// more than once or a refresh token was refused. Results go to bench/results/fleet-together.json
// (fleet-together-quick.json for other sizes).
//
//   npm run bench:fleet                      4 processes × 100 requests, 20 expiries per store
//   npm run bench:fleet -- --quick           5 expiries per store
//   npm run bench:fleet -- --processes 8 --requests 50 --expiries 40
//   npm run bench:fleet -- --together        25, 50 and 100 processes started together
//   npm run bench:fleet -- --together 25     25 only
//   npm run bench:fleet -- --trouble         what 10, 50 and 100 processes cost the account in trouble (fleet-trouble.ts)
//   npm run bench:fleet -- --holders         10, 100 and 1,000 holders in 10 processes, on one redis-server and a
//                                            Cluster of 3 masters: Redis' cost per holder per expiry (fleet-holders.ts)
//   npm run bench:fleet -- --holders 1000    1,000 only
//   npm run bench:fleet -- --holders --setup postgres
//                                            on one PostgreSQL server only (issue 45): each process's holders share a
//                                            pool of 5 and one PostgresTokenStore; --setup redis, cluster likewise
//   npm run bench:fleet -- --outage          10, 100 and 1,000 holders in 10 processes, Redis paused 3, 12 and 30 s
//                                            as the tokens expire, under each `whenStoreDown` (fleet-outage.ts)
//   npm run bench:fleet -- --serverless      the serverless row alone (fleet-serverless.ts), which every default run
//                                            ends with: cold starts on @upstash/redis, REST commands per request/expiry
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { availableParallelism, cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { startEmulator } from '../lib/emulator/index.js';
import { E2E_PASSWORD, E2E_USER } from '../harness/account.js';
import { startFleet, sumBursts } from '../harness/fleet.js';
import type { BurstReply, Fleet, FleetEvent, FleetStoreConfig } from '../harness/fleet.js';
import { countCommands, startRedisServer } from '../harness/redis-server.js';
import type { RedisServer } from '../harness/redis-server.js';
import { holdersBenchmark, SETUPS } from './fleet-holders.js';
import { outageBenchmark } from './fleet-outage.js';
import { trouble } from './fleet-trouble.js';
import { serverless } from './fleet-serverless.js';
import { markdownTable } from './report.js';
import { percentile, round } from './stats.js';

/** The sizes `--together` alone stands for. */
const TOGETHER_SIZES = '25,50,100';
/** The sizes `--trouble` alone stands for. */
const TROUBLE_SIZES = '10,50,100';
/** The sizes `--holders` alone stands for. */
const HOLDERS_SIZES = '10,100,1000';
/** The sizes `--outage` alone stands for. */
const OUTAGE_SIZES = '10,100,1000';
/** What a bare option among these stands for. */
const SIZES: Record<string, string> = {
  '--together': TOGETHER_SIZES,
  '--trouble': TROUBLE_SIZES,
  '--holders': HOLDERS_SIZES,
  '--outage': OUTAGE_SIZES,
};

const { values } = parseArgs({
  // `--together` takes its sizes or none: a bare one (last, or before another option) means all three.
  args: process.argv
    .slice(2)
    .flatMap((arg, i, args) =>
      SIZES[arg] !== undefined && (i === args.length - 1 || args[i + 1]!.startsWith('--'))
        ? [`${arg}=${SIZES[arg]}`]
        : [arg],
    ),
  options: {
    processes: { type: 'string', default: '4' },
    requests: { type: 'string' },
    expiries: { type: 'string' },
    quick: { type: 'boolean', default: false },
    together: { type: 'string' },
    trouble: { type: 'string' },
    holders: { type: 'string' },
    outage: { type: 'string' },
    serverless: { type: 'boolean', default: false },
    setup: { type: 'string', multiple: true },
  },
});

/** A `--setup` by its name: redis, cluster or postgres. */
function setupOf(name: string): (typeof SETUPS)[keyof typeof SETUPS] {
  if (!Object.hasOwn(SETUPS, name))
    throw new Error(`--setup must be one of ${Object.keys(SETUPS).join(', ')}; got "${name}".`);
  return SETUPS[name as keyof typeof SETUPS];
}

function whole(text: string, option: string): number {
  const value = Number(text);
  if (!Number.isInteger(value) || value < 1)
    throw new Error(`--${option} must be a whole number of 1 or more, got "${text}".`);
  return value;
}

const togetherSizes = values.together?.split(',').map((size) => whole(size.trim(), 'together'));
const troubleSizes = values.trouble?.split(',').map((size) => whole(size.trim(), 'trouble'));
const holdersSizes = values.holders?.split(',').map((size) => whole(size.trim(), 'holders'));
const outageSizes = values.outage?.split(',').map((size) => whole(size.trim(), 'outage'));
const processes = whole(values.processes, 'processes');
const requests = whole(values.requests ?? (togetherSizes ? '10' : '100'), 'requests');
const expiries = whole(values.expiries ?? (togetherSizes ? '3' : values.quick ? '5' : '20'), 'expiries');

interface Variant {
  name: string;
  store: (dir: string, redisUrl: string, run: number) => FleetStoreConfig;
}

const variants: Variant[] = [
  { name: 'Redis, pub/sub', store: (_dir, url, run) => ({ kind: 'redis', url, prefix: `bench:${run}`, pubsub: true }) },
  {
    name: 'Redis, polling',
    store: (_dir, url, run) => ({ kind: 'redis', url, prefix: `bench:${run}`, pubsub: false }),
  },
  { name: 'File, fs.watch', store: (dir, _url, run) => ({ kind: 'file', path: join(dir, `tokens-${run}.json`) }) },
];

interface Result {
  store: string;
  processes: number;
  requestsPerProcess: number;
  expiries: number;
  logins: number;
  refreshes: number;
  tokenCallsPerExpiry: number;
  failed: number;
  handoverMs: { waits: number; p50: number; p99: number };
  renewerLatencyMs: { p50: number; p99: number };
  waiterLatencyMs: { p50: number; p99: number };
}

async function measure(variant: Variant, dir: string, redisUrl: string, run: number): Promise<Result> {
  const emulator = await startEmulator({ users: { [E2E_USER]: E2E_PASSWORD }, log: false });
  const fleet = await startFleet({
    count: processes,
    emulatorUrl: emulator.url,
    store: variant.store(dir, redisUrl, run),
  });
  try {
    let failed = sumFailed(await fleet.burst(requests));
    const handovers: number[] = [];
    const renewerLatencies: number[] = [];
    const waiterLatencies: number[] = [];
    for (let expiry = 0; expiry < expiries; expiry += 1) {
      emulator.expireAccessTokens();
      const replies = await fleet.burst(requests);
      failed += sumFailed(replies);
      const renewal = replies.flatMap((reply) => reply.events.filter(isRenewal).map((event) => ({ reply, event })));
      if (renewal.length !== 1) continue;
      const renewedAt = renewal[0]!.event.at;
      for (const reply of replies) {
        if (reply === renewal[0]!.reply) {
          renewerLatencies.push(...reply.latenciesMs);
          continue;
        }
        waiterLatencies.push(...reply.latenciesMs);
        // A pub/sub message can bring the pair a hair before the renewer's own event fires: no wait at all.
        const loaded = reply.events.find((event) => event.name === 'load');
        if (loaded) handovers.push(Math.max(0, loaded.at - renewedAt));
      }
    }
    const { logins, refreshes } = emulator.counters;
    return {
      store: variant.name,
      processes,
      requestsPerProcess: requests,
      expiries,
      logins,
      refreshes,
      tokenCallsPerExpiry: round((logins - 1 + refreshes) / expiries),
      failed,
      handoverMs: {
        waits: handovers.length,
        p50: round(percentile(handovers, 50), 1),
        p99: round(percentile(handovers, 99), 1),
      },
      renewerLatencyMs: {
        p50: round(percentile(renewerLatencies, 50), 1),
        p99: round(percentile(renewerLatencies, 99), 1),
      },
      waiterLatencyMs: {
        p50: round(percentile(waiterLatencies, 50), 1),
        p99: round(percentile(waiterLatencies, 99), 1),
      },
    };
  } finally {
    await fleet.stop();
    await emulator.close();
  }
}

function isRenewal(event: FleetEvent): boolean {
  return event.name === 'refresh' || event.name === 'login';
}

function sumFailed(replies: readonly BurstReply[]): number {
  return replies.reduce((sum, reply) => sum + reply.failed, 0);
}

function table(results: readonly Result[]): string {
  const header = [
    'store',
    'logins',
    'refreshes',
    'token calls / expiry',
    'failed',
    'handover p50 / p99 ms (waits)',
    'renewer req p50 / p99 ms',
    'waiter req p50 / p99 ms',
  ];
  return markdownTable(
    header,
    results.map((r) => [
      r.store,
      String(r.logins),
      String(r.refreshes),
      r.tokenCallsPerExpiry.toFixed(2),
      String(r.failed),
      `${r.handoverMs.p50} / ${r.handoverMs.p99} (${r.handoverMs.waits})`,
      `${r.renewerLatencyMs.p50} / ${r.renewerLatencyMs.p99}`,
      `${r.waiterLatencyMs.p50} / ${r.waiterLatencyMs.p99}`,
    ]),
  );
}

// ---------------------------------------------------------------------------------------------------------------
// --together: fleets started at once
// ---------------------------------------------------------------------------------------------------------------

/** Of each process's slowest request in a round: p50 and max over the processes, ms. */
interface Slowest {
  p50: number;
  max: number;
}

/** What one round (the start, or an expiry) cost the fleet. */
interface Round {
  tokenCalls: number;
  lockGrants: number;
  lockRefused: number;
  /** The most refused tries of one process. */
  lockRefusedMax: number;
  redisCommands: number;
  slowestMs: Slowest;
}

interface TogetherResult {
  processes: number;
  requestsPerProcess: number;
  expiries: number;
  logins: number;
  refreshes: number;
  rejected: number;
  failed: number;
  tokenCallsPerExpiry: number;
  start: Round;
  /** A round with every token valid: what the fleet's requests cost on this machine with no renewal at all. */
  plain: Round;
  /** The expiries' rounds, each as measured; `perExpiry` is their mean (max of the maxima). */
  expiryRounds: Round[];
  perExpiry: Round;
}

async function measureRound(
  fleet: Fleet,
  redisPort: number,
  tokenCalls: () => number,
): Promise<{ round: Round; replies: BurstReply[] }> {
  const before = tokenCalls();
  const { result: replies, commands } = await countCommands([redisPort], () =>
    fleet.burst(requests, { timeoutMs: 600_000 }),
  );
  const slowest = replies.map((reply) => reply.slowestMs);
  const total = sumBursts(replies);
  return {
    replies,
    round: {
      tokenCalls: tokenCalls() - before,
      lockGrants: total.lockGrants,
      lockRefused: total.lockRefused,
      lockRefusedMax: Math.max(0, ...replies.map((reply) => reply.lockRefused)),
      redisCommands: commands,
      slowestMs: { p50: round(percentile(slowest, 50), 0), max: round(Math.max(...slowest), 0) },
    },
  };
}

function meanOf(rounds: readonly Round[]): Round {
  const mean = (value: (r: Round) => number) => round(rounds.reduce((sum, r) => sum + value(r), 0) / rounds.length, 1);
  return {
    tokenCalls: mean((r) => r.tokenCalls),
    lockGrants: mean((r) => r.lockGrants),
    lockRefused: mean((r) => r.lockRefused),
    lockRefusedMax: Math.max(...rounds.map((r) => r.lockRefusedMax)),
    redisCommands: mean((r) => r.redisCommands),
    slowestMs: { p50: mean((r) => r.slowestMs.p50), max: Math.max(...rounds.map((r) => r.slowestMs.max)) },
  };
}

async function measureTogether(count: number, redis: RedisServer): Promise<TogetherResult> {
  const emulator = await startEmulator({ users: { [E2E_USER]: E2E_PASSWORD }, log: false });
  const started = Date.now();
  // Spawning is CPU-bound (each process compiles its TypeScript): on a small machine, 100 take a while.
  const fleet = await startFleet({
    count,
    emulatorUrl: emulator.url,
    store: { kind: 'redis', url: redis.url, prefix: `bench-together:${count}:${Date.now()}`, pubsub: true },
    readyTimeoutMs: 60_000 + count * 2_000,
  });
  console.log(`  ${count} processes ready in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  try {
    const tokenCalls = () => emulator.counters.tokenCalls;
    const start = await measureRound(fleet, redis.port, tokenCalls);
    const plain = await measureRound(fleet, redis.port, tokenCalls);
    let failed = sumBursts(start.replies).failed + sumBursts(plain.replies).failed;
    const expiryRounds: Round[] = [];
    for (let expiry = 0; expiry < expiries; expiry += 1) {
      emulator.expireAccessTokens();
      const measured = await measureRound(fleet, redis.port, tokenCalls);
      failed += sumBursts(measured.replies).failed;
      expiryRounds.push(measured.round);
    }
    const { logins, refreshes, rejected } = emulator.counters;
    return {
      processes: count,
      requestsPerProcess: requests,
      expiries,
      logins,
      refreshes,
      rejected,
      failed,
      tokenCallsPerExpiry: round(expiryRounds.reduce((sum, r) => sum + r.tokenCalls, 0) / expiries, 2),
      start: start.round,
      plain: plain.round,
      expiryRounds,
      perExpiry: meanOf(expiryRounds),
    };
  } finally {
    await fleet.stop();
    await emulator.close();
  }
}

function togetherTable(results: readonly TogetherResult[]): string {
  const header = [
    'N',
    'logins',
    'token calls / expiry',
    'lock grants: start / per expiry',
    'refused lock tries: start (max in 1 process) / per expiry (max)',
    'Redis commands: start / per expiry',
    'slowest request per process, p50 / max ms: start; expiry; no renewal',
    'failed',
  ];
  return markdownTable(
    header,
    results.map((r) => [
      String(r.processes),
      String(r.logins),
      r.tokenCallsPerExpiry.toFixed(2),
      `${r.start.lockGrants} / ${r.perExpiry.lockGrants}`,
      `${r.start.lockRefused} (${r.start.lockRefusedMax}) / ${r.perExpiry.lockRefused} (${r.perExpiry.lockRefusedMax})`,
      `${r.start.redisCommands} / ${r.perExpiry.redisCommands}`,
      `${r.start.slowestMs.p50} / ${r.start.slowestMs.max}; ${r.perExpiry.slowestMs.p50} / ${r.perExpiry.slowestMs.max}; ${r.plain.slowestMs.p50} / ${r.plain.slowestMs.max}`,
      String(r.failed),
    ]),
  );
}

async function together(sizes: readonly number[], machine: string): Promise<void> {
  console.log(
    `Fleet benchmark, started together: ${sizes.join(', ')} processes × ${requests} concurrent requests, then ${expiries} expiries, on one Redis with pub/sub; ${machine}`,
  );
  const redis = await startRedisServer();
  const results: TogetherResult[] = [];
  try {
    for (const count of sizes) results.push(await measureTogether(count, redis));
  } finally {
    await redis.stop();
  }
  console.log(`\n${togetherTable(results)}\n`);
  await mkdir(join(__dirname, 'results'), { recursive: true });
  const name =
    values.together === TOGETHER_SIZES && !values.requests && !values.expiries
      ? 'fleet-together.json'
      : 'fleet-together-quick.json';
  await writeFile(
    join(__dirname, 'results', name),
    `${JSON.stringify({ machine, date: new Date().toISOString(), results }, null, 2)}\n`,
  );
  const wrong = results.filter((r) => r.failed > 0 || r.logins !== 1 || r.rejected > 0);
  if (wrong.length > 0) {
    console.error(
      `Not one careful client: ${wrong.map((r) => `N = ${r.processes} (${r.logins} logins, ${r.rejected} refused refresh tokens, ${r.failed} failed)`).join('; ')}`,
    );
    process.exitCode = 1;
  }
}

async function main(): Promise<void> {
  const machine = `${availableParallelism()} cores (${cpus()[0]?.model.trim() ?? 'unknown CPU'}), Node ${process.version}`;
  if (togetherSizes) return together(togetherSizes, machine);
  if (troubleSizes) return trouble(troubleSizes, machine);
  if (holdersSizes)
    return holdersBenchmark({
      sizes: holdersSizes,
      // 10 processes unless told: `--processes` defaults to 4 for the other fleets.
      processes: values.processes === '4' && !process.argv.includes('--processes') ? 10 : processes,
      expiries: whole(values.expiries ?? '5', 'expiries'),
      machine,
      standard: values.holders === HOLDERS_SIZES && !values.expiries && !process.argv.includes('--processes'),
      ...(values.setup && { setups: values.setup.map(setupOf) }),
    });
  if (outageSizes)
    return outageBenchmark({
      sizes: outageSizes,
      processes: values.processes === '4' && !process.argv.includes('--processes') ? 10 : processes,
      machine,
      standard: values.outage === OUTAGE_SIZES && !process.argv.includes('--processes'),
    });
  if (values.serverless) return void (await serverless(machine));
  console.log(
    `Fleet benchmark: ${processes} processes × ${requests} concurrent requests, ${expiries} expiries per store; ${machine}`,
  );
  const dir = await mkdtemp(join(tmpdir(), 'token-keeper-bench-fleet-'));
  const redis = await startRedisServer();
  const results: Result[] = [];
  try {
    for (const [run, variant] of variants.entries()) {
      results.push(await measure(variant, dir, redis.url, run));
      console.log(`  ${variant.name}: done`);
    }
  } finally {
    await redis.stop();
    await rm(dir, { recursive: true, force: true });
  }
  console.log(`\n${table(results)}\n`);
  await mkdir(join(__dirname, 'results'), { recursive: true });
  // A quick or reshaped run must not replace the committed figures of the README's run.
  const name =
    values.quick || values.expiries || values.processes !== '4' || values.requests !== undefined
      ? 'fleet-quick.json'
      : 'fleet.json';
  await writeFile(
    join(__dirname, 'results', name),
    `${JSON.stringify({ machine, date: new Date().toISOString(), results }, null, 2)}\n`,
  );
  const wrong = results.filter((r) => r.failed > 0 || r.logins !== 1 || r.refreshes !== expiries);
  if (wrong.length > 0) {
    console.error(
      `Not one careful client: ${wrong.map((r) => `${r.store} (${r.logins} logins, ${r.refreshes} refreshes, ${r.failed} failed)`).join('; ')}`,
    );
    process.exitCode = 1;
  }
  await serverless(machine);
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exitCode = 1;
});
