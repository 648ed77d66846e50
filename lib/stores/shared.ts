// What the stores that share the pair (file, Redis, browser) have in common: the lease options, the lock wait, the
// lease, wake-ups, listeners and option checks. The record they keep is in record.ts.
import { ABORTED, settle, TIMED_OUT, unanswered } from '../deadline.js';
import type { TokenPair, TokenStoreLockRequest } from '../types.js';

/** The options of a lock kept as a lease: every store that shares the pair between processes has them. */
export interface LeaseOptions {
  /**
   * Length of the lock's lease. The holder extends it while it renews, so a slow renewal keeps the lock; a holder
   * that was killed blocks the others this long at most.
   * @default 10_000
   */
  lockTtlMs?: number;
  /**
   * How long a process waits for the lock before it gives up and renews without it (reported as `STORE_FAILED`).
   * Longer than the longest renewal (token calls with their retries and `Retry-After` waits), so that a holder that
   * is merely slow is waited for; a holder that died is the lease's business.
   * @default 120_000
   */
  lockTimeoutMs?: number;
  /**
   * How often a waiting process tries the lock again. Where the store hears of releases (Redis with a `subscriber`),
   * a release wakes the waiters, and they try again every 20 × `pollMs` only in case a message is lost.
   * @default 50
   */
  pollMs?: number;
}

export const LEASE_DEFAULTS = {
  lockTtlMs: 10_000,
  lockTimeoutMs: 120_000,
  pollMs: 50,
} satisfies Required<LeaseOptions>;

/**
 * Every option name of a store, each once: a new option that is not listed here fails to compile, instead of being
 * refused as unknown at run time.
 */
export type OptionNames<Options> = { readonly [Name in keyof Options]-?: true };

/** What one try at a shared lock gives: the lock, or how long its current lease has left. */
export type Attempt<T> = { granted: T } | { retryInMs: number };

/**
 * The listeners of one store in this process. A record is announced once, whether this process wrote it (other
 * instances attached with the same store learn of it) or another process did (a file event, a pub/sub message).
 */
export class Announcer {
  private readonly listeners = new Set<(pair: TokenPair | null) => void>();
  private lastSeen: string | undefined;

  get size(): number {
    return this.listeners.size;
  }

  add(listener: (pair: TokenPair | null) => void): () => void {
    this.listeners.add(listener);
    return () => {
      this.listeners.delete(listener);
    };
  }

  /** `text` is the stored record (or '' for none): a record seen before calls nobody. */
  announce(text: string, pair: TokenPair | null): void {
    if (text === this.lastSeen) return;
    this.lastSeen = text;
    for (const listener of [...this.listeners]) listener(pair && { ...pair });
  }
}

/** Lets a waiter sleep until something changed (a release heard through pub/sub, a file event), not a whole poll. */
export class Wakeup {
  private readonly sleepers = new Set<() => void>();
  /** Counts the wakes, so that a waiter hears of one that came while it was trying rather than sleeping. */
  private wakes = 0;
  private lastSpreadMs = 0;

  /** Wakes so far: pass it to `sleep()` to have a wake that comes before the sleep count. */
  get count(): number {
    return this.wakes;
  }

  /**
   * Wakes the sleepers; with `spreadMs`, each at a random moment within it, so that waiters that all heard of one
   * release do not all try the lock at once.
   */
  wake(spreadMs = 0): void {
    this.wakes += 1;
    this.lastSpreadMs = spreadMs;
    for (const sleeper of [...this.sleepers]) {
      if (spreadMs > 0) setTimeout(sleeper, Math.random() * spreadMs);
      else sleeper();
    }
  }

  /**
   * Resolves after `ms`, or sooner on `wake()` or when `signal` aborts. A wake since `count` was `since` (it came
   * while the waiter was trying) ends the sleep at once, or within the wake's spread.
   */
  sleep(ms: number, signal?: AbortSignal, since = this.wakes): Promise<void> {
    const wait = since === this.wakes ? ms : Math.min(ms, Math.random() * this.lastSpreadMs);
    return new Promise((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        this.sleepers.delete(done);
        signal?.removeEventListener('abort', done);
        resolve();
      };
      const timer = setTimeout(done, wait);
      this.sleepers.add(done);
      signal?.addEventListener('abort', done, { once: true });
    });
  }
}

/** How {@link acquire} waits: the store's lease options, and what the plugin asked of this lock. */
export interface AcquireTiming<T> {
  lockTimeoutMs: number;
  pollMs: number;
  wakeup: Wakeup;
  /** The lock, as messages name it: "The Redis lock {p}:lock". */
  what: string;
  /** Releases a lock granted to a try that was given up on. */
  abandon: (granted: T) => unknown;
  request?: TokenStoreLockRequest | undefined;
  /**
   * True while the store hears of releases (pub/sub): polling is then only the fallback for a lost message, and
   * waits 20 × `pollMs` between tries.
   */
  hearsReleases?: () => boolean;
}

/**
 * Tries `attempt` until it grants the lock or `lockTimeoutMs` has passed. Between tries it sleeps (with jitter, so
 * that processes do not try in step; less when the lease ends sooner) and wakes early on `wakeup`. A try that does
 * not answer within `request.tryTimeoutMs` is a store that stopped answering, not a busy lock: it rejects at once,
 * saying so. Once `request.signal` aborts, it stops and rejects with the signal's reason. A lock granted to a try
 * given up on is handed to `abandon`, to be released.
 */
export async function acquire<T>(attempt: () => Promise<Attempt<T>>, timing: AcquireTiming<T>): Promise<T> {
  const { lockTimeoutMs, pollMs, request, what } = timing;
  const signal = request?.signal;
  const deadline = Date.now() + lockTimeoutMs;
  const busy = (): Error =>
    new Error(`${what} was still held by another process after ${lockTimeoutMs} ms (\`lockTimeoutMs\`).`);
  let refused = false;
  for (;;) {
    signal?.throwIfAborted();
    const left = deadline - Date.now();
    if (left <= 0 && refused) throw busy();
    const tryTimeoutMs = request?.tryTimeoutMs ?? Infinity;
    const limit = Math.max(0, Math.min(tryTimeoutMs, left));
    const wakes = timing.wakeup.count;
    const trying = attempt();
    const tried = await settle(trying, { ms: limit, signal });
    if (tried === TIMED_OUT || tried === ABORTED || signal?.aborted) {
      trying.then((late) => 'granted' in late && timing.abandon(late.granted)).catch(() => undefined);
      signal?.throwIfAborted();
      // Cut short by the deadline after tries that were refused: the lock is busy, the store merely slow.
      if (refused && limit < tryTimeoutMs) throw busy();
      throw unanswered(
        `${what} got no answer to a try within ${Math.round(limit)} ms (` +
          (limit < tryTimeoutMs ? '`lockTimeoutMs`' : "the plugin's `storeTimeoutMs`") +
          '): the store stopped answering; the lock was not found busy.',
      );
    }
    if ('granted' in tried) return tried.granted;
    refused = true;
    const fallback = timing.hearsReleases?.() ? 20 * pollMs : pollMs;
    const sleep = Math.min(fallback * (0.5 + Math.random() / 2), tried.retryInMs, deadline - Date.now());
    await timing.wakeup.sleep(Math.max(1, sleep), signal, wakes);
  }
}

/**
 * Extends a held lease every third of its length, until `stop()`. A holder that is killed stops extending, so the
 * others wait at most one lease for it. `extend` answers false when the lease was lost; extending then stops.
 */
export function keepAlive(extend: () => Promise<boolean>, leaseMs: number): { stop(): void } {
  let stopped = false;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const schedule = (): void => {
    timer = setTimeout(() => {
      extend().then(
        (held) => {
          if (held && !stopped) schedule();
        },
        // A failed extension is retried at the next beat; the lease itself says whether the lock is still ours.
        () => {
          if (!stopped) schedule();
        },
      );
    }, leaseMs / 3);
    // The lease must never keep a process alive that has nothing else to do.
    timer.unref?.();
  };
  schedule();
  return {
    stop() {
      stopped = true;
      clearTimeout(timer);
    },
  };
}

/**
 * Checks the options of a store, naming the option that is wrong: no option it does not know, and positive
 * milliseconds for every option whose name ends in `Ms`.
 */
export function checkStoreOptions(
  store: string,
  options: unknown,
  names: Readonly<Record<string, true>>,
): Record<string, unknown> {
  if (options === null || typeof options !== 'object') {
    throw new TypeError(
      `${store}: the options must be an object, such as { lockTtlMs: 10_000 }; got ${describe(options)}.`,
    );
  }
  const known = Object.keys(names);
  for (const name of Object.keys(options)) {
    if (!known.includes(name))
      throw new TypeError(
        `${store}: unknown option \`${name}\`; the options are ${known.map((k) => `\`${k}\``).join(', ')}.`,
      );
  }
  const given = options as Record<string, unknown>;
  for (const name of known.filter((each) => each.endsWith('Ms'))) {
    const value = given[name];
    if (value !== undefined && (typeof value !== 'number' || !Number.isFinite(value) || value <= 0)) {
      throw new TypeError(`${store}: \`${name}\` must be a positive number of milliseconds; got ${describe(value)}.`);
    }
  }
  const ttl = given['lockTtlMs'];
  if (typeof ttl === 'number' && ttl < 1_000) {
    throw new TypeError(
      `${store}: \`lockTtlMs\` must be at least 1000, so that a live holder can extend its lease in time; got ${ttl}.`,
    );
  }
  return given;
}

/** A value as an error message shows it: a string in quotes, so that "false" and false differ. */
export function describe(value: unknown): string {
  return typeof value === 'string' ? JSON.stringify(value) : String(value);
}
