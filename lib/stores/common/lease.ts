// What a store that shares the pair between processes (file, Redis, browser) needs for its lock: the lease options,
// the wait for the lock, the lease kept alive, and the wake-ups that end a wait early. The record it keeps is in
// record.ts, its listeners in announcer.ts, its option checks in options.ts.
import { ABORTED, settle, TIMED_OUT, unanswered } from '../../support/deadline.js';
import type { TokenStoreLockRequest } from '../../contract/store.js';
/** The options of a lock kept as a lease: every store that shares the pair between processes has them. */
export interface LeaseOptions {
  /**
   * Length of the lock's lease. The holder extends it while it renews, so a slow renewal keeps the lock; a holder
   * that was killed blocks the others this long at most.
   * @default 10_000
   */
  lockTtlMs?: number;
  /**
   * How long a process waits for the lock before it gives up (reported as `STORE_FAILED`); the plugin then treats the
   * store as down, as its `whenStoreDown` option says. Longer than the longest renewal (token calls with their retries and `Retry-After` waits), so that a holder that
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

/** What one try at a shared lock gives: the lock, or how long its current lease has left. */
export type Attempt<T> = { granted: T } | { retryInMs: number };

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
 * given up on is handed to `abandon`, to be released. Gives the lock, and when the try that took it began: its lease
 * runs from then at the latest.
 */
export async function acquire<T>(
  attempt: () => Promise<Attempt<T>>,
  timing: AcquireTiming<T>,
): Promise<{ granted: T; triedAt: number }> {
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
    const triedAt = Date.now();
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
    if ('granted' in tried) return { granted: tried.granted, triedAt };
    refused = true;
    const fallback = timing.hearsReleases?.() ? 20 * pollMs : pollMs;
    const sleep = Math.min(fallback * (0.5 + Math.random() / 2), tried.retryInMs, deadline - Date.now());
    await timing.wakeup.sleep(Math.max(1, sleep), signal, wakes);
  }
}

/**
 * A held lease, extended every third of its length until `stop()`. A holder that is killed stops extending, so the
 * others wait at most one lease for it. `extend` answers false when the lease was lost; extending then stops.
 * `leftMs()` is how long the lease is this holder's for sure by this process's clock: from the start of the try that
 * took or last extended it, less a tenth of its length for the clocks' drift and the way to the store. A holder that
 * was frozen (a stopped process, a thawed serverless instance, a long GC pause) reads it as it thaws, before its timers
 * run, and sends nothing on the strength of a lease that lapsed.
 */
export class HeldLease {
  private stopped = false;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private endsAt: number;

  /** `grantedAt`: when the try that took the lock began (epoch ms). */
  constructor(
    private readonly extend: () => Promise<boolean>,
    private readonly leaseMs: number,
    grantedAt: number,
  ) {
    this.endsAt = grantedAt + leaseMs;
    this.schedule();
  }

  /** How long the lease is surely this holder's still, in ms (0 or less: it may have lapsed). */
  leftMs(): number {
    return this.stopped ? 0 : this.endsAt - this.leaseMs / 10 - Date.now();
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
  }

  private schedule(): void {
    this.timer = setTimeout(() => {
      const triedAt = Date.now();
      this.extend().then(
        (held) => {
          if (!held) this.endsAt = -Infinity;
          else this.endsAt = Math.max(this.endsAt, triedAt + this.leaseMs);
          if (held && !this.stopped) this.schedule();
        },
        // A failed extension is retried at the next beat; the lease itself says whether the lock is still ours.
        () => {
          if (!this.stopped) this.schedule();
        },
      );
    }, this.leaseMs / 3);
    // The lease must never keep a process alive that has nothing else to do.
    this.timer.unref?.();
  }
}
