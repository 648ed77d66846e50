// `npm run soak`: a long run of the plugin against the bundled emulator, not part of `npm test`.
//
// Drives --requests (100,000) requests with --concurrency (150) in flight through one axios instance, across
// --expiries (200) expiries spread evenly over the run, with random faults drawn from a PRNG seeded by --seed, so
// the fault schedule of a run is repeatable. It reports requests/s, token calls, failures by code and heap growth,
// and exits 1 when a check fails:
//   heap      heap used after all requests settled minus heap used after the warm-up (the first 10%), both after
//             two forced GCs on an idle pool, exceeds --max-heap-growth-mb (10 MB);
//   settled   a request is still pending STUCK_MS after it started (a watchdog stops the run);
//   expiries  fewer expiries than --expiries happened (an expiry waits for requests with an older token: OVERLAP);
//   tokens    more token calls than the faults justify (rule in `tokenRule` below), or more tokens minted than
//             one login plus one per expiry;
//   failures  a request failed in a way no injected fault explains (see `explainFailures` below);
//   listeners the long-lived AbortSignal shared by half of the requests still has listeners once all settled.
//
//   npm run soak                 100,000 requests, 200 expiries (~1.5 min on 2 cores)
//   npm run soak -- --quick      10,000 requests, 20 expiries
//   npm run soak -- --requests 50000 --expiries 100 --concurrency 200 --seed 7
//   npm run soak -- --overlap    expiries strictly on schedule, even over requests still in flight (see OVERLAP)
//   --max-heap-growth-mb 10      the heap check's limit
import { getEventListeners, setMaxListeners } from 'node:events';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import v8 from 'node:v8';
import vm from 'node:vm';
import axios, { isAxiosError } from 'axios';
import type { AxiosRequestConfig, Method } from 'axios';
import { attachTokenAuth, isTokenAuthError } from '../lib/index.js';
import { startEmulator } from '../lib/emulator/index.js';
import type { EmulatorFault } from '../lib/emulator/index.js';

// ---------------------------------------------------------------------------------------------------- options

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

function count(text: string, option: string, min = 1): number {
  const value = Number(text.replace(/_/g, ''));
  if (!Number.isInteger(value) || value < min)
    throw new Error(`--${option} must be a whole number of ${min} or more, got "${text}".`);
  return value;
}

const REQUESTS = count(values.requests ?? (values.quick ? '10000' : '100000'), 'requests', 10);
const EXPIRIES = count(values.expiries ?? (values.quick ? '20' : '200'), 'expiries', 0);
const CONCURRENCY = count(values.concurrency, 'concurrency');
const SEED = count(values.seed, 'seed', 0);
const MAX_HEAP_GROWTH_MB = Number(values['max-heap-growth-mb']);
/**
 * Without --overlap, an expiry that falls due waits (a few requests) until the plugin holds a token minted since the
 * previous expiry and no request is in flight with an older token or as a replay: a real token lives 45 minutes, so
 * no request (with its replay) outlives a whole token lifetime, and each expiry kills one token. With --overlap, expiries fire
 * strictly on schedule even then, which compresses time beyond any real lifetime: a slow request's replay can land
 * after the next expiry (see the HTTP_401 note in the report).
 */
const OVERLAP = values.overlap === true;
if (!(MAX_HEAP_GROWTH_MB > 0)) throw new Error('--max-heap-growth-mb must be a number above 0.');

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
const faultRandom = prng(SEED);
const expiryRandom = prng(SEED ^ 0xc2b2ae35);
const trafficRandom = prng(SEED ^ 0x9e3779b9);
const latencyRandom = prng(SEED ^ 0x85ebca6b);
const pick = <T>(random: () => number, items: readonly T[]): T => items[Math.floor(random() * items.length)]!;

// ---------------------------------------------------------------------------------------------------- helpers

const gc: NodeJS.GCFunction =
  typeof globalThis.gc === 'function'
    ? globalThis.gc
    : (() => {
        // Run without --expose-gc (e.g. `npx tsx scripts/soak.ts`): expose it now.
        v8.setFlagsFromString('--expose-gc');
        return vm.runInNewContext('gc') as NodeJS.GCFunction;
      })();

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

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

const mb = (bytes: number) => bytes / 1024 / 1024;

function percentile(sorted: Float64Array, p: number): number {
  return sorted.length === 0 ? 0 : sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

/** Least-squares slope of y over x. */
function slope(points: Array<[number, number]>): number {
  const n = points.length;
  if (n < 2) return 0;
  const mx = points.reduce((sum, [x]) => sum + x, 0) / n;
  const my = points.reduce((sum, [, y]) => sum + y, 0) / n;
  const sxy = points.reduce((sum, [x, y]) => sum + (x - mx) * (y - my), 0);
  const sxx = points.reduce((sum, [x]) => sum + (x - mx) ** 2, 0);
  return sxx === 0 ? 0 : sxy / sxx;
}

/** A failure's code: the TokenAuthError code, HTTP_<status> for an answer, else axios' or Node's error code. */
function codeOf(error: unknown): string {
  if (isTokenAuthError(error)) return error.code;
  if (isAxiosError(error)) return error.response ? `HTTP_${error.response.status}` : (error.code ?? 'AXIOS_ERROR');
  return error instanceof Error ? error.name : 'NON_ERROR';
}

// ---------------------------------------------------------------------------------------------------- the run

interface Tally {
  succeeded: number;
  failures: Record<string, number>;
  /** First message seen per failure code, for the report. */
  samples: Record<string, string>;
}

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

async function main(): Promise<number> {
  const users = { soak: 'soak-password' };
  const emulator = await startEmulator({
    users,
    log: false,
    // Small random data latency; token calls a little slower, as a real service's are.
    latency: { data: () => Math.floor(latencyRandom() * 4), token: 3, login: 5 },
  });
  const [username, password] = Object.entries(users)[0]!;
  const api = axios.create({ baseURL: emulator.url });
  // Which token generation each request in flight last left with, and which are replays. Registered before the
  // plugin, so it runs after the plugin's request interceptor (axios runs request interceptors last-registered
  // first), on replays too.
  let generation = 0;
  /** Requests not yet settled, with when they started. */
  const pending = new Map<number, number>();
  const sentWith = new Map<number, number>();
  const replaying = new Set<number>();
  api.interceptors.request.use((config) => {
    const i = Number(config.headers.get('X-Soak-Request'));
    if (!pending.has(i)) return config;
    if (sentWith.has(i)) replaying.add(i);
    sentWith.set(i, generation);
    return config;
  });
  const auth = attachTokenAuth(api, {
    credentials: { username, password },
    // 200 expiries within minutes is far beyond any hourly budget (default 10 logins, 30 token calls an hour):
    // the budget would refuse renewals after the first few expiries. The soak checks the count itself instead.
    tokenBudget: false,
    tokenRetryDelayMs: 10,
    tokenTimeoutMs: TOKEN_TIMEOUT_MS,
  });
  const authFailures: Record<string, number> = {};
  auth.on('failure', ({ operation, code }) => {
    const key = `${operation}:${code}`;
    authFailures[key] = (authFailures[key] ?? 0) + 1;
  });
  const warnings: string[] = [];
  process.on('warning', (warning) => warnings.push(`${warning.name}: ${warning.message}`));

  // A long-lived signal, as an application's shutdown signal passed to many requests. Every request adds its
  // listeners and must remove them; up to two per request in flight (axios' and the plugin's while it waits).
  const shutdown = new AbortController();
  setMaxListeners(CONCURRENCY * 2 + 10, shutdown.signal);

  // Evenly spread over the first 98% of the run, so that deferred expiries still fit before the end.
  const every = EXPIRIES > 0 ? (REQUESTS * 0.98) / EXPIRIES : Infinity;
  const plannedAt = Array.from({ length: EXPIRIES }, (_, k) => Math.floor(every / 2 + k * every));
  const injected: Injected = { data: 0, token: 0, login: 0, episodes: {}, fatal: 0, revokes: 0, aborts: 0 };
  const tally: Tally = { succeeded: 0, failures: {}, samples: {} };
  const durations = new Float64Array(REQUESTS);
  let expiriesDone = 0;
  let completed = 0;
  /** Requests issued while an expiry was due but waited for in-flight requests with an older token. */
  let deferredRequests = 0;
  let generationAtExpiry = -1;
  for (const event of ['login', 'refresh'] as const) auth.on(event, () => (generation += 1));
  // A replay is sent once, with a token minted moments before: an expiry landing on it is one no real token
  // lifetime produces (the plugin rightly does not renew twice for one request).
  const staleInFlight = () => {
    if (replaying.size > 0) return true;
    for (const sent of sentWith.values()) if (sent < generation) return true;
    return false;
  };

  const episode = (name: string, route: 'token' | 'login', faults: EmulatorFault[], fatal: boolean) => {
    for (const fault of faults) emulator.inject(route, fault);
    injected[route] += faults.length;
    injected.episodes[name] = (injected.episodes[name] ?? 0) + 1;
    if (fatal) injected.fatal += 1;
  };
  const flaky = (): EmulatorFault => pick(expiryRandom, [{ status: 503 }, 'drop'] as const);

  /** What happens before request `i` leaves: an expiry with its random token fault, a random data fault. */
  const schedule = (i: number) => {
    const due = expiriesDone < EXPIRIES && i >= plannedAt[expiriesDone]!;
    if (due && !OVERLAP && (generation === generationAtExpiry || staleInFlight())) deferredRequests += 1;
    else if (due) {
      generationAtExpiry = generation;
      // Token faults wait in the emulator's queue for the next token call, which this expiry causes.
      const roll = expiryRandom();
      if (roll < 0.5) {
        injected.episodes.none = (injected.episodes.none ?? 0) + 1;
      } else if (roll < 0.7) {
        // 1 to 3 failed attempts: within tokenRetries (3), so the renewal succeeds and no request fails.
        episode('token-retried', 'token', Array.from({ length: 1 + Math.floor(expiryRandom() * 3) }, flaky), false);
      } else if (roll < 0.76) {
        episode('token-exhausted', 'token', Array.from({ length: 4 }, flaky), true);
      } else if (roll < 0.82) {
        episode('token-hang', 'token', ['hang'], true);
      } else if (roll < 0.88) {
        episode('token-reset', 'token', ['reset'], true);
      } else {
        // The refresh token is refused (401), so the plugin logs in; the login itself may be flaky.
        emulator.revokeRefreshTokens();
        injected.revokes += 1;
        if (roll < 0.97)
          episode(
            'revoke+login-retried',
            'login',
            Array.from({ length: Math.floor(expiryRandom() * 3) }, flaky),
            false,
          );
        else episode('revoke+login-exhausted', 'login', Array.from({ length: 4 }, flaky), true);
      }
      emulator.expireAccessTokens();
      expiriesDone += 1;
    }
    // Not in the last stretch, so that every fault is served before the run ends.
    if (i < REQUESTS - 1000 && faultRandom() < DATA_FAULT_RATE) {
      const times = 1 + Math.floor(faultRandom() * 3);
      emulator.inject('data', { status: 503 }, times);
      injected.data += times;
    }
  };

  const paths = [
    '/allocation/api/v1/tracking/order-list',
    '/api/v1/orders',
    '/api/v1/stock',
    '/api/v1/customers/42/invoices',
  ];
  /** A GET, POST, PUT or DELETE with a JSON body for the writes; what the emulator should echo. */
  const request = (i: number): { config: AxiosRequestConfig; method: Method; path: string; body?: unknown } => {
    const roll = trafficRandom();
    const base = pick(trafficRandom, paths);
    if (roll < 0.6) {
      const path = `${base}?page=${Math.floor(trafficRandom() * 50)}&i=${i}`;
      return { config: { method: 'GET', url: path, headers: { 'X-Soak-Request': i } }, method: 'GET', path };
    }
    if (roll < 0.95) {
      const method: Method = roll < 0.85 ? 'POST' : 'PUT';
      const items = Array.from({ length: 1 + Math.floor(trafficRandom() * 5) }, (_, n) => ({
        sku: `SKU-${i}-${n}`,
        qty: n + 1,
        note: 'ü€ "quoted"',
      }));
      const body = { request: i, items, ...(trafficRandom() < 0.02 ? { padding: 'x'.repeat(8192) } : {}) };
      return { config: { method, url: base, data: body, headers: { 'X-Soak-Request': i } }, method, path: base, body };
    }
    const path = `${base}/${i}`;
    return { config: { method: 'DELETE', url: path, headers: { 'X-Soak-Request': i } }, method: 'DELETE', path };
  };

  const fail = (code: string, message: string) => {
    tally.failures[code] = (tally.failures[code] ?? 0) + 1;
    tally.samples[code] ??= message.slice(0, 240);
  };

  const one = async (i: number): Promise<void> => {
    schedule(i);
    const { config, method, path, body } = request(i);
    let own: AbortController | undefined;
    let abortTimer: NodeJS.Timeout | undefined;
    if (trafficRandom() < ABORT_RATE) {
      own = new AbortController();
      config.signal = own.signal;
      const controller = own;
      abortTimer = setTimeout(() => controller.abort(), Math.floor(trafficRandom() * 20));
      injected.aborts += 1;
    } else if (trafficRandom() < SHARED_SIGNAL_RATE) {
      config.signal = shutdown.signal;
    }
    const started = performance.now();
    pending.set(i, started);
    try {
      const response = await api.request(config);
      const echo = response.data as { method?: string; path?: string; body?: unknown };
      const same =
        echo.method === method &&
        echo.path === path &&
        (body === undefined || JSON.stringify(echo.body) === JSON.stringify(body));
      if (same) tally.succeeded += 1;
      else fail('ECHO_MISMATCH', `${method} ${path}: echoed ${JSON.stringify(echo).slice(0, 200)}`);
    } catch (error) {
      fail(codeOf(error), error instanceof Error ? error.message : String(error));
    } finally {
      clearTimeout(abortTimer);
      pending.delete(i);
      sentWith.delete(i);
      replaying.delete(i);
      durations[completed] = performance.now() - started;
      completed += 1;
    }
  };

  // Watchdog: a request pending longer than STUCK_MS never settled; the run stops there and reports.
  let stuck = 0;
  let tripWatchdog: () => void = () => {};
  const tripped = new Promise<'stuck'>((resolve) => (tripWatchdog = () => resolve('stuck')));
  const watchdog = setInterval(() => {
    const now = performance.now();
    stuck = 0;
    for (const started of pending.values()) if (now - started > STUCK_MS) stuck += 1;
    if (stuck > 0) tripWatchdog();
  }, 1000);
  watchdog.unref();

  const runRange = async (from: number, to: number) => {
    let next = from;
    const worker = async () => {
      while (next < to) await one(next++);
    };
    await Promise.all(Array.from({ length: Math.min(CONCURRENCY, to - from) }, worker));
  };

  process.stdout.write(
    `Soak: ${REQUESTS} requests, ${CONCURRENCY} in flight, ${EXPIRIES} expiries (one every ${Number.isFinite(every) ? Math.round(every) : '-'} requests), seed ${SEED}, emulator on ${emulator.url}\n`,
  );
  // Open the connection pool first, with one burst outside the plugin. With client and server on one event loop,
  // the server accepts new connections slowly (seconds) while established keep-alive connections keep the loop
  // busy: a pool opened by the first wave of the run would leave some of its requests waiting for seconds.
  await Promise.all(
    Array.from({ length: CONCURRENCY }, () => axios.get(`${emulator.url}/warm-up`, { validateStatus: () => true })),
  );
  const warmupCalls = { dataCalls: emulator.counters.dataCalls, unauthorized: emulator.counters.unauthorized };
  const resourcesAtStart = resources();
  const heapAtStart = await settledHeap();
  const checkpoints: Array<{
    requests: number;
    heapUsed: number;
    seconds: number;
    failed: number;
    tokenCalls: number;
  }> = [];
  let resourcesAtWarmup: Record<string, number> = {};
  let listenersAtWarmup = 0;
  let outcome: 'done' | 'stuck' = 'done';
  const t0 = performance.now();
  let busyMs = 0;

  for (let c = 1; c <= CHECKPOINTS; c += 1) {
    const from = Math.floor(((c - 1) * REQUESTS) / CHECKPOINTS);
    const to = Math.floor((c * REQUESTS) / CHECKPOINTS);
    const phaseStart = performance.now();
    outcome = await Promise.race([runRange(from, to).then(() => 'done' as const), tripped]);
    busyMs += performance.now() - phaseStart;
    if (outcome === 'stuck') break;
    const heapUsed = await settledHeap();
    const failed = Object.values(tally.failures).reduce((sum, n) => sum + n, 0);
    checkpoints.push({
      requests: to,
      heapUsed,
      seconds: (performance.now() - t0) / 1000,
      failed,
      tokenCalls: emulator.counters.tokenCalls,
    });
    if (c === 1) {
      resourcesAtWarmup = resources();
      listenersAtWarmup = getEventListeners(shutdown.signal, 'abort').length;
    }
    process.stdout.write(
      `  ${String(Math.round((to / REQUESTS) * 100)).padStart(3)}%  ${String(to).padStart(7)} requests  ${Math.round(
        completed / (busyMs / 1000),
      )
        .toString()
        .padStart(
          5,
        )} req/s  failed ${String(failed).padStart(5)}  expiries ${String(expiriesDone).padStart(4)}  token calls ${String(emulator.counters.tokenCalls).padStart(4)}  heap ${mb(heapUsed).toFixed(1)} MB\n`,
    );
  }
  const wallSeconds = (performance.now() - t0) / 1000;
  clearInterval(watchdog);

  // ------------------------------------------------------------------------------------------------ figures
  // After a clean run nothing is pending; after the watchdog tripped, those older than STUCK_MS never settled.
  const unsettled = outcome === 'stuck' ? stuck : pending.size;
  const resourcesAtEnd = resources();
  const listenersAtEnd = getEventListeners(shutdown.signal, 'abort').length;
  const counters = { ...emulator.counters };
  // The pool's warm-up burst is not part of the run.
  counters.dataCalls -= warmupCalls.dataCalls;
  counters.unauthorized -= warmupCalls.unauthorized;
  const stats = auth.stats();
  const failed = Object.values(tally.failures).reduce((sum, n) => sum + n, 0);

  const warm = checkpoints[0];
  const last = checkpoints[checkpoints.length - 1];
  const heapGrowth = warm && last && outcome === 'done' ? last.heapUsed - warm.heapUsed : NaN;
  const measuredRequests = warm && last ? last.requests - warm.requests : 0;
  const heapSlope = slope(checkpoints.map(({ requests, heapUsed }) => [requests, heapUsed])); // bytes per request

  const sorted = durations.slice(0, completed).sort();
  const slowRequests = sorted.filter((ms) => ms > 1000).length;
  // The emulator counts the faults it served in recent versions; every injected fault should have been served.
  const faultsServed = (counters as Partial<Record<'faults', number>>).faults;
  const faultsInjected = injected.data + injected.token + injected.login;

  // Token calls the run justifies: one login at start, one renewal per expiry the emulator saw (a distinct
  // access token presented after it expired), one more call per refused refresh token (a revoke: the token call
  // is refused, then a login), and one more per injected login or token fault (each faulted call is followed by
  // a retry or, once a renewal failed, by a new renewal). Tokens minted (logins + refreshes) may not exceed one
  // login plus one per expiry: a token minted beyond that was wasted.
  const justified = 1 + counters.expiries + injected.revokes + injected.login + injected.token;
  const minted = counters.logins + counters.refreshes;
  const tokenRule = counters.tokenCalls <= justified && minted <= 1 + counters.expiries;

  // Failures injected faults explain: a data 503 fails its request (at most one each); a renewal meant to fail
  // fails its waiters with TOKEN_SERVICE_UNAVAILABLE (timeout, network, 5xx after retries) or
  // TOKEN_RESPONSE_INVALID (an answer cut off mid-body); a request aborted by its own controller fails with
  // ERR_CANCELED. Anything else (401s, LOGIN_REJECTED, ECHO_MISMATCH, socket errors on data calls…) is unexplained.
  const explainFailures = (): Record<string, number> => {
    const unexplained: Record<string, number> = {};
    for (const [code, n] of Object.entries(tally.failures)) {
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
  };
  const unexplained = explainFailures();
  const unexplainedCount = Object.values(unexplained).reduce((sum, n) => sum + n, 0);

  const checks = {
    heap: Number.isFinite(heapGrowth) && mb(heapGrowth) <= MAX_HEAP_GROWTH_MB,
    settled: unsettled === 0 && outcome === 'done',
    expiries: expiriesDone === EXPIRIES,
    tokens: tokenRule,
    failures: unexplainedCount === 0,
    listeners: listenersAtEnd === 0,
  };
  const passed = Object.values(checks).every(Boolean);

  const result = {
    seed: SEED,
    requests: REQUESTS,
    completed,
    concurrency: CONCURRENCY,
    wallSeconds: Number(wallSeconds.toFixed(2)),
    requestsPerSecond: Math.round(completed / (busyMs / 1000)),
    slowRequests,
    latencyMs: {
      p50: Number(percentile(sorted, 50).toFixed(1)),
      p99: Number(percentile(sorted, 99).toFixed(1)),
      max: Number(percentile(sorted, 100).toFixed(1)),
    },
    succeeded: tally.succeeded,
    failed,
    failuresByCode: tally.failures,
    unexplainedFailures: unexplained,
    unsettled,
    expiries: {
      planned: EXPIRIES,
      done: expiriesDone,
      seenByEmulator: counters.expiries,
      overlap: OVERLAP,
      deferredRequests,
    },
    injected,
    emulator: counters,
    plugin: stats,
    pluginFailureEvents: authFailures,
    tokenCalls: {
      total: counters.tokenCalls,
      justified,
      minted,
      perExpiry: counters.expiries ? Number(((counters.tokenCalls - 1) / counters.expiries).toFixed(3)) : null,
      perExpiryNetOfFaults: counters.expiries
        ? Number(
            (
              (counters.tokenCalls - 1 - injected.token - injected.login - injected.revokes) /
              counters.expiries
            ).toFixed(3),
          )
        : null,
    },
    faults: { injected: faultsInjected, served: faultsServed ?? null },
    heap: {
      startMB: Number(mb(heapAtStart).toFixed(2)),
      warmupMB: warm ? Number(mb(warm.heapUsed).toFixed(2)) : null,
      endMB: last ? Number(mb(last.heapUsed).toFixed(2)) : null,
      growthMB: Number(mb(heapGrowth).toFixed(3)),
      growthKBPer1kRequests: measuredRequests
        ? Number(((heapGrowth / 1024 / measuredRequests) * 1000).toFixed(3))
        : null,
      slopeKBPer1kRequests: Number(((heapSlope / 1024) * 1000).toFixed(3)),
      limitMB: MAX_HEAP_GROWTH_MB,
      series: checkpoints.map(({ requests, heapUsed }) => [requests, Number(mb(heapUsed).toFixed(2))]),
    },
    resources: { start: resourcesAtStart, warmup: resourcesAtWarmup, end: resourcesAtEnd },
    sharedSignalListeners: { warmup: listenersAtWarmup, end: listenersAtEnd },
    warnings,
    checks,
    passed,
  };

  // ------------------------------------------------------------------------------------------------ report
  const fmt = (n: number) => n.toLocaleString('en-US');
  const rows: Array<[string, string]> = [
    ['requests (completed / planned)', `${fmt(completed)} / ${fmt(REQUESTS)}`],
    ['concurrency, seed', `${CONCURRENCY}, ${SEED}`],
    ['wall time', `${wallSeconds.toFixed(1)} s`],
    ['requests/s (excl. GC checkpoints)', fmt(result.requestsPerSecond)],
    ['latency p50 / p99 / max', `${result.latencyMs.p50} / ${result.latencyMs.p99} / ${result.latencyMs.max} ms`],
    ['requests slower than 1 s', fmt(slowRequests)],
    ['succeeded', fmt(tally.succeeded)],
    ['failed', fmt(failed)],
    ...Object.entries(tally.failures)
      .sort(([, a], [, b]) => b - a)
      .map(([code, n]): [string, string] => [`  ${code}`, fmt(n)]),
    [
      'unexplained failures',
      unexplainedCount === 0
        ? '0'
        : Object.entries(unexplained)
            .map(([code, n]) => `${code} ${n}`)
            .join(', '),
    ],
    ['never settled', String(unsettled)],
    ['expiries (planned / done / seen by emulator)', `${EXPIRIES} / ${expiriesDone} / ${counters.expiries}`],
    [
      OVERLAP ? 'expiries: --overlap (never deferred)' : 'requests issued while an expiry was deferred',
      OVERLAP ? 'yes' : fmt(deferredRequests),
    ],
    ['expiries by token fault', ''],
    ...Object.entries(injected.episodes)
      .sort(([, a], [, b]) => b - a)
      .map(([name, n]): [string, string] => [`  ${name}`, String(n)]),
    ['faulted calls injected (token / login / data)', `${injected.token} / ${injected.login} / ${injected.data}`],
    ['faults served / injected', `${faultsServed ?? '?'} / ${faultsInjected}`],
    ['renewals meant to fail, revokes, aborts', `${injected.fatal}, ${injected.revokes}, ${injected.aborts}`],
    ['token calls (emulator)', fmt(counters.tokenCalls)],
    ['  logins / refreshes / refused', `${counters.logins} / ${counters.refreshes} / ${counters.rejected}`],
    [
      'token calls per expiry (all / net of faults)',
      `${result.tokenCalls.perExpiry?.toFixed(3) ?? '-'} / ${result.tokenCalls.perExpiryNetOfFaults?.toFixed(3) ?? '-'}`,
    ],
    ['token calls justified (rule)', `${fmt(justified)} (used ${fmt(counters.tokenCalls)})`],
    ['tokens minted / allowed', `${minted} / ${1 + counters.expiries}`],
    ['data calls, 401s served', `${fmt(counters.dataCalls)}, ${fmt(counters.unauthorized)}`],
    [
      'plugin: logins / refreshes / replays / failures',
      `${stats.logins} / ${stats.refreshes} / ${fmt(stats.replays)} / ${stats.failures}`,
    ],
    ['heap: start / warm-up / end', `${result.heap.startMB} / ${result.heap.warmupMB} / ${result.heap.endMB} MB`],
    ['heap growth after warm-up', `${result.heap.growthMB} MB (limit ${MAX_HEAP_GROWTH_MB} MB)`],
    [
      'heap growth per 1,000 requests',
      `${result.heap.growthKBPer1kRequests} KB (slope ${result.heap.slopeKBPer1kRequests} KB)`,
    ],
    ['active resources after warm-up', describeResources(resourcesAtWarmup)],
    ['active resources at end', describeResources(resourcesAtEnd)],
    ['shared-signal listeners: warm-up → end', `${listenersAtWarmup} → ${listenersAtEnd}`],
    ['process warnings', warnings.length === 0 ? 'none' : String(warnings.length)],
    ...Object.entries(checks).map(([name, ok]): [string, string] => [`check: ${name}`, ok ? 'pass' : 'FAIL']),
  ];
  const width = Math.max(...rows.map(([name]) => name.length));
  const valueWidth = Math.max(...rows.map(([, value]) => value.length));
  const line = `+${'-'.repeat(width + 2)}+${'-'.repeat(valueWidth + 2)}+`;
  process.stdout.write(
    `\n${line}\n${rows.map(([name, value]) => `| ${name.padEnd(width)} | ${value.padStart(valueWidth)} |`).join('\n')}\n${line}\n`,
  );
  for (const [code, message] of Object.entries(tally.samples)) process.stdout.write(`  ${code}: ${message}\n`);
  for (const warning of warnings.slice(0, 5)) process.stdout.write(`  warning: ${warning}\n`);
  if (tally.failures.HTTP_401) {
    process.stdout.write(
      '  HTTP_401 reached callers: the plugin passed 401s on instead of renewing. Seen with --overlap, when an expiry\n' +
        '  lands on a replay: the refused replay marks its endpoint "not cured by a renewal" for accessTokenLifetimeMs\n' +
        '  (lib/renewal.ts noteReplayRefused), and afterRejection then passes on the 401s of later, genuine expiries on\n' +
        '  that endpoint without renewing, even once the token was replaced.\n',
    );
  }
  process.stdout.write(`${JSON.stringify(result)}\n`);

  auth.eject();
  shutdown.abort();
  await emulator.close();
  return passed ? 0 : 1;
}

function describeResources(counts: Record<string, number>): string {
  const entries = Object.entries(counts).sort(([a], [b]) => a.localeCompare(b));
  return entries.length === 0 ? '-' : entries.map(([type, n]) => `${type} ${n}`).join(', ');
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(2);
  },
);
