// `npm run soak`: a long run of the plugin against the bundled emulator, not part of `npm test`.
//
// Drives --requests (100,000) requests with --concurrency (150) in flight through one axios instance, across
// --expiries (200) expiries spread evenly over the run, with random faults drawn from a PRNG seeded by --seed, so
// the fault schedule of a run is repeatable. It reports requests/s, token calls, failures by code and heap growth,
// and exits 1 when a check fails:
//   heap      heap used after all requests settled minus heap used after the warm-up (the first 10%), both after
//             two forced GCs on an idle pool, exceeds --max-heap-growth-mb (10 MB);
//   settled   a request is still pending STUCK_MS after it started (a watchdog stops the run);
//   expiries  fewer expiries than --expiries happened (an expiry waits for requests with an older token: `overlap`);
//   tokens    more token calls than the faults justify (rule in `tokenCalls` below), or more tokens minted than
//             one login plus one per expiry;
//   failures  a request failed in a way no injected fault explains (see `unexplainedFailures` below);
//   listeners the long-lived AbortSignal shared by half of the requests still has listeners once all settled.
//
//   npm run soak                 100,000 requests, 200 expiries (~1.5 min on 2 cores)
//   npm run soak -- --quick      10,000 requests, 20 expiries
//   npm run soak -- --requests 50000 --expiries 100 --concurrency 200 --seed 7
//   npm run soak -- --overlap    expiries strictly on schedule, even over requests still in flight (see `overlap`)
//   --max-heap-growth-mb 10      the heap check's limit
import { getEventListeners, setMaxListeners } from 'node:events';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import v8 from 'node:v8';
import vm from 'node:vm';
import axios, { isAxiosError } from 'axios';
import type { AxiosInstance, AxiosRequestConfig, Method } from 'axios';
import { attachTokenAuth, isTokenAuthError } from '../lib/index.js';
import type { TokenAuth } from '../lib/index.js';
import { startEmulator } from '../lib/emulator/index.js';
import type { EmulatorCounters, EmulatorFault, TokenServiceEmulator } from '../lib/emulator/index.js';
import { percentile, pool, round, sleep, slope } from '../bench/stats.js';

// ---------------------------------------------------------------------------------------------------- options

interface Options {
  requests: number;
  expiries: number;
  concurrency: number;
  seed: number;
  /**
   * Without --overlap, an expiry that falls due waits (a few requests) until the plugin holds a token minted since the
   * previous expiry and no request is in flight with an older token or as a replay: a real token lives 45 minutes, so
   * no request (with its replay) outlives a whole token lifetime, and each expiry kills one token. With --overlap,
   * expiries fire strictly on schedule even then, which compresses time beyond any real lifetime: a slow request's
   * replay can land after the next expiry (see the HTTP_401 note in the report).
   */
  overlap: boolean;
  maxHeapGrowthMb: number;
}

function readOptions(): Options {
  const { values } = parseArgs({
    options: {
      requests: { type: 'string' },
      expiries: { type: 'string' },
      concurrency: { type: 'string', default: '150' },
      seed: { type: 'string', default: '1' },
      quick: { type: 'boolean', default: false },
      overlap: { type: 'boolean', default: false },
      'max-heap-growth-mb': { type: 'string', default: '10' },
    },
  });
  const options: Options = {
    requests: count(values.requests ?? (values.quick ? '10000' : '100000'), 'requests', 10),
    expiries: count(values.expiries ?? (values.quick ? '20' : '200'), 'expiries', 0),
    concurrency: count(values.concurrency, 'concurrency'),
    seed: count(values.seed, 'seed', 0),
    overlap: values.overlap,
    maxHeapGrowthMb: Number(values['max-heap-growth-mb']),
  };
  if (!(options.maxHeapGrowthMb > 0)) throw new Error('--max-heap-growth-mb must be a number above 0.');
  return options;
}

function count(text: string, option: string, min = 1): number {
  const value = Number(text.replace(/_/g, ''));
  if (!Number.isInteger(value) || value < min)
    throw new Error(`--${option} must be a whole number of ${min} or more, got "${text}".`);
  return value;
}

/** Token calls time out after this: a 'hang' fault fails its renewal quickly instead of after 15 s. */
const TOKEN_TIMEOUT_MS = 500;
/**
 * Nothing here should take more than a few seconds: data latency ≤ 4 ms, a renewal ≤ 4 attempts of ≤ 500 ms plus
 * ~80 ms of backoff (two renewals when a refused refresh token leads to a login), plus queueing on a busy loop.
 */
const STUCK_MS = 30_000;
/** Heap checkpoints: the pool drains, GC runs twice, heap is read. The first one is the warm-up baseline. */
const CHECKPOINTS = 10;
/** Share of requests that carry the long-lived shared AbortSignal (an application's shutdown signal). */
const SHARED_SIGNAL_RATE = 0.5;
/** Share of requests aborted by their own controller 0–20 ms after they start (a user navigating away). */
const ABORT_RATE = 0.002;
/** Chance per request of injecting 1–3 data-call 503s (the plugin does not retry them: each is one failure). */
const DATA_FAULT_RATE = 1 / 1500;

// ---------------------------------------------------------------------------------------------------- PRNG

/** mulberry32: small, fast, good enough to make a fault schedule repeatable from a seed. */
function prng(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

// Faults and traffic are drawn in issue order, which is sequential, so they repeat exactly for a seed; the fault of
// each expiry comes from its own stream, so an expiry that waits a few requests draws the same fault. Latency is
// drawn when the emulator answers, in an order the scheduler decides: it gets its own stream too.
interface Randoms {
  fault: () => number;
  expiry: () => number;
  traffic: () => number;
  latency: () => number;
}

function randomStreams(seed: number): Randoms {
  return {
    fault: prng(seed),
    expiry: prng(seed ^ 0xc2b2ae35),
    traffic: prng(seed ^ 0x9e3779b9),
    latency: prng(seed ^ 0x85ebca6b),
  };
}

const pick = <T>(random: () => number, items: readonly T[]): T => items[Math.floor(random() * items.length)]!;

// ---------------------------------------------------------------------------------------------------- the process

const gc: NodeJS.GCFunction =
  typeof globalThis.gc === 'function'
    ? globalThis.gc
    : (() => {
        // Run without --expose-gc (e.g. `npx tsx scripts/soak.ts`): expose it now.
        v8.setFlagsFromString('--expose-gc');
        return vm.runInNewContext('gc') as NodeJS.GCFunction;
      })();

async function settledHeap(): Promise<number> {
  // Let sockets, timers and finalizers of the requests that just ended run, then collect twice.
  await sleep(50);
  gc();
  await new Promise((resolve) => setImmediate(resolve));
  gc();
  return process.memoryUsage().heapUsed;
}

function resources(): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const type of process.getActiveResourcesInfo()) counts[type] = (counts[type] ?? 0) + 1;
  return counts;
}

function describeResources(counts: Record<string, number>): string {
  const entries = Object.entries(counts).sort(([a], [b]) => a.localeCompare(b));
  return entries.length === 0 ? '-' : entries.map(([type, n]) => `${type} ${n}`).join(', ');
}

const mb = (bytes: number) => bytes / 1024 / 1024;

/** Process warnings (a listener leak, say) from now on. */
function collectWarnings(): string[] {
  const warnings: string[] = [];
  process.on('warning', (warning) => warnings.push(`${warning.name}: ${warning.message}`));
  return warnings;
}

// ---------------------------------------------------------------------------------------------------- the target

/**
 * Which token generation each request in flight last left with, and which are replays: what an expiry waits for
 * without `overlap`.
 */
class Tracker {
  /** Bumped by every login and refresh. */
  generation = 0;
  /** Requests not yet settled, with when they started. */
  readonly pending = new Map<number, number>();
  private readonly sentWith = new Map<number, number>();
  private readonly replaying = new Set<number>();

  /**
   * Registered before the plugin, so it runs after the plugin's request interceptor (axios runs request interceptors
   * last-registered first), on replays too.
   */
  watch(api: AxiosInstance): void {
    api.interceptors.request.use((config) => {
      const i = Number(config.headers.get('X-Soak-Request'));
      if (!this.pending.has(i)) return config;
      if (this.sentWith.has(i)) this.replaying.add(i);
      this.sentWith.set(i, this.generation);
      return config;
    });
  }

  follow(auth: TokenAuth): void {
    for (const event of ['login', 'refresh'] as const) auth.on(event, () => (this.generation += 1));
  }

  settled(i: number): void {
    this.pending.delete(i);
    this.sentWith.delete(i);
    this.replaying.delete(i);
  }

  /**
   * A replay is sent once, with a token minted moments before: an expiry landing on it is one no real token lifetime
   * produces (the plugin rightly does not renew twice for one request).
   */
  staleInFlight(): boolean {
    if (this.replaying.size > 0) return true;
    for (const sent of this.sentWith.values()) if (sent < this.generation) return true;
    return false;
  }
}

/** The emulator and the axios instance with the plugin, watched. */
interface Target {
  emulator: TokenServiceEmulator;
  api: AxiosInstance;
  auth: TokenAuth;
  tracker: Tracker;
  /** The plugin's failure events, by `operation:code`. */
  authFailures: Record<string, number>;
}

async function startTarget(random: Randoms): Promise<Target> {
  const users = { soak: 'soak-password' };
  const emulator = await startEmulator({
    users,
    log: false,
    // Small random data latency; token calls a little slower, as a real service's are.
    latency: { data: () => Math.floor(random.latency() * 4), token: 3, login: 5 },
  });
  const [username, password] = Object.entries(users)[0]!;
  const api = axios.create({ baseURL: emulator.url });
  const tracker = new Tracker();
  tracker.watch(api);
  const auth = attachTokenAuth(api, {
    credentials: { username, password },
    // 200 expiries within minutes is far beyond any hourly budget (default 10 logins, 30 token calls an hour):
    // the budget would refuse renewals after the first few expiries. The soak checks the count itself instead.
    tokenBudget: false,
    tokenRetryDelayMs: 10,
    tokenTimeoutMs: TOKEN_TIMEOUT_MS,
  });
  tracker.follow(auth);
  const authFailures: Record<string, number> = {};
  auth.on('failure', ({ operation, code }) => {
    const key = `${operation}:${code}`;
    authFailures[key] = (authFailures[key] ?? 0) + 1;
  });
  return { emulator, api, auth, tracker, authFailures };
}

// ---------------------------------------------------------------------------------------------------- faults

interface Injected {
  data: number;
  token: number;
  login: number;
  /** Token-call episodes by kind: how many expiries got which fault. */
  episodes: Record<string, number>;
  /** Expiries whose renewal is meant to fail for its waiters (retries exhausted, hang, cut-off answer). */
  fatal: number;
  revokes: number;
  aborts: number;
}

/** What happens before each request leaves: an expiry with its random token fault, when one is due; a data fault. */
class FaultSchedule {
  readonly injected: Injected = { data: 0, token: 0, login: 0, episodes: {}, fatal: 0, revokes: 0, aborts: 0 };
  /** Requests between two planned expiries. */
  readonly every: number;
  expiriesDone = 0;
  /** Requests issued while an expiry was due but waited for in-flight requests with an older token. */
  deferredRequests = 0;
  private readonly plannedAt: number[];
  private generationAtExpiry = -1;

  constructor(
    private readonly target: Target,
    private readonly options: Options,
    private readonly random: Randoms,
  ) {
    // Evenly spread over the first 98% of the run, so that deferred expiries still fit before the end.
    this.every = options.expiries > 0 ? (options.requests * 0.98) / options.expiries : Infinity;
    this.plannedAt = Array.from({ length: options.expiries }, (_, k) => Math.floor(this.every / 2 + k * this.every));
  }

  before(i: number): void {
    const { tracker } = this.target;
    const due = this.expiriesDone < this.options.expiries && i >= this.plannedAt[this.expiriesDone]!;
    if (due && !this.options.overlap && (tracker.generation === this.generationAtExpiry || tracker.staleInFlight()))
      this.deferredRequests += 1;
    else if (due) this.expire();
    // Not in the last stretch, so that every fault is served before the run ends.
    if (i < this.options.requests - 1000 && this.random.fault() < DATA_FAULT_RATE) {
      const times = 1 + Math.floor(this.random.fault() * 3);
      this.target.emulator.inject('data', { status: 503 }, times);
      this.injected.data += times;
    }
  }

  /** Expires the access tokens, with a token fault drawn for the renewal that follows. */
  private expire(): void {
    const { emulator, tracker } = this.target;
    const random = this.random.expiry;
    const flaky = (): EmulatorFault => pick(random, [{ status: 503 }, 'drop'] as const);
    this.generationAtExpiry = tracker.generation;
    // Token faults wait in the emulator's queue for the next token call, which this expiry causes.
    const roll = random();
    if (roll < 0.5) {
      this.injected.episodes.none = (this.injected.episodes.none ?? 0) + 1;
    } else if (roll < 0.7) {
      // 1 to 3 failed attempts: within tokenRetries (3), so the renewal succeeds and no request fails.
      this.episode('token-retried', 'token', Array.from({ length: 1 + Math.floor(random() * 3) }, flaky), false);
    } else if (roll < 0.76) {
      this.episode('token-exhausted', 'token', Array.from({ length: 4 }, flaky), true);
    } else if (roll < 0.82) {
      this.episode('token-hang', 'token', ['hang'], true);
    } else if (roll < 0.88) {
      this.episode('token-reset', 'token', ['reset'], true);
    } else {
      // The refresh token is refused (401), so the plugin logs in; the login itself may be flaky.
      emulator.revokeRefreshTokens();
      this.injected.revokes += 1;
      if (roll < 0.97)
        this.episode('revoke+login-retried', 'login', Array.from({ length: Math.floor(random() * 3) }, flaky), false);
      else this.episode('revoke+login-exhausted', 'login', Array.from({ length: 4 }, flaky), true);
    }
    emulator.expireAccessTokens();
    this.expiriesDone += 1;
  }

  private episode(name: string, route: 'token' | 'login', faults: EmulatorFault[], fatal: boolean): void {
    for (const fault of faults) this.target.emulator.inject(route, fault);
    this.injected[route] += faults.length;
    this.injected.episodes[name] = (this.injected.episodes[name] ?? 0) + 1;
    if (fatal) this.injected.fatal += 1;
  }
}

// ---------------------------------------------------------------------------------------------------- traffic

const PATHS = [
  '/allocation/api/v1/tracking/order-list',
  '/api/v1/orders',
  '/api/v1/stock',
  '/api/v1/customers/42/invoices',
];

/** Request `i`: a GET, POST, PUT or DELETE with a JSON body for the writes; and what the emulator should echo. */
function requestFor(
  i: number,
  random: () => number,
): { config: AxiosRequestConfig; method: Method; path: string; body?: unknown } {
  const roll = random();
  const base = pick(random, PATHS);
  if (roll < 0.6) {
    const path = `${base}?page=${Math.floor(random() * 50)}&i=${i}`;
    return { config: { method: 'GET', url: path, headers: { 'X-Soak-Request': i } }, method: 'GET', path };
  }
  if (roll < 0.95) {
    const method: Method = roll < 0.85 ? 'POST' : 'PUT';
    const items = Array.from({ length: 1 + Math.floor(random() * 5) }, (_, n) => ({
      sku: `SKU-${i}-${n}`,
      qty: n + 1,
      note: 'ü€ "quoted"',
    }));
    const body = { request: i, items, ...(random() < 0.02 ? { padding: 'x'.repeat(8192) } : {}) };
    return { config: { method, url: base, data: body, headers: { 'X-Soak-Request': i } }, method, path: base, body };
  }
  const path = `${base}/${i}`;
  return { config: { method: 'DELETE', url: path, headers: { 'X-Soak-Request': i } }, method: 'DELETE', path };
}

/** A failure's code: the TokenAuthError code, HTTP_<status> for an answer, else axios' or Node's error code. */
function codeOf(error: unknown): string {
  if (isTokenAuthError(error)) return error.code;
  if (isAxiosError(error)) return error.response ? `HTTP_${error.response.status}` : (error.code ?? 'AXIOS_ERROR');
  return error instanceof Error ? error.name : 'NON_ERROR';
}

/** What the requests came to. */
class Tally {
  succeeded = 0;
  readonly failures: Record<string, number> = {};
  /** First message seen per failure code, for the report. */
  readonly samples: Record<string, string> = {};
  /** Milliseconds each settled request took, in the order they settled. */
  readonly durations: Float64Array;
  completed = 0;

  constructor(requests: number) {
    this.durations = new Float64Array(requests);
  }

  get failed(): number {
    return Object.values(this.failures).reduce((sum, n) => sum + n, 0);
  }

  fail(code: string, message: string): void {
    this.failures[code] = (this.failures[code] ?? 0) + 1;
    this.samples[code] ??= message.slice(0, 240);
  }

  settled(ms: number): void {
    this.durations[this.completed] = ms;
    this.completed += 1;
  }
}

/** Everything one run shares between its phases. */
interface Run {
  options: Options;
  target: Target;
  schedule: FaultSchedule;
  tally: Tally;
  /** A long-lived signal, as an application's shutdown signal passed to many requests. */
  shutdown: AbortController;
  warnings: string[];
}

/** Sends request `i`, after what the schedule puts before it, with its signal, and tallies what came back. */
function sender({ target, schedule, tally, shutdown }: Run, random: () => number): (i: number) => Promise<void> {
  return async (i) => {
    schedule.before(i);
    const { config, method, path, body } = requestFor(i, random);
    let abortTimer: NodeJS.Timeout | undefined;
    if (random() < ABORT_RATE) {
      const own = new AbortController();
      config.signal = own.signal;
      abortTimer = setTimeout(() => own.abort(), Math.floor(random() * 20));
      schedule.injected.aborts += 1;
    } else if (random() < SHARED_SIGNAL_RATE) {
      config.signal = shutdown.signal;
    }
    const started = performance.now();
    target.tracker.pending.set(i, started);
    try {
      const response = await target.api.request(config);
      const echo = response.data as { method?: string; path?: string; body?: unknown };
      const same =
        echo.method === method &&
        echo.path === path &&
        (body === undefined || JSON.stringify(echo.body) === JSON.stringify(body));
      if (same) tally.succeeded += 1;
      else tally.fail('ECHO_MISMATCH', `${method} ${path}: echoed ${JSON.stringify(echo).slice(0, 200)}`);
    } catch (error) {
      tally.fail(codeOf(error), error instanceof Error ? error.message : String(error));
    } finally {
      clearTimeout(abortTimer);
      target.tracker.settled(i);
      tally.settled(performance.now() - started);
    }
  };
}

/** A request pending longer than STUCK_MS never settled: `tripped` resolves, and the run stops there and reports. */
function startWatchdog(pending: ReadonlyMap<number, number>): {
  tripped: Promise<'stuck'>;
  stuck: () => number;
  stop: () => void;
} {
  let stuck = 0;
  let trip: () => void = () => {};
  const tripped = new Promise<'stuck'>((resolve) => (trip = () => resolve('stuck')));
  const timer = setInterval(() => {
    const now = performance.now();
    stuck = 0;
    for (const started of pending.values()) if (now - started > STUCK_MS) stuck += 1;
    if (stuck > 0) trip();
  }, 1000);
  timer.unref();
  return { tripped, stuck: () => stuck, stop: () => clearInterval(timer) };
}

// ---------------------------------------------------------------------------------------------------- phases

/**
 * Opens the connection pool with one burst outside the plugin. With client and server on one event loop, the server
 * accepts new connections slowly (seconds) while established keep-alive connections keep the loop busy: a pool
 * opened by the first wave of the run would leave some of its requests waiting for seconds.
 */
async function openPool(url: string, concurrency: number): Promise<void> {
  await Promise.all(
    Array.from({ length: concurrency }, () => axios.get(`${url}/warm-up`, { validateStatus: () => true })),
  );
}

/** Where the run starts from, once the pool is open: the warm-up's calls are not part of the run. */
interface Baseline {
  warmupCalls: Pick<EmulatorCounters, 'dataCalls' | 'unauthorized'>;
  resources: Record<string, number>;
  heapUsed: number;
}

async function baselineOf({ emulator }: Target): Promise<Baseline> {
  const warmupCalls = { dataCalls: emulator.counters.dataCalls, unauthorized: emulator.counters.unauthorized };
  return { warmupCalls, resources: resources(), heapUsed: await settledHeap() };
}

interface Checkpoint {
  requests: number;
  heapUsed: number;
  seconds: number;
  failed: number;
  tokenCalls: number;
}

/** What the requests did to the process, checkpoint by checkpoint. */
interface Measured {
  checkpoints: Checkpoint[];
  outcome: 'done' | 'stuck';
  /** Requests that never settled: those older than STUCK_MS when the watchdog tripped, else those still pending. */
  unsettled: number;
  wallSeconds: number;
  /** Time spent sending, without the checkpoints' GCs. */
  busyMs: number;
  resourcesAtWarmup: Record<string, number>;
  listenersAtWarmup: number;
}

/** Sends every request, in CHECKPOINTS ranges; after each, the heap once the pool is idle, and a progress line. */
async function measure(run: Run, send: (i: number) => Promise<void>): Promise<Measured> {
  const { options, target, tally, schedule, shutdown } = run;
  const watchdog = startWatchdog(target.tracker.pending);
  const checkpoints: Checkpoint[] = [];
  let resourcesAtWarmup: Record<string, number> = {};
  let listenersAtWarmup = 0;
  let outcome: 'done' | 'stuck' = 'done';
  const t0 = performance.now();
  let busyMs = 0;

  for (let c = 1; c <= CHECKPOINTS; c += 1) {
    const from = Math.floor(((c - 1) * options.requests) / CHECKPOINTS);
    const to = Math.floor((c * options.requests) / CHECKPOINTS);
    const phaseStart = performance.now();
    const range = pool(to - from, options.concurrency, (k) => send(from + k));
    outcome = await Promise.race([range.then(() => 'done' as const), watchdog.tripped]);
    busyMs += performance.now() - phaseStart;
    if (outcome === 'stuck') break;
    const heapUsed = await settledHeap();
    const { tokenCalls } = target.emulator.counters;
    checkpoints.push({
      requests: to,
      heapUsed,
      seconds: (performance.now() - t0) / 1000,
      failed: tally.failed,
      tokenCalls,
    });
    if (c === 1) {
      resourcesAtWarmup = resources();
      listenersAtWarmup = getEventListeners(shutdown.signal, 'abort').length;
    }
    const perSecond = Math.round(tally.completed / (busyMs / 1000));
    process.stdout.write(
      `  ${String(Math.round((to / options.requests) * 100)).padStart(3)}%  ${String(to).padStart(7)} requests  ` +
        `${String(perSecond).padStart(5)} req/s  failed ${String(tally.failed).padStart(5)}  ` +
        `expiries ${String(schedule.expiriesDone).padStart(4)}  token calls ${String(tokenCalls).padStart(4)}  ` +
        `heap ${mb(heapUsed).toFixed(1)} MB\n`,
    );
  }
  const wallSeconds = (performance.now() - t0) / 1000;
  watchdog.stop();
  const unsettled = outcome === 'stuck' ? watchdog.stuck() : target.tracker.pending.size;
  return { checkpoints, outcome, unsettled, wallSeconds, busyMs, resourcesAtWarmup, listenersAtWarmup };
}

/**
 * Token calls the run justifies: one login at start, one renewal per expiry the emulator saw (a distinct access token
 * presented after it expired), one more call per refused refresh token (a revoke: the token call is refused, then a
 * login), and one more per injected login or token fault (each faulted call is followed by a retry or, once a
 * renewal failed, by a new renewal). Tokens minted (logins + refreshes) may not exceed one login plus one per expiry:
 * a token minted beyond that was wasted.
 */
function tokenCalls(counters: EmulatorCounters, injected: Injected) {
  const justified = 1 + counters.expiries + injected.revokes + injected.login + injected.token;
  const minted = counters.logins + counters.refreshes;
  const perExpiry = (calls: number) => (counters.expiries ? round(calls / counters.expiries, 3) : null);
  return {
    total: counters.tokenCalls,
    justified,
    minted,
    perExpiry: perExpiry(counters.tokenCalls - 1),
    perExpiryNetOfFaults: perExpiry(counters.tokenCalls - 1 - injected.token - injected.login - injected.revokes),
  };
}

/**
 * Failures injected faults do not explain: a data 503 fails its request (at most one each); a renewal meant to fail
 * fails its waiters with TOKEN_SERVICE_UNAVAILABLE (timeout, network, 5xx after retries) or TOKEN_RESPONSE_INVALID
 * (an answer cut off mid-body); a request aborted by its own controller fails with ERR_CANCELED. Anything else (401s,
 * LOGIN_REJECTED, ECHO_MISMATCH, socket errors on data calls…) is unexplained.
 */
function unexplainedFailures(failures: Record<string, number>, injected: Injected): Record<string, number> {
  const unexplained: Record<string, number> = {};
  for (const [code, n] of Object.entries(failures)) {
    const allowed =
      code === 'HTTP_503'
        ? injected.data
        : code === 'ERR_CANCELED'
          ? injected.aborts
          : code === 'TOKEN_SERVICE_UNAVAILABLE' || code === 'TOKEN_RESPONSE_INVALID'
            ? injected.fatal > 0
              ? n
              : 0
            : 0;
    if (n > allowed) unexplained[code] = n - allowed;
  }
  return unexplained;
}

/** The run's figures and checks, as the report prints them and as JSON. */
function summarise(run: Run, baseline: Baseline, measured: Measured) {
  const { options, target, tally, schedule } = run;
  const { checkpoints, outcome, unsettled } = measured;
  const resourcesAtEnd = resources();
  const listenersAtEnd = getEventListeners(run.shutdown.signal, 'abort').length;
  const counters = { ...target.emulator.counters };
  // The pool's warm-up burst is not part of the run.
  counters.dataCalls -= baseline.warmupCalls.dataCalls;
  counters.unauthorized -= baseline.warmupCalls.unauthorized;
  const { injected } = schedule;

  const warm = checkpoints[0];
  const last = checkpoints[checkpoints.length - 1];
  const heapGrowth = warm && last && outcome === 'done' ? last.heapUsed - warm.heapUsed : NaN;
  const measuredRequests = warm && last ? last.requests - warm.requests : 0;
  const heapSlope = slope(checkpoints.map(({ requests, heapUsed }) => [requests, heapUsed])); // bytes per request

  const durations = Array.from(tally.durations.subarray(0, tally.completed));
  const tokens = tokenCalls(counters, injected);
  const unexplained = unexplainedFailures(tally.failures, injected);
  const checks = {
    heap: Number.isFinite(heapGrowth) && mb(heapGrowth) <= options.maxHeapGrowthMb,
    settled: unsettled === 0 && outcome === 'done',
    expiries: schedule.expiriesDone === options.expiries,
    tokens: tokens.total <= tokens.justified && tokens.minted <= 1 + counters.expiries,
    failures: Object.keys(unexplained).length === 0,
    listeners: listenersAtEnd === 0,
  };

  return {
    seed: options.seed,
    requests: options.requests,
    completed: tally.completed,
    concurrency: options.concurrency,
    wallSeconds: round(measured.wallSeconds, 2),
    requestsPerSecond: Math.round(tally.completed / (measured.busyMs / 1000)),
    slowRequests: durations.filter((ms) => ms > 1000).length,
    latencyMs: {
      p50: round(percentile(durations, 50), 1),
      p99: round(percentile(durations, 99), 1),
      max: round(percentile(durations, 100), 1),
    },
    succeeded: tally.succeeded,
    failed: tally.failed,
    failuresByCode: tally.failures,
    unexplainedFailures: unexplained,
    unsettled,
    expiries: {
      planned: options.expiries,
      done: schedule.expiriesDone,
      seenByEmulator: counters.expiries,
      overlap: options.overlap,
      deferredRequests: schedule.deferredRequests,
    },
    injected,
    emulator: counters,
    plugin: target.auth.stats(),
    pluginFailureEvents: target.authFailures,
    tokenCalls: tokens,
    faults: { injected: injected.data + injected.token + injected.login, served: counters.faults },
    heap: {
      startMB: round(mb(baseline.heapUsed), 2),
      warmupMB: warm ? round(mb(warm.heapUsed), 2) : null,
      endMB: last ? round(mb(last.heapUsed), 2) : null,
      growthMB: round(mb(heapGrowth), 3),
      growthKBPer1kRequests: measuredRequests ? round((heapGrowth / 1024 / measuredRequests) * 1000, 3) : null,
      slopeKBPer1kRequests: round((heapSlope / 1024) * 1000, 3),
      limitMB: options.maxHeapGrowthMb,
      series: checkpoints.map(({ requests, heapUsed }) => [requests, round(mb(heapUsed), 2)]),
    },
    resources: { start: baseline.resources, warmup: measured.resourcesAtWarmup, end: resourcesAtEnd },
    sharedSignalListeners: { warmup: measured.listenersAtWarmup, end: listenersAtEnd },
    warnings: run.warnings,
    checks,
    passed: Object.values(checks).every(Boolean),
  };
}

type Result = ReturnType<typeof summarise>;

/** The table, the first message of each failure code, the first warnings, and the result as one line of JSON. */
function printReport(result: Result, samples: Record<string, string>): void {
  const { expiries, injected, emulator: counters, plugin: stats, tokenCalls: tokens, heap } = result;
  const fmt = (n: number) => n.toLocaleString('en-US');
  const byCount = (counts: Record<string, number>) => Object.entries(counts).sort(([, a], [, b]) => b - a);
  const unexplained = Object.entries(result.unexplainedFailures);
  const rows: Array<[string, string]> = [
    ['requests (completed / planned)', `${fmt(result.completed)} / ${fmt(result.requests)}`],
    ['concurrency, seed', `${result.concurrency}, ${result.seed}`],
    ['wall time', `${result.wallSeconds.toFixed(1)} s`],
    ['requests/s (excl. GC checkpoints)', fmt(result.requestsPerSecond)],
    ['latency p50 / p99 / max', `${result.latencyMs.p50} / ${result.latencyMs.p99} / ${result.latencyMs.max} ms`],
    ['requests slower than 1 s', fmt(result.slowRequests)],
    ['succeeded', fmt(result.succeeded)],
    ['failed', fmt(result.failed)],
    ...byCount(result.failuresByCode).map(([code, n]): [string, string] => [`  ${code}`, fmt(n)]),
    [
      'unexplained failures',
      unexplained.length === 0 ? '0' : unexplained.map(([code, n]) => `${code} ${n}`).join(', '),
    ],
    ['never settled', String(result.unsettled)],
    ['expiries (planned / done / seen by emulator)', `${expiries.planned} / ${expiries.done} / ${counters.expiries}`],
    [
      expiries.overlap ? 'expiries: --overlap (never deferred)' : 'requests issued while an expiry was deferred',
      expiries.overlap ? 'yes' : fmt(expiries.deferredRequests),
    ],
    ['expiries by token fault', ''],
    ...byCount(injected.episodes).map(([name, n]): [string, string] => [`  ${name}`, String(n)]),
    ['faulted calls injected (token / login / data)', `${injected.token} / ${injected.login} / ${injected.data}`],
    ['faults served / injected', `${result.faults.served} / ${result.faults.injected}`],
    ['renewals meant to fail, revokes, aborts', `${injected.fatal}, ${injected.revokes}, ${injected.aborts}`],
    ['token calls (emulator)', fmt(counters.tokenCalls)],
    ['  logins / refreshes / refused', `${counters.logins} / ${counters.refreshes} / ${counters.rejected}`],
    [
      'token calls per expiry (all / net of faults)',
      `${tokens.perExpiry?.toFixed(3) ?? '-'} / ${tokens.perExpiryNetOfFaults?.toFixed(3) ?? '-'}`,
    ],
    ['token calls justified (rule)', `${fmt(tokens.justified)} (used ${fmt(tokens.total)})`],
    ['tokens minted / allowed', `${tokens.minted} / ${1 + counters.expiries}`],
    ['data calls, 401s served', `${fmt(counters.dataCalls)}, ${fmt(counters.unauthorized)}`],
    [
      'plugin: logins / refreshes / replays / failures',
      `${stats.logins} / ${stats.refreshes} / ${fmt(stats.replays)} / ${stats.failures}`,
    ],
    ['heap: start / warm-up / end', `${heap.startMB} / ${heap.warmupMB} / ${heap.endMB} MB`],
    ['heap growth after warm-up', `${heap.growthMB} MB (limit ${heap.limitMB} MB)`],
    ['heap growth per 1,000 requests', `${heap.growthKBPer1kRequests} KB (slope ${heap.slopeKBPer1kRequests} KB)`],
    ['active resources after warm-up', describeResources(result.resources.warmup)],
    ['active resources at end', describeResources(result.resources.end)],
    [
      'shared-signal listeners: warm-up → end',
      `${result.sharedSignalListeners.warmup} → ${result.sharedSignalListeners.end}`,
    ],
    ['process warnings', result.warnings.length === 0 ? 'none' : String(result.warnings.length)],
    ...Object.entries(result.checks).map(([name, ok]): [string, string] => [`check: ${name}`, ok ? 'pass' : 'FAIL']),
  ];
  const width = Math.max(...rows.map(([name]) => name.length));
  const valueWidth = Math.max(...rows.map(([, value]) => value.length));
  const line = `+${'-'.repeat(width + 2)}+${'-'.repeat(valueWidth + 2)}+`;
  process.stdout.write(
    `\n${line}\n${rows.map(([name, value]) => `| ${name.padEnd(width)} | ${value.padStart(valueWidth)} |`).join('\n')}\n${line}\n`,
  );
  for (const [code, message] of Object.entries(samples)) process.stdout.write(`  ${code}: ${message}\n`);
  for (const warning of result.warnings.slice(0, 5)) process.stdout.write(`  warning: ${warning}\n`);
  if (result.failuresByCode.HTTP_401) {
    process.stdout.write(
      '  HTTP_401 reached callers: the plugin passed 401s on instead of renewing. Seen with --overlap, when an expiry\n' +
        '  lands on a replay: the refused replay marks its endpoint as one a renewal does not cure for\n' +
        '  accessTokenLifetimeMs (UncuredEndpoints, lib/account/guards/refusals.ts), and the 401s of later, genuine expiries on that\n' +
        '  endpoint then go to the caller without a renewal, even once the token was replaced.\n',
    );
  }
  process.stdout.write(`${JSON.stringify(result)}\n`);
}

async function main(): Promise<number> {
  const options = readOptions();
  const random = randomStreams(options.seed);
  const target = await startTarget(random);
  const run: Run = {
    options,
    target,
    schedule: new FaultSchedule(target, options, random),
    tally: new Tally(options.requests),
    shutdown: new AbortController(),
    warnings: collectWarnings(),
  };
  // Every request adds its listeners to the shared signal and must remove them; up to two per request in flight
  // (axios' and the plugin's while it waits).
  setMaxListeners(options.concurrency * 2 + 10, run.shutdown.signal);
  const every = Number.isFinite(run.schedule.every) ? Math.round(run.schedule.every) : '-';
  process.stdout.write(
    `Soak: ${options.requests} requests, ${options.concurrency} in flight, ${options.expiries} expiries (one every ${every} requests), seed ${options.seed}, emulator on ${target.emulator.url}\n`,
  );

  await openPool(target.emulator.url, options.concurrency);
  const baseline = await baselineOf(target);
  const measured = await measure(run, sender(run, random.traffic));
  const result = summarise(run, baseline, measured);
  printReport(result, run.tally.samples);

  target.auth.eject();
  run.shutdown.abort();
  await target.emulator.close();
  return result.passed ? 0 : 1;
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(2);
  },
);
