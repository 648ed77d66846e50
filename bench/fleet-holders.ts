// `npm run bench:fleet -- --holders [10,100,1000]`: what one account costs Redis per holder, from 10 to 1,000 holders.
//
// N holders run as P processes (--processes, 10, or N when fewer) of N / P attachments each (fleet-holders-worker.ts):
// every attachment an axios instance with the plugin, a RedisTokenStore of its own and connections of its own (a
// client and a subscriber), as N processes would have. The emulator runs in a process of its own
// (emulator-process.ts). For each N, on one redis-server and on a Cluster of 3 masters, the fleet logs in (every holder
// fires a request at once, none holding a pair), fires a round with the pair valid, then goes through --expiries (5)
// expiries: the emulator refuses every access token issued so far (its expiry control, not a 45-minute wait), and every
// holder fires one request at once. Per expiry it reads, from the servers' `INFO` before and after (summed over the
// masters of a Cluster): the commands run (`commandstats`, commands inside scripts included), the bytes in and out
// (`total_net_input_bytes`, `total_net_output_bytes`) and the CPU (`used_cpu_sys` + `used_cpu_user`); and from the
// holders, the pub/sub messages their subscribers received, and for each holder the time from the expiry to its first
// `refresh`, `login` or `load` event: when it had the new pair. Then a failure row per N on the
// redis-server: every holder with a wrong password and `loginCooldownMs` of 1 s fires a request every 250 ms for 10 s
// (at least one round, however long it takes); the emulator tells when each login came, and no rejected login may come
// before the pause after the one before has ended (1, 2, 4, 8, 16 s: the pause doubles): one per pause, fleet-wide.
//
// It exits 1 when a request failed (failure rows aside), a size logged in more than once or made other than 1 token
// call per expiry, a rejected login came before the pause of the one before had ended, or the commands per holder per
// expiry at a larger N exceed those at the smallest by more than 20%, on either setup (a cost that falls with N, as a
// fixed cost per expiry spread over more holders does, is flat enough). Results: bench/results/fleet-holders.json and
// bench/results/fleet-holders.svg (fleet-holders-quick.* for other sizes or expiries).
import { execFileSync, fork } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import Redis from 'ioredis';
import type { RedisTarget } from '../harness/redis-clients.js';
import { startRedisCluster } from '../harness/redis-cluster.js';
import { startRedisServer } from '../harness/redis-server.js';
import { startPostgresServer } from '../harness/postgres-server.js';
import { PostgresTokenStore } from '../lib/stores/postgres/index.js';
import pg from 'pg';
import { fleetChart } from './chart.js';
import type {
  HolderRound,
  HoldersReply,
  HoldersRequest,
  HoldersWorkerConfig,
  PostgresTarget,
} from './fleet-holders-worker.js';
import { BENCH_PASSWORD, BENCH_USER, startRemoteEmulator } from './remote-emulator.js';
import type { RemoteEmulator } from './remote-emulator.js';
import { markdownTable } from './report.js';
import { percentile, round } from './stats.js';

export interface HoldersOptions {
  sizes: readonly number[];
  processes: number;
  expiries: number;
  machine: string;
  /** The sizes and expiries are the documented ones: the results may replace the committed figures. */
  standard: boolean;
  /** The setups measured. @default all three */
  setups?: readonly SetupName[];
}

/** The failure row: the base of the login pause, how long the fleet keeps trying, how often. */
const COOLDOWN_MS = 1_000;
const FAILURE_RUN_MS = 10_000;
const FAILURE_EVERY_MS = 250;

// ---------------------------------------------------------------------------------------------------------------
// The servers, read through INFO
// ---------------------------------------------------------------------------------------------------------------

interface Setup {
  name: SetupName;
  target: RedisTarget | PostgresTarget;
  /** The masters, whose INFO is summed (Redis). */
  ports: number[];
  /** The folder of the PostgreSQL server, whose processes' CPU is read from /proc (Postgres). */
  postgresDirectory?: string;
  stop(): Promise<void>;
}

/** The setups a run can measure, as `--setup` names them. */
export const SETUPS = { redis: 'redis-server', cluster: 'Cluster, 3 masters', postgres: 'PostgreSQL' } as const;
type SetupName = (typeof SETUPS)[keyof typeof SETUPS];

/** What the masters have counted since they started, summed. */
interface Reading {
  commands: Map<string, number>;
  inBytes: number;
  outBytes: number;
  cpuSeconds: number;
  clients: number;
  clientMemory: number;
}

/** One connection per master, opened once, that reads `INFO all` (no ready check: its INFO would count too). */
class Meter {
  private readonly connections: Redis[];
  /** The bytes of the last reading's reply per master, counted as output by the next reading. */
  private lastReply: number[];

  constructor(ports: readonly number[]) {
    this.connections = ports.map(
      (port) => new Redis({ host: '127.0.0.1', port, enableReadyCheck: false, maxRetriesPerRequest: 0 }),
    );
    this.lastReply = ports.map(() => 0);
  }

  async read(): Promise<Reading> {
    const texts = await Promise.all(this.connections.map((connection) => connection.info('all')));
    const reading: Reading = {
      commands: new Map(),
      inBytes: 0,
      outBytes: 0,
      cpuSeconds: 0,
      clients: 0,
      clientMemory: 0,
    };
    const field = (text: string, name: string) => Number(new RegExp(`^${name}:([\\d.]+)`, 'm').exec(text)?.[1] ?? 0);
    texts.forEach((text, i) => {
      for (const match of text.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm))
        reading.commands.set(match[1]!, (reading.commands.get(match[1]!) ?? 0) + Number(match[2]));
      reading.inBytes += field(text, 'total_net_input_bytes');
      // Less the previous reading's own reply, which went out after it was measured.
      reading.outBytes += field(text, 'total_net_output_bytes') - this.lastReply[i]!;
      reading.cpuSeconds += field(text, 'used_cpu_sys') + field(text, 'used_cpu_user');
      // This meter's own connection left out.
      reading.clients += field(text, 'connected_clients') - 1;
      reading.clientMemory += field(text, 'mem_clients_normal');
    });
    // A bulk string's header and trailer besides the text: `$<length>\r\n…\r\n`.
    this.lastReply = texts.map((text) => Buffer.byteLength(text) + String(Buffer.byteLength(text)).length + 5);
    return reading;
  }

  close(): void {
    for (const connection of this.connections) connection.disconnect();
  }
}

/**
 * What a PostgreSQL server has spent, read from /proc: the CPU of the postmaster, of the children it has reaped, and of
 * its processes now (a backend per connection). Its statements are counted by the holders' processes, which send them.
 */
class PostgresMeter {
  constructor(private readonly directory: string) {}

  read(): Promise<Reading> {
    const postmaster = Number(readFileSync(join(this.directory, 'data', 'postmaster.pid'), 'utf8').split('\n')[0]);
    const ticks = (pid: number, reaped: boolean): number => {
      try {
        // The fields after the command's closing parenthesis: utime is the 12th, stime the 13th, cutime and cstime next.
        const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
        const own = Number(fields[11]) + Number(fields[12]);
        return reaped ? own + Number(fields[13]) + Number(fields[14]) : own;
      } catch {
        return 0;
      }
    };
    let children: number[] = [];
    try {
      children = readFileSync(`/proc/${postmaster}/task/${postmaster}/children`, 'utf8')
        .split(' ')
        .filter(Boolean)
        .map(Number);
    } catch {
      // None, or the server gone.
    }
    const total = ticks(postmaster, true) + children.reduce((sum, pid) => sum + ticks(pid, false), 0);
    // Linux's clock ticks: 100 a second.
    return Promise.resolve({
      commands: new Map<string, number>(),
      inBytes: 0,
      outBytes: 0,
      cpuSeconds: total / 100,
      clients: children.length,
      clientMemory: 0,
    });
  }

  close(): void {}
}

/** `INFO all` sent as `*2 $4 info $3 all`, counted as input by the reading after it. */
const INFO_REQUEST_BYTES = Buffer.byteLength('*2\r\n$4\r\ninfo\r\n$3\r\nall\r\n');

interface Cost {
  commands: number;
  byCommand: Record<string, number>;
  inBytes: number;
  outBytes: number;
  cpuMs: number;
}

function costBetween(before: Reading, after: Reading, masters: number): Cost {
  const byCommand: Record<string, number> = {};
  for (const [name, calls] of after.commands) {
    // Each master counted one INFO (the reading before) since the reading before was taken.
    const delta = calls - (before.commands.get(name) ?? 0) - (name === 'info' ? masters : 0);
    if (delta > 0) byCommand[name] = delta;
  }
  return {
    commands: Object.values(byCommand).reduce((sum, calls) => sum + calls, 0),
    byCommand,
    inBytes: after.inBytes - before.inBytes - masters * INFO_REQUEST_BYTES,
    outBytes: after.outBytes - before.outBytes,
    cpuMs: (after.cpuSeconds - before.cpuSeconds) * 1000,
  };
}

async function startSetup(kind: Setup['name']): Promise<Setup> {
  if (kind === 'PostgreSQL') {
    const server = await startPostgresServer({ settings: { max_connections: '300' } });
    const pool = new pg.Pool({ connectionString: server.url, max: 1 });
    await PostgresTokenStore.createSchema(pool);
    await pool.end();
    return {
      name: kind,
      target: { postgres: server.url },
      ports: [],
      postgresDirectory: server.directory,
      stop: () => server.stop(),
    };
  }
  if (kind === 'redis-server') {
    const server = await startRedisServer();
    return { name: kind, target: { url: server.url }, ports: [server.port], stop: () => server.stop() };
  }
  const cluster = await startRedisCluster({ masters: 3 });
  return { name: kind, target: { nodes: cluster.nodes }, ports: cluster.livePorts(), stop: () => cluster.stop() };
}

// ---------------------------------------------------------------------------------------------------------------
// The fleet: P processes of A holders
// ---------------------------------------------------------------------------------------------------------------

export interface HoldersFleet {
  /** Every holder fires one request at once; resolves with what each saw, and the messages their subscribers got. */
  round(): Promise<{ holders: HolderRound[]; messages: number; openFiles: number; statements: number }>;
  stop(): Promise<void>;
}

export async function startHolders(
  count: number,
  processes: number,
  config: Omit<HoldersWorkerConfig, 'attachments'>,
): Promise<HoldersFleet> {
  const children: ChildProcess[] = [];
  const waiting = new Map<number, Array<(reply: Extract<HoldersReply, { type: 'round-done' }>) => void>>();
  const stop = async () => {
    await Promise.all(
      children.map(async (child) => {
        if (child.exitCode !== null || child.signalCode !== null) return;
        const ended = new Promise<void>((resolve) => child.once('exit', () => resolve()));
        // A process that does not close its holders within 20 s is ended.
        const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
        if (child.connected) child.send({ type: 'exit' } satisfies HoldersRequest);
        else child.kill('SIGKILL');
        await ended;
        clearTimeout(timer);
      }),
    );
  };
  try {
    await Promise.all(
      Array.from({ length: processes }, (_, i) => {
        // The first processes take one more when N does not divide evenly.
        const attachments = Math.floor(count / processes) + (i < count % processes ? 1 : 0);
        const child = fork(join(__dirname, 'fleet-holders-worker.ts'), [], {
          execArgv: ['--import', 'tsx'],
          env: { ...process.env, HOLDERS_WORKER: JSON.stringify({ ...config, attachments }) },
          stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
        });
        children.push(child);
        return new Promise<void>((resolve, reject) => {
          const timer = setTimeout(
            () => reject(new Error(`A holders process was not ready within ${120 + attachments} s.`)),
            (120 + attachments) * 1000,
          );
          child.on('message', (reply: HoldersReply) => {
            if (reply.type === 'ready') {
              clearTimeout(timer);
              resolve();
            } else {
              waiting.get(reply.id)?.shift()?.(reply);
            }
          });
          child.once('exit', (code) => {
            clearTimeout(timer);
            reject(new Error(`A holders process exited with ${code} (its stderr above says why).`));
          });
        });
      }),
    );
  } catch (error) {
    await stop();
    throw error;
  }
  let next = 1;
  return {
    async round() {
      const id = next++;
      const replies = await Promise.all(
        children.map(
          (child) =>
            new Promise<Extract<HoldersReply, { type: 'round-done' }>>((resolve) => {
              const list = waiting.get(id) ?? [];
              list.push(resolve);
              waiting.set(id, list);
              child.send({ type: 'round', id } satisfies HoldersRequest);
            }),
        ),
      );
      waiting.delete(id);
      return {
        holders: replies.flatMap((reply) => reply.holders),
        messages: replies.reduce((sum, reply) => sum + reply.messages, 0),
        openFiles: Math.max(...replies.map((reply) => reply.openFiles)),
        statements: replies.reduce((sum, reply) => sum + reply.statements, 0),
      };
    },
    stop,
  };
}

// ---------------------------------------------------------------------------------------------------------------
// One size on one setup
// ---------------------------------------------------------------------------------------------------------------

export interface HoldersResult {
  setup: Setup['name'];
  holders: number;
  processes: number;
  expiries: number;
  logins: number;
  failed: number;
  tokenCallsPerExpiry: number;
  /** Redis connections of the fleet, and the memory Redis gives their buffers, once logged in. */
  connections: number;
  clientMemoryBytes: number;
  /** The most file descriptors a holders process held, and the emulator's, after the first round. */
  openFiles: { holdersProcess: number; emulator: number };
  startSeconds: number;
  perHolderPerExpiry: { commands: number; inBytes: number; outBytes: number; messages: number; cpuUs: number };
  /** The same, in a round with the pair valid: what a request costs Redis with no renewal. */
  perHolderValid: { commands: number };
  perExpiry: { commands: number; cpuMs: number; messages: number; byCommand: Record<string, number> };
  /** From an expiry to each holder having the new pair, over every holder of every expiry, ms. */
  delayMs: { p50: number; p99: number; max: number; missing: number };
}

async function measure(
  setup: Setup,
  emulator: RemoteEmulator,
  holders: number,
  options: HoldersOptions,
): Promise<HoldersResult> {
  const processes = Math.min(options.processes, holders);
  const started = Date.now();
  const fleet = await startHolders(holders, processes, {
    emulatorUrl: emulator.url,
    target: setup.target,
    prefix: `bench-holders:${holders}:${Date.now()}`,
    username: BENCH_USER,
    password: BENCH_PASSWORD,
  });
  const meter = setup.postgresDirectory ? new PostgresMeter(setup.postgresDirectory) : new Meter(setup.ports);
  const masters = setup.ports.length;
  /** A round's cost: on Postgres, the statements its processes counted stand for the commands. */
  const costOf = (before: Reading, after: Reading, statements: number): Cost => {
    const cost = costBetween(before, after, masters);
    return setup.postgresDirectory ? { ...cost, commands: statements, byCommand: { statements } } : cost;
  };
  try {
    const startSeconds = round((Date.now() - started) / 1000, 1);
    const counters0 = await emulator.counters();
    let failed = 0;
    const first = await fleet.round();
    failed += first.holders.filter((holder) => !holder.ok).length;
    const openFiles = { holdersProcess: first.openFiles, emulator: openFilesOf(emulator.pid) };
    const loggedIn = await meter.read();
    const valid = await fleet.round();
    failed += valid.holders.filter((holder) => !holder.ok).length;
    const validCost = costOf(loggedIn, await meter.read(), valid.statements);
    const counters1 = await emulator.counters();
    const delays: number[] = [];
    let missing = 0;
    let messages = 0;
    const costs: Cost[] = [];
    for (let expiry = 0; expiry < options.expiries; expiry += 1) {
      const before = await meter.read();
      await emulator.expire();
      const expiredAt = Date.now();
      const { holders: seen, messages: received, statements } = await fleet.round();
      costs.push(costOf(before, await meter.read(), statements));
      messages += received;
      failed += seen.filter((holder) => !holder.ok).length;
      for (const holder of seen) {
        if (holder.pairAt === null) missing += 1;
        delays.push((holder.pairAt ?? holder.doneAt) - expiredAt);
      }
    }
    const counters2 = await emulator.counters();
    const sum = (value: (cost: Cost) => number) => costs.reduce((total, cost) => total + value(cost), 0);
    const perHolder = (total: number, digits = 2) => round(total / options.expiries / holders, digits);
    const byCommand: Record<string, number> = {};
    for (const cost of costs)
      for (const [name, calls] of Object.entries(cost.byCommand)) byCommand[name] = (byCommand[name] ?? 0) + calls;
    for (const name of Object.keys(byCommand)) byCommand[name] = round(byCommand[name]! / options.expiries, 1);
    return {
      setup: setup.name,
      holders,
      processes,
      expiries: options.expiries,
      logins: counters2.logins - counters0.logins,
      failed,
      tokenCallsPerExpiry: round((counters2.tokenCalls - counters1.tokenCalls) / options.expiries, 2),
      connections: loggedIn.clients,
      clientMemoryBytes: loggedIn.clientMemory,
      openFiles,
      startSeconds,
      perHolderPerExpiry: {
        commands: perHolder(sum((cost) => cost.commands)),
        inBytes: perHolder(
          sum((cost) => cost.inBytes),
          0,
        ),
        outBytes: perHolder(
          sum((cost) => cost.outBytes),
          0,
        ),
        messages: perHolder(messages),
        cpuUs: perHolder(sum((cost) => cost.cpuMs) * 1000, 1),
      },
      perHolderValid: { commands: round(validCost.commands / holders, 2) },
      perExpiry: {
        commands: round(sum((cost) => cost.commands) / options.expiries, 1),
        cpuMs: round(sum((cost) => cost.cpuMs) / options.expiries, 1),
        messages: round(messages / options.expiries, 1),
        byCommand,
      },
      delayMs: {
        p50: round(percentile(delays, 50), 0),
        p99: round(percentile(delays, 99), 0),
        max: round(Math.max(...delays), 0),
        missing,
      },
    };
  } finally {
    meter.close();
    await fleet.stop();
  }
}

export interface FailureResult {
  setup: Setup['name'];
  holders: number;
  cooldownMs: number;
  seconds: number;
  rounds: number;
  requests: number;
  /** The first round: until every holder's first request had failed, and what Redis ran meanwhile. */
  firstRound: { ms: number; commandsPerHolder: number; lockTriesPerHolder: number; cpuMs: number };
  rejectedLogins: number;
  /** Between one rejected login and the next, ms: each at least the pause then in force (1, 2, 4, 8, 16, 16… s). */
  gapsMs: number[];
  /** Rejected logins that came before the pause of the one before had ended. */
  early: number;
  tokenCalls: number;
  /** The failed requests by the plugin's error code: every one of them, the failure being the point. */
  errors: Record<string, number>;
}

/** The login pause after the k-th rejection in a row (k from 1): it doubles, up to 16 times the base. */
const pauseAfter = (k: number) => COOLDOWN_MS * 2 ** Math.min(k - 1, 4);

async function measureFailure(setup: Setup, holders: number, processes: number): Promise<FailureResult> {
  // An emulator of its own, which keeps its calls: when each login came.
  const emulator = await startRemoteEmulator({ recordCalls: true });
  const meter = new Meter(setup.ports);
  try {
    const fleet = await startHolders(holders, Math.min(processes, holders), {
      emulatorUrl: emulator.url,
      target: setup.target,
      prefix: `bench-holders-failure:${holders}:${Date.now()}`,
      username: BENCH_USER,
      password: 'not-the-password',
      loginCooldownMs: COOLDOWN_MS,
    });
    try {
      const start = await meter.read();
      const started = Date.now();
      const errors: Record<string, number> = {};
      let rounds = 0;
      let requests = 0;
      let firstRound: FailureResult['firstRound'] | undefined;
      while (rounds === 0 || Date.now() - started < FAILURE_RUN_MS) {
        const roundStarted = Date.now();
        const { holders: seen } = await fleet.round();
        rounds += 1;
        requests += seen.length;
        for (const holder of seen) errors[holder.error ?? 'none'] = (errors[holder.error ?? 'none'] ?? 0) + 1;
        if (!firstRound) {
          const cost = costBetween(start, await meter.read(), setup.ports.length);
          firstRound = {
            ms: Date.now() - roundStarted,
            commandsPerHolder: round(cost.commands / holders, 1),
            lockTriesPerHolder: round((cost.byCommand.eval ?? 0) / holders, 1),
            cpuMs: round(cost.cpuMs, 0),
          };
        }
        const left = FAILURE_EVERY_MS - (Date.now() - roundStarted);
        if (left > 0) await new Promise((resolve) => setTimeout(resolve, left));
      }
      const counters = await emulator.counters();
      const logins = (await emulator.loginTimes()).sort((x, y) => x - y);
      const gapsMs = logins.slice(1).map((at, i) => at - logins[i]!);
      return {
        setup: setup.name,
        holders,
        cooldownMs: COOLDOWN_MS,
        seconds: round((Date.now() - started) / 1000, 1),
        rounds,
        requests,
        firstRound: firstRound!,
        rejectedLogins: counters.rejected,
        gapsMs,
        // A few ms of leeway: the pause is measured from the holder's clock reading, the gap from the emulator's.
        early: gapsMs.filter((gap, i) => gap < pauseAfter(i + 1) - 20).length,
        tokenCalls: counters.tokenCalls,
        errors,
      };
    } finally {
      await fleet.stop();
    }
  } finally {
    meter.close();
    await emulator.close();
  }
}

// ---------------------------------------------------------------------------------------------------------------
// The run
// ---------------------------------------------------------------------------------------------------------------

/** File descriptors a process may open here (`ulimit -n`, which children inherit). */
export function openFileLimit(): number {
  try {
    return Number(execFileSync('sh', ['-c', 'ulimit -n'], { encoding: 'utf8' }).trim());
  } catch {
    return Number.NaN;
  }
}

function openFilesOf(pid: number): number {
  try {
    return readdirSync(`/proc/${pid}/fd`).length;
  } catch {
    return Number.NaN;
  }
}

function table(results: readonly HoldersResult[]): string {
  return markdownTable(
    [
      'setup',
      'holders (processes × each)',
      'logins',
      'token calls / expiry',
      'failed',
      'commands (Redis) or statements (Postgres) / holder / expiry',
      'bytes in / out / holder / expiry',
      'pub/sub messages / holder / expiry',
      'server CPU / holder / expiry',
      'server CPU / expiry',
      'delay to every holder, p50 / p99 / max ms',
      'connections',
    ],
    results.map((r) => [
      r.setup,
      `${r.holders.toLocaleString('en-US')} (${r.processes} × ${r.holders / r.processes})`,
      String(r.logins),
      r.tokenCallsPerExpiry.toFixed(2),
      String(r.failed),
      r.perHolderPerExpiry.commands.toFixed(2),
      r.setup === SETUPS.postgres ? '—' : `${r.perHolderPerExpiry.inBytes} / ${r.perHolderPerExpiry.outBytes}`,
      r.setup === SETUPS.postgres ? '—' : r.perHolderPerExpiry.messages.toFixed(2),
      `${r.perHolderPerExpiry.cpuUs} µs`,
      `${r.perExpiry.cpuMs} ms`,
      `${r.delayMs.p50} / ${r.delayMs.p99} / ${r.delayMs.max}`,
      r.connections.toLocaleString('en-US'),
    ]),
  );
}

function failureTable(failures: readonly FailureResult[]): string {
  return markdownTable(
    [
      'setup',
      'holders',
      'rejected logins (gaps, s)',
      'before the pause ended',
      'requests (all failed)',
      'first round: until every holder failed',
      'first round: Redis commands / lock tries per holder',
      'first round: Redis CPU',
    ],
    failures.map((f) => [
      f.setup,
      f.holders.toLocaleString('en-US'),
      `${f.rejectedLogins} (${f.gapsMs.map((gap) => (gap / 1000).toFixed(1)).join(', ')}) in ${f.seconds} s`,
      String(f.early),
      f.requests.toLocaleString('en-US'),
      `${f.firstRound.ms.toLocaleString('en-US')} ms`,
      `${f.firstRound.commandsPerHolder} / ${f.firstRound.lockTriesPerHolder}`,
      `${f.firstRound.cpuMs} ms`,
    ]),
  );
}

/** The most commands per holder per expiry at any size over those at the smallest, on one setup. */
function growthOf(results: readonly HoldersResult[]): number {
  const smallest = results.reduce((a, b) => (b.holders < a.holders ? b : a));
  return Math.max(...results.map((r) => r.perHolderPerExpiry.commands)) / smallest.perHolderPerExpiry.commands;
}

export async function holdersBenchmark(options: HoldersOptions): Promise<void> {
  const largest = Math.max(...options.sizes);
  const limit = openFileLimit();
  // Per holder: a Redis client, a subscriber (a Cluster's open one per master each, and one more to subscribe), an
  // HTTP socket; the emulator holds the other end of every HTTP socket.
  const perProcess = Math.ceil(largest / Math.min(options.processes, largest)) * 9 + 100;
  console.log(
    `Fleet benchmark, holders: ${options.sizes.join(', ')} holders in ${options.processes} processes, ${options.expiries} expiries, on ${(options.setups ?? Object.values(SETUPS)).join(', ')}; ulimit -n ${limit}; ${options.machine}`,
  );
  if (limit < Math.max(perProcess, largest + 100))
    throw new Error(
      `ulimit -n is ${limit}: ${largest} holders need about ${Math.max(perProcess, largest + 100)} open files in one process ` +
        '(the emulator holds a socket per holder; a holders process up to 9 per holder on a Cluster). Raise it ' +
        '(`ulimit -n 65536` in the shell, as far as the hard limit allows), or give --processes more processes.',
    );
  const emulator = await startRemoteEmulator();
  const results: HoldersResult[] = [];
  const failures: FailureResult[] = [];
  try {
    for (const kind of options.setups ?? Object.values(SETUPS)) {
      const setup = await startSetup(kind);
      try {
        for (const size of options.sizes) {
          const result = await measure(setup, emulator, size, options);
          results.push(result);
          console.log(
            `  ${kind}, ${size} holders: ${result.perHolderPerExpiry.commands} commands / holder / expiry, ${result.tokenCallsPerExpiry} token calls / expiry, delay p99 ${result.delayMs.p99} ms (start ${result.startSeconds} s; open files: ${result.openFiles.holdersProcess} in a holders process, ${result.openFiles.emulator} in the emulator)`,
          );
        }
        if (kind === 'redis-server')
          for (const size of options.sizes) {
            const failure = await measureFailure(setup, size, options.processes);
            failures.push(failure);
            console.log(
              `  ${kind}, ${size} holders, wrong password: ${failure.rejectedLogins} rejected logins in ${failure.seconds} s, ${failure.early} early; first round ${failure.firstRound.ms} ms`,
            );
          }
      } finally {
        await setup.stop();
      }
    }
  } finally {
    await emulator.close();
  }
  console.log(`\n${table(results)}\n`);
  if (failures.length > 0) console.log(`${failureTable(failures)}\n`);
  await mkdir(join(__dirname, 'results'), { recursive: true });
  const only = options.setups?.length === 1 && options.setups[0] === SETUPS.postgres ? '-postgres' : '';
  const name = `${options.standard ? 'fleet-holders' : 'fleet-holders-quick'}${only}`;
  await writeFile(
    join(__dirname, 'results', `${name}.json`),
    `${JSON.stringify({ machine: options.machine, date: new Date().toISOString(), results, failures }, null, 2)}\n`,
  );
  await writeFile(join(__dirname, 'results', `${name}.svg`), fleetChart(results, options.machine));
  const wrong: string[] = [];
  for (const r of results) {
    if (r.failed > 0) wrong.push(`${r.setup}, ${r.holders}: ${r.failed} failed requests`);
    if (r.logins !== 1) wrong.push(`${r.setup}, ${r.holders}: ${r.logins} logins`);
    if (r.tokenCallsPerExpiry !== 1)
      wrong.push(`${r.setup}, ${r.holders}: ${r.tokenCallsPerExpiry} token calls / expiry`);
  }
  for (const failure of failures)
    if (failure.early > 0 || failure.rejectedLogins < 1 || failure.tokenCalls !== failure.rejectedLogins)
      wrong.push(
        `wrong password, ${failure.holders} holders: ${failure.rejectedLogins} rejected logins, ${failure.early} before the pause ended`,
      );
  for (const setup of new Set(results.map((r) => r.setup))) {
    const of = results.filter((r) => r.setup === setup);
    if (of.length > 1 && growthOf(of) > 1.2)
      wrong.push(`${setup}: commands per holder per expiry grow ${round(growthOf(of), 2)}× from the smallest size`);
  }
  if (wrong.length > 0) {
    console.error(`Not flat, or not one careful fleet: ${wrong.join('; ')}`);
    process.exitCode = 1;
  }
}
