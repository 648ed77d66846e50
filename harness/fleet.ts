/**
 * A fleet of real processes (fleet-worker.ts), each an axios instance with the plugin attached to one shared store,
 * driven from this process over IPC: the parent side of the multi-process tests, and of a benchmark. No jest here.
 *
 * @example
 * const fleet = await startFleet({ count: 4, emulatorUrl: emulator.url, store: { kind: 'file', path } });
 * try {
 *   const replies = await fleet.burst(100);
 *   console.log(sumBursts(replies));
 * } finally {
 *   await fleet.stop();
 * }
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import type { ChildProcess } from 'node:child_process';
import { resolve } from 'node:path';
import type { ClusterOptions, RedisOptions } from 'ioredis';
import type { RenewalReason, TokenAuthErrorCode, TokenAuthStats, TokenAuthWarningCode } from '../lib/index.js';
import { E2E_PASSWORD } from './account.js';
import { bundleWorker } from './bundle-worker.js';
import type { RedisClientChoice } from './redis-clients.js';

// ---------------------------------------------------------------------------------------------------------------
// What travels between parent and worker
// ---------------------------------------------------------------------------------------------------------------

/**
 * ioredis options for a worker's client that survive the trip to it as JSON (no functions): the ones that decide how
 * a store call fares while Redis is down or failing over.
 */
export interface RedisClientSettings extends Pick<
  RedisOptions,
  | 'maxRetriesPerRequest'
  | 'enableOfflineQueue'
  | 'commandTimeout'
  | 'connectTimeout'
  | 'autoResendUnfulfilledCommands'
  | 'enableReadyCheck'
> {
  /**
   * The longest wait between reconnects: a `retryStrategy` of `times * 50` ms up to this, ioredis' own with another
   * cap than its 2 s.
   * @default 2_000, ioredis' own strategy
   */
  maxReconnectDelayMs?: number;
}

/** ioredis `Cluster` options, as JSON; `redisOptions` are those of its connection to each node. */
export interface RedisClusterSettings extends Pick<
  ClusterOptions,
  | 'enableOfflineQueue'
  | 'maxRedirections'
  | 'retryDelayOnFailover'
  | 'retryDelayOnClusterDown'
  | 'retryDelayOnTryAgain'
  | 'retryDelayOnMoved'
  | 'slotsRefreshTimeout'
  | 'slotsRefreshInterval'
> {
  redisOptions?: Omit<RedisClientSettings, 'maxReconnectDelayMs' | 'enableOfflineQueue'>;
}

/** The shared store every worker of a fleet opens. */
export type FleetStoreConfig =
  | {
      kind: 'file';
      /** The token file; every worker opens the same one. */
      path: string;
      /** FileTokenStore's `watch`. @default true */
      watch?: boolean;
    }
  | {
      kind: 'redis';
      /** e.g. `redis://127.0.0.1:6379`. */
      url: string;
      /** RedisTokenStore's `prefix`: the account's keys. */
      prefix: string;
      /** Give the store a second connection, `redis.duplicate()`, for pub/sub. */
      pubsub: boolean;
      /** Over the worker's own: `lazyConnect` and `maxRetriesPerRequest: 1` (a store failure, not a hidden delay). */
      client?: RedisClientSettings;
      /** The client library and protocol the worker opens; `client` applies to ioredis only. @default ioredis 5 */
      driver?: RedisClientChoice;
    }
  | {
      kind: 'redis-cluster';
      /** Startup nodes of `new Redis.Cluster(nodes)`. */
      nodes: ReadonlyArray<{ host: string; port: number }>;
      /** RedisTokenStore's `prefix`: the account's keys, in one slot. */
      prefix: string;
      /** Give the store a second connection, `cluster.duplicate()`, for pub/sub. */
      pubsub: boolean;
      /** @default ioredis' own (the worker adds only `lazyConnect`) */
      client?: RedisClusterSettings;
      /**
       * The client library and protocol the worker opens (node-redis' `createCluster()` is its own subscriber);
       * `client` applies to ioredis only. @default ioredis 5
       */
      driver?: RedisClientChoice;
    }
  | {
      kind: 'postgres';
      /** e.g. `postgres://postgres@127.0.0.1:5432/postgres`, or PgBouncer's. */
      url: string;
      /** PostgresTokenStore's `key`: the account's row. */
      key: string;
      /** The pool's `max`: every holder of the worker shares the pool and the store. @default 5 */
      poolMax?: number;
      /** PostgresTokenStore's `news`. @default 'listen' */
      news?: 'listen' | 'poll';
      /** PostgresTokenStore's `newsPollMs`. @default the store's */
      newsPollMs?: number;
    }
  | {
      kind: 'redis-sentinel';
      /** The sentinels, and the name of the master they monitor: `new Redis({ sentinels, name })`. */
      sentinels: ReadonlyArray<{ host: string; port: number }>;
      name: string;
      /** RedisTokenStore's `prefix`: the account's keys. */
      prefix: string;
      /** Give the store a second connection (`redis.duplicate()`; node-redis' sentinel is its own) for pub/sub. */
      pubsub: boolean;
      /** ioredis options, as for `redis`, over the worker's `lazyConnect`. @default ioredis' own */
      client?: RedisClientSettings;
      /** The client library and protocol (node-redis 5 or 6: `createSentinel()`). @default ioredis 5 */
      driver?: RedisClientChoice;
    };

/** Who a worker logs in as. @default harness/account.ts' E2E_USER */
export interface FleetAccount {
  username: string;
  /** Masked in everything the worker reports. */
  password: string;
}

/** The lease options of the store; the store's defaults where left out. */
export interface FleetLockTimings {
  lockTtlMs?: number;
  lockTimeoutMs?: number;
  pollMs?: number;
}

/**
 * The store's `encryption`, as JSON: keys with their secrets in Base64, and the switch from clear. The secrets are
 * masked in everything a worker reports, as its passwords are.
 */
export interface FleetEncryption {
  keys: Array<{ id: string; secret: string }>;
  acceptClear?: boolean;
  writeClear?: boolean;
}

/** What a worker reads from FLEET_WORKER_CONFIG. */
export interface WorkerConfig {
  emulatorUrl: string;
  store: FleetStoreConfig;
  /** The store's `encryption` (file and Redis alike). @default none: the pair in clear */
  encryption?: FleetEncryption;
  /** Who the default account logs in as. */
  account?: FleetAccount;
  /**
   * The named accounts the worker serves besides the default one, by name, and who each logs in as: a burst's
   * requests name them (`BurstOptions.accounts`), and the store keeps each with its `forAccount(name)`.
   * @default none
   */
  accounts?: Record<string, FleetAccount>;
  /**
   * Names the worker's Redis connections {@link connectionNameOf} its pid (`CLIENT SETNAME`), so that a test counts
   * them in `CLIENT LIST`. @default false
   */
  nameConnections?: boolean;
  lock?: FleetLockTimings;
  /**
   * Holders in the worker: as many axios instances, each with the plugin attached to the worker's one store (its one
   * pool, for Postgres); request `i` of a burst goes out through holder `i % holders`. @default 1
   */
  holders?: number;
  /** The plugin's `tokenRetryDelayMs`. @default 5 */
  tokenRetryDelayMs?: number;
  /** The plugin's `tokenTimeoutMs`. @default the plugin's */
  tokenTimeoutMs?: number;
  /** The plugin's `storeTimeoutMs`. @default the plugin's */
  storeTimeoutMs?: number;
  /** The plugin's `dpop`. @default off */
  dpop?: boolean;
  /** The plugin's `whenStoreDown`. @default the plugin's */
  whenStoreDown?: 'wait' | 'go-alone';
  /** The plugin's `storeOutageWaitMs`. @default the plugin's */
  storeOutageWaitMs?: number;
  /** The plugin's `tokenBudget`. @default the plugin's */
  tokenBudget?: { windowMs?: number; logins?: number; refreshes?: number };
  /** The plugin's `tokenRetries`. @default the plugin's */
  tokenRetries?: number;
  /** The plugin's `loginCooldownMs`. @default the plugin's */
  loginCooldownMs?: number;
  /**
   * Hand the plugin the store's `getAccount`/`setAccount`, so that the processes share the account's guards; false
   * stands for a store without them (each process its own guards), for comparison. @default true
   */
  shareAccount?: boolean;
}

/**
 * What a worker saw, stamped with `Date.now()` in the worker (one host, one clock): the plugin's events, and its
 * use of the store's lock. No token in any of them.
 */
export type FleetEvent =
  /** `account` names a named account's; absent for the default one's, as in the plugin's events. */
  | { name: 'login' | 'refresh'; at: number; reason: RenewalReason; durationMs: number; account?: string }
  | { name: 'load'; at: number }
  | {
      name: 'failure';
      at: number;
      operation: 'login' | 'refresh' | 'logout' | 'store';
      code: TokenAuthErrorCode;
      message: string;
    }
  /** `lock()` was called: a renewal waits for the lock from now. */
  | { name: 'lock-requested'; at: number }
  | { name: 'lock-acquired'; at: number; fence?: number }
  | { name: 'lock-released'; at: number }
  /** `lock()` rejected (its `lockTimeoutMs` passed, or the store failed): the plugin renews without the lock. */
  | { name: 'lock-failed'; at: number; message: string }
  /** The plugin gave up waiting for the lock (its request's signal aborted: another holder's newer pair arrived). */
  | { name: 'lock-abandoned'; at: number }
  /** The plugin's `warning` event, by its code. */
  | { name: 'warning'; at: number; code: TokenAuthWarningCode };

/** A worker's answer to a burst. */
export interface BurstReply {
  type: 'burst-done';
  /** The burst it answers. */
  id: number;
  ok: number;
  failed: number;
  /** One per request, in firing order, failures included. */
  latenciesMs: number[];
  /** The longest of them: the request that waited most. */
  slowestMs: number;
  /** Answers by the user the emulator served them as (its echo's `user`): whose token went out. */
  users: Record<string, number>;
  /**
   * The same by the account each request named ({@link DEFAULT_ACCOUNT} for the default one): the users each
   * account's requests were served as, which is one user when every request carried its own account's token.
   */
  accounts: Record<string, Record<string, number>>;
  /**
   * Tries at the Redis lock since the worker's previous reply (its LOCK script's answers): granted, and refused
   * because another process held it. 0 for a file store.
   */
  lockGrants: number;
  lockRefused: number;
  /** Replays during this burst. */
  replays: number;
  /** The plugin's counters since attach (the first holder's). */
  stats: TokenAuthStats;
  /** Each holder's `getState().status` once the burst has settled. */
  statuses: string[];
  /** What the store said through its `onWarning` since the worker's previous reply (Postgres only). */
  storeWarnings: string[];
  /** One per failed request: error code, HTTP status, message; masked. */
  errors: string[];
  /** Every event since the worker's previous reply (or since it started), so none between bursts is lost. */
  events: FleetEvent[];
  /** `Date.now()` in the worker when it fired the first request, and when the last one settled. */
  startedAt: number;
  finishedAt: number;
}

export type ParentMessage =
  | {
      type: 'burst';
      id: number;
      n: number;
      path?: string;
      accounts?: Array<string | null>;
      requestTimeoutMs?: number;
      logout?: boolean;
    }
  /**
   * The next read of the pair under a lock this worker holds stops the worker (SIGSTOP to itself) right after the read
   * answered: frozen with the lock held and the pair read, just before its token call, until the parent's SIGCONT.
   */
  | { type: 'freeze-after-read' }
  | { type: 'exit' };

/** How {@link BurstReply.accounts} names the default account. */
export const DEFAULT_ACCOUNT = '(default)';

/** The name a worker gives its Redis connections, with `nameConnections`. */
export function connectionNameOf(pid: number): string {
  return `token-keeper-fleet-${pid}`;
}

export type WorkerMessage = { type: 'ready'; pid: number } | { type: 'event'; event: FleetEvent } | BurstReply;

// ---------------------------------------------------------------------------------------------------------------
// Masking
// ---------------------------------------------------------------------------------------------------------------

/** Token-, Basic-, Bearer- and JWT-shaped text. */
const SECRET_SHAPES: readonly RegExp[] = [
  /\b(Basic|Bearer)\s+[A-Za-z0-9+/._=-]+/gi,
  /(?:acc|ref)[_-][0-9A-Za-z_-]{8,}/g,
  /[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}/g,
];

/** Replaces what looks like a secret, and the given literals, before a text leaves a worker or reaches an error. */
export function maskSecrets(text: string, literals: readonly string[] = [E2E_PASSWORD]): string {
  let masked = text;
  for (const literal of literals) if (literal) masked = masked.split(literal).join('[masked]');
  for (const shape of SECRET_SHAPES)
    masked = masked.replace(shape, (_match, scheme?: unknown) =>
      typeof scheme === 'string' ? `${scheme} [masked]` : '[masked]',
    );
  return masked;
}

// ---------------------------------------------------------------------------------------------------------------
// The parent side
// ---------------------------------------------------------------------------------------------------------------

/** What a fleet is started with: what each of its workers reads, and how many there are. */
export interface FleetOptions extends WorkerConfig {
  /** How many worker processes. */
  count: number;
  /** How long each worker may take to say it is ready. @default 30_000 */
  readyTimeoutMs?: number;
  /** Index of the first worker: fleets started one after another over one store can number theirs apart. @default 0 */
  firstIndex?: number;
}

export interface BurstOptions {
  /** Requests go to `${path}/${i}`. @default '/api/things' */
  path?: string;
  /**
   * The account of request `i` is `accounts[i % accounts.length]` (undefined: the default one), each a name in the
   * worker's `accounts`. @default every request the default account's
   */
  accounts?: ReadonlyArray<string | undefined>;
  /** How long to wait for the reply before failing. @default 60_000 */
  timeoutMs?: number;
  /** Each request's axios `timeout`. @default none */
  requestTimeoutMs?: number;
  /** The first holder logs out (`auth.logout()`) before the burst's requests go. @default false */
  logout?: boolean;
}

/** A worker ended before it answered. `expected` when this harness ended it (`kill`, `stop`). */
export class WorkerExitedError extends Error {
  override readonly name = 'WorkerExitedError';
  constructor(
    message: string,
    readonly worker: number,
    readonly exit: WorkerExit,
    readonly expected: boolean,
  ) {
    super(message);
  }
}

export interface WorkerExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** The package root, where the workers run and their packages are installed. */
const ROOT = resolve(__dirname, '..');

let workerScript: Promise<string> | undefined;

/**
 * fleet-worker.ts bundled into one file under .tmp/ (esbuild; the packages stay in node_modules), once per load of
 * this module: once per test file under jest, which loads modules afresh for each (about 0.2 s). A worker then starts
 * on about 0.4 s of CPU rather than the 1 s of `node --import tsx` on the sources, and `npm test` starts 342 of them on
 * a machine of 2 cores. No source map (it costs a tenth more at each start): the bundle is not minified, and esbuild
 * heads each part of it with the source file it came from.
 */
function fleetWorkerScript(): Promise<string> {
  workerScript ??= bundleWorker('fleet-worker', { packages: 'external' });
  return workerScript;
}

/** The tail of a worker's stdout and stderr kept for error messages. */
const OUTPUT_LIMIT = 16_384;

/** One worker process. */
export class FleetWorker {
  readonly process: ChildProcess;
  /** Everything it reported, in order of arrival. */
  readonly events: FleetEvent[] = [];
  /** Resolves when the process has ended, however. */
  readonly exited: Promise<WorkerExit>;
  private exitInfo: WorkerExit | undefined;
  /** How this harness ended it, if it did. */
  private ending: 'killed' | 'stopped' | undefined;
  private output = '';
  /** What `log` masks besides secret-shaped text: the passwords this worker knows. */
  private readonly passwords: readonly string[];
  private nextId = 1;
  private readonly waiting = new Map<
    number,
    { resolve: (reply: BurstReply) => void; reject: (error: Error) => void }
  >();
  private readonly eventListeners = new Set<(event: FleetEvent) => void>();
  private readyState: { resolve(): void; reject(error: Error): void } | undefined;
  private isReady = false;

  constructor(
    readonly index: number,
    config: WorkerConfig,
    script: string,
  ) {
    this.passwords = [
      E2E_PASSWORD,
      ...(config.account ? [config.account.password] : []),
      ...Object.values(config.accounts ?? {}).map((account) => account.password),
      ...(config.encryption?.keys.map((key) => key.secret) ?? []),
    ];
    this.process = spawn(process.execPath, [script], {
      cwd: ROOT,
      env: { ...process.env, FLEET_WORKER_CONFIG: JSON.stringify(config) },
      stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
    });
    const keep = (chunk: Buffer): void => {
      this.output = (this.output + chunk.toString('utf8')).slice(-OUTPUT_LIMIT);
    };
    this.process.stdout?.on('data', keep);
    this.process.stderr?.on('data', keep);
    this.process.on('message', (message: WorkerMessage) => this.onMessage(message));
    this.exited = new Promise((resolveExit) => {
      this.process.once('exit', (code, signal) => {
        this.exitInfo = { code, signal };
        this.readyState?.reject(this.exitError('before it was ready'));
        const error = this.exitError('before it answered');
        for (const { reject } of this.waiting.values()) reject(error);
        this.waiting.clear();
        resolveExit(this.exitInfo);
      });
    });
    // A spawn failure (no node binary) is reported as an exit, after which nothing is waited for.
    this.process.once('error', (error) => {
      this.output += `\nspawn error: ${error.message}`;
    });
  }

  get pid(): number | undefined {
    return this.process.pid;
  }

  get alive(): boolean {
    return this.exitInfo === undefined;
  }

  /** How it ended, once it has. */
  get exit(): WorkerExit | undefined {
    return this.exitInfo;
  }

  /** The tail of its stdout and stderr, masked. */
  get log(): string {
    return maskSecrets(this.output, this.passwords);
  }

  /** Resolves once the worker has attached the plugin and opened the store. */
  ready(timeoutMs = 30_000): Promise<void> {
    if (this.isReady) return Promise.resolve();
    if (!this.alive) return Promise.reject(this.exitError('before it was ready'));
    return withTimeout(
      new Promise<void>((resolveReady, rejectReady) => {
        this.readyState = { resolve: resolveReady, reject: rejectReady };
      }),
      timeoutMs,
      () => new Error(`fleet worker #${this.index} was not ready within ${timeoutMs} ms; its output:\n${this.log}`),
    );
  }

  /** Fires `n` concurrent GETs in the worker and resolves with its reply. */
  burst(n: number, options: BurstOptions = {}): Promise<BurstReply> {
    if (!this.alive) return Promise.reject(this.exitError('before this burst'));
    const id = this.nextId++;
    const message: ParentMessage = {
      type: 'burst',
      id,
      n,
      ...(options.path !== undefined && { path: options.path }),
      ...(options.accounts && { accounts: options.accounts.map((account) => account ?? null) }),
      ...(options.requestTimeoutMs !== undefined && { requestTimeoutMs: options.requestTimeoutMs }),
      ...(options.logout && { logout: true }),
    };
    const timeoutMs = options.timeoutMs ?? 60_000;
    const reply = new Promise<BurstReply>((resolveReply, rejectReply) => {
      this.waiting.set(id, { resolve: resolveReply, reject: rejectReply });
    });
    this.process.send(message);
    return withTimeout(reply, timeoutMs, () => {
      this.waiting.delete(id);
      return new Error(
        `fleet worker #${this.index} did not answer a burst of ${n} within ${timeoutMs} ms; its output:\n${this.log}`,
      );
    });
  }

  /**
   * Has the worker stop itself (SIGSTOP) right after its next read of the pair under a lock it holds, and resolves
   * once it is stopped (its state in /proc is `T`): frozen with the lock held, just before its token call. `trigger`
   * makes it renew (a burst); the burst's reply comes after `process.kill('SIGCONT')`.
   */
  async freezeAfterRead<T>(trigger: () => Promise<T>, timeoutMs = 20_000): Promise<{ thawed: Promise<T> }> {
    this.process.send({ type: 'freeze-after-read' } satisfies ParentMessage);
    const thawed = trigger();
    thawed.catch(() => undefined);
    const pid = this.pid!;
    const started = Date.now();
    while (processState(pid) !== 'T') {
      if (Date.now() - started > timeoutMs || !this.alive)
        throw new Error(`fleet worker #${this.index} did not stop within ${timeoutMs} ms; its output:\n${this.log}`);
      await new Promise((resolveSoon) => setTimeout(resolveSoon, 20));
    }
    return { thawed };
  }

  /** Calls `listener` with each event the worker reports from now on; returns the function that stops it. */
  onEvent(listener: (event: FleetEvent) => void): () => void {
    this.eventListeners.add(listener);
    return () => void this.eventListeners.delete(listener);
  }

  /** Sends a signal (SIGKILL by default) and resolves once the process has ended. Pending bursts reject, `expected`. */
  kill(signal: NodeJS.Signals = 'SIGKILL'): Promise<WorkerExit> {
    this.ending ??= 'killed';
    if (this.alive) this.process.kill(signal);
    return this.exited;
  }

  /**
   * Asks the worker to eject and close its store and connections; SIGKILLs it after `graceMs`. Resolves with how
   * it ended.
   */
  async stop(graceMs = 5_000): Promise<WorkerExit> {
    if (!this.alive) return this.exited;
    this.ending ??= 'stopped';
    if (this.process.connected) this.process.send({ type: 'exit' } satisfies ParentMessage);
    else this.process.kill('SIGKILL');
    const timer = setTimeout(() => this.process.kill('SIGKILL'), graceMs);
    try {
      return await this.exited;
    } finally {
      clearTimeout(timer);
    }
  }

  private onMessage(message: WorkerMessage): void {
    if (message.type === 'ready') {
      this.isReady = true;
      this.readyState?.resolve();
    } else if (message.type === 'event') {
      this.events.push(message.event);
      for (const listener of [...this.eventListeners]) listener(message.event);
    } else if (message.type === 'burst-done') {
      this.waiting.get(message.id)?.resolve(message);
      this.waiting.delete(message.id);
    }
  }

  private exitError(when: string): WorkerExitedError {
    const exit = this.exitInfo ?? { code: null, signal: null };
    const how = exit.signal ? `was killed by ${exit.signal}` : `exited with code ${exit.code}`;
    return new WorkerExitedError(
      `fleet worker #${this.index} (pid ${this.pid}) ${how} ${when}; its output:\n${this.log || '(none)'}`,
      this.index,
      exit,
      this.ending !== undefined,
    );
  }

  /**
   * Why it ended, when it did not end as asked: on its own, or with a non-zero code (or our SIGKILL after the grace)
   * after `stop()`. Undefined while it runs, after `kill()`, and after a clean exit.
   */
  get crash(): string | undefined {
    const exit = this.exitInfo;
    if (!exit || this.ending === 'killed' || (this.ending === 'stopped' && exit.code === 0)) return undefined;
    const how = exit.signal ? `was killed by ${exit.signal}` : `exited with code ${exit.code}`;
    const when = this.ending === 'stopped' ? 'when asked to exit' : 'on its own';
    return `fleet worker #${this.index} (pid ${this.pid}) ${how} ${when}; its output:\n${this.log || '(none)'}`;
  }
}

export interface Fleet {
  readonly workers: readonly FleetWorker[];
  /**
   * Sends a burst of `n` concurrent GETs to every live worker at once (or to those of `options.only`, by position in
   * `workers`) and resolves with their replies, in that order. Rejects if a worker ends before answering.
   */
  burst(n: number, options?: BurstOptions & { only?: readonly number[] }): Promise<BurstReply[]>;
  /** Resolves with the first event, from now on, that `predicate` accepts, and the worker that reported it. */
  waitForEvent(
    predicate: (event: FleetEvent, worker: FleetWorker) => boolean,
    timeoutMs?: number,
  ): Promise<{ worker: FleetWorker; event: FleetEvent }>;
  /** Signals one worker (SIGKILL by default) and resolves once it has ended. */
  kill(index: number, signal?: NodeJS.Signals): Promise<WorkerExit>;
  /**
   * Asks every live worker to exit, waits for them, SIGKILLs those still there after `graceMs`. Rejects afterwards
   * if a worker had crashed (ended by itself, or exited non-zero when asked to exit), with its output.
   */
  stop(graceMs?: number): Promise<void>;
}

/** Spawns `count` workers at once and resolves when every one is ready; if one fails to start, stops all and throws. */
export async function startFleet(options: FleetOptions): Promise<Fleet> {
  const { count, readyTimeoutMs, firstIndex = 0, ...worker } = options;
  const config: WorkerConfig = { ...worker, tokenRetryDelayMs: worker.tokenRetryDelayMs ?? 5 };
  const script = await fleetWorkerScript();
  const workers = Array.from({ length: count }, (_, i) => new FleetWorker(firstIndex + i, config, script));
  const fleet = makeFleet(workers);
  const started = await Promise.allSettled(workers.map((one) => one.ready(readyTimeoutMs)));
  const failure = started.find((result): result is PromiseRejectedResult => result.status === 'rejected');
  if (failure) {
    await fleet.stop().catch(() => undefined);
    throw failure.reason;
  }
  return fleet;
}

function makeFleet(workers: FleetWorker[]): Fleet {
  const at = (index: number): FleetWorker => {
    const worker = workers[index];
    if (!worker) throw new RangeError(`The fleet has no worker at position ${index} (it has ${workers.length}).`);
    return worker;
  };
  return {
    workers,
    burst(n, options = {}) {
      const targets = options.only ? options.only.map(at) : workers.filter((worker) => worker.alive);
      return Promise.all(targets.map((worker) => worker.burst(n, options)));
    },
    waitForEvent(predicate, timeoutMs = 30_000) {
      const stops: Array<() => void> = [];
      const found = new Promise<{ worker: FleetWorker; event: FleetEvent }>((resolveFound) => {
        for (const worker of workers) {
          stops.push(worker.onEvent((event) => predicate(event, worker) && resolveFound({ worker, event })));
        }
      });
      return withTimeout(
        found,
        timeoutMs,
        () => new Error(`No fleet worker reported the awaited event within ${timeoutMs} ms.`),
      ).finally(() => {
        for (const stop of stops) stop();
      });
    },
    kill(index, signal) {
      return at(index).kill(signal);
    },
    async stop(graceMs) {
      await Promise.all(workers.map((worker) => worker.stop(graceMs)));
      const crashes = workers.map((worker) => worker.crash).filter((crash) => crash !== undefined);
      if (crashes.length > 0) throw new Error(`${crashes.length} fleet worker(s) crashed:\n${crashes.join('\n')}`);
    },
  };
}

/** Fleets started through it and stopped together: what a test file stops after each test. */
export class FleetPool {
  private readonly fleets: Fleet[] = [];

  async start(options: FleetOptions): Promise<Fleet> {
    const fleet = await startFleet(options);
    this.fleets.push(fleet);
    return fleet;
  }

  /** Stops every fleet started since; then rejects with the first crash (a worker that ended on its own). */
  async stopAll(): Promise<void> {
    const stopped = await Promise.allSettled(this.fleets.splice(0).map((fleet) => fleet.stop()));
    const crash = stopped.find((result): result is PromiseRejectedResult => result.status === 'rejected');
    if (crash) throw crash.reason;
  }
}

/**
 * Keeps traffic going: bursts of `n` from every live worker, one after another, until `stop()`, which resolves with
 * all their replies once the burst under way has settled.
 */
export function keepBursting(fleet: Fleet, n: number): { stop(): Promise<BurstReply[]> } {
  let running = true;
  const replies = (async () => {
    const all: BurstReply[] = [];
    while (running) all.push(...(await fleet.burst(n)));
    return all;
  })();
  // A worker that ends under a test that failed first: `stop()` rejects with it, if anyone still calls it.
  replies.catch(() => undefined);
  return {
    stop: () => {
      running = false;
      return replies;
    },
  };
}

/**
 * Keeps every worker bursting on its own, one burst of `n` after another, until `stop()`; unlike {@link keepBursting},
 * whose rounds wait for the slowest worker, a worker whose requests wait for a renewal holds up no other.
 */
export function keepEachBursting(
  fleet: Fleet,
  n: number,
  options: BurstOptions = {},
): { stop(): Promise<BurstReply[]> } {
  let running = true;
  const loops = fleet.workers.map(async (worker) => {
    const replies: BurstReply[] = [];
    while (running) replies.push(await worker.burst(n, options));
    return replies;
  });
  // A worker that ends under a test that failed first: `stop()` rejects with it, if anyone still calls it.
  for (const loop of loops) loop.catch(() => undefined);
  return {
    stop: async () => {
      running = false;
      return (await Promise.all(loops)).flat();
    },
  };
}

/** The replies of a burst (or of several) added up. */
export function sumBursts(replies: readonly BurstReply[]): {
  ok: number;
  failed: number;
  replays: number;
  errors: string[];
  events: FleetEvent[];
  lockGrants: number;
  lockRefused: number;
  /** The slowest request of them all. */
  slowestMs: number;
  /** By account, the users its requests were served as, over every reply. */
  accounts: Record<string, Record<string, number>>;
} {
  const sum = (count: (reply: BurstReply) => number): number =>
    replies.reduce((total, reply) => total + count(reply), 0);
  return {
    ok: sum((reply) => reply.ok),
    failed: sum((reply) => reply.failed),
    replays: sum((reply) => reply.replays),
    errors: replies.flatMap((reply) => reply.errors),
    events: replies.flatMap((reply) => reply.events),
    lockGrants: sum((reply) => reply.lockGrants),
    lockRefused: sum((reply) => reply.lockRefused),
    slowestMs: Math.max(0, ...replies.map((reply) => reply.slowestMs)),
    accounts: replies.reduce<Record<string, Record<string, number>>>((all, reply) => {
      for (const [account, users] of Object.entries(reply.accounts)) {
        const served = (all[account] ??= {});
        for (const [user, count] of Object.entries(users)) served[user] = (served[user] ?? 0) + count;
      }
      return all;
    }, {}),
  };
}

/** A process's state as Linux's /proc says it (`R`, `S`, `T` for stopped, …); undefined once it is gone. */
export function processState(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name, in parentheses, may hold spaces: the state is the first field after its closing one.
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0];
  } catch {
    return undefined;
  }
}

function withTimeout<T>(promise: Promise<T>, ms: number, error: () => Error): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(error()), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
