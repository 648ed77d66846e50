// PostgresTokenStore's lock: a lease written in the account's row by one statement (owner, expiry, and a fence one past
// every fence granted or written there), extended while held, let go by a compare-and-clear that tells `released`.
// No connection is held between statements. The holders of one process wait in turn under async-mutex, so that a
// process tries the row with one statement at a time, however many holders it has: a pool of a few connections serves
// any number of them.
import { Mutex } from 'async-mutex';
import { ABORTED, settle, TIMED_OUT } from '../../support/deadline.js';
import type { TokenStoreLock, TokenStoreLockRequest } from '../../contract/store.js';
import { acquire, HeldLease, Wakeup } from '../common/lease.js';
import type { Attempt } from '../common/lease.js';
import { webCrypto } from '../../support/web-crypto.js';
import type { Queries } from './pool.js';
import type { ResolvedPostgresOptions } from './options.js';
import type { Statements } from './statements.js';

/** How far apart the processes that heard one release try the lock: far more than a read of the pair takes. */
const RELEASE_SPREAD_MS = 50;

/** The lock of one account's row, and the waits for it in this process. */
export class PostgresLock {
  private readonly wakeup = new Wakeup();
  /** This process's holders, one at a time at the row. */
  private readonly turns = new Mutex();
  private waits = 0;

  /**
   * @param hears Whether the store hears of releases now (LISTEN that works): waiters then try again only every 20 ×
   * `pollMs`, in case a notification is lost.
   * @param noticed Takes the pair's record a refused try read (null for none), to announce it when it changed: a
   * waiter whose `request.signal` then aborts stops waiting without the lock.
   */
  constructor(
    private readonly queries: Queries,
    private readonly statements: Statements,
    private readonly key: string,
    private readonly channel: string,
    private readonly options: ResolvedPostgresOptions,
    private readonly hears: () => boolean,
    private readonly noticed: (record: string | null) => void,
  ) {}

  /** Whether a wait for the lock is under way: the store listens to the row meanwhile. */
  get waiting(): boolean {
    return this.waits > 0;
  }

  /**
   * Waits for the lock, at most `lockTimeoutMs` in all (this process's turn included), and holds it, extending its
   * lease, until `release()`.
   */
  async take(request: TokenStoreLockRequest | undefined): Promise<TokenStoreLock> {
    const owner = (await webCrypto()).randomUUID();
    const deadline = Date.now() + this.options.lockTimeoutMs;
    this.waits += 1;
    try {
      const leave = await this.turn(request);
      try {
        const timing = { ...this.options, lockTimeoutMs: Math.max(0, deadline - Date.now()) };
        const taken = await acquire(() => this.tryLock(owner), {
          ...timing,
          request,
          wakeup: this.wakeup,
          what: `The Postgres lock of row "${this.key}"`,
          abandon: () => this.release(owner),
          hearsReleases: this.hears,
        });
        return this.held(owner, taken.granted, taken.triedAt, leave);
      } catch (error) {
        leave();
        throw error;
      }
    } finally {
      this.waits -= 1;
    }
  }

  /** A release was heard: this process's waiter wakes within 50 ms (or `pollMs` when shorter). */
  released(): void {
    this.wakeup.wake(Math.min(this.options.pollMs, RELEASE_SPREAD_MS));
  }

  /**
   * This process's turn at the row, within `lockTimeoutMs`; rejects, as a lock that stayed busy, when it does not come
   * in time, and with the signal's reason when it aborts. A turn that comes after is handed back at once.
   */
  private async turn(request: TokenStoreLockRequest | undefined): Promise<() => void> {
    const signal = request?.signal;
    const waiting = this.turns.acquire();
    const turn = await settle(waiting, { ms: this.options.lockTimeoutMs, signal });
    if (turn !== TIMED_OUT && turn !== ABORTED) return turn;
    void waiting.then((leave) => leave());
    signal?.throwIfAborted();
    throw new Error(
      `The Postgres lock of row "${this.key}" was still held by another holder of this process after ` +
        `${this.options.lockTimeoutMs} ms (\`lockTimeoutMs\`).`,
    );
  }

  private held(owner: string, fence: number, triedAt: number, leave: () => void): TokenStoreLock {
    const { statements, key } = this;
    const extend = async () =>
      (await this.queries.run("the lock's extension", statements.extend, [key, owner, this.options.lockTtlMs]))
        .length === 1;
    const lease = new HeldLease(extend, this.options.lockTtlMs, triedAt);
    let released = false;
    return {
      fence,
      leaseLeftMs: () => lease.leftMs(),
      release: async () => {
        if (released) return;
        released = true;
        lease.stop();
        leave();
        await this.release(owner);
      },
    };
  }

  private async release(owner: string): Promise<void> {
    await this.queries.run("the lock's release", this.statements.release, [this.key, owner, this.channel]);
  }

  private async tryLock(owner: string): Promise<Attempt<number>> {
    const { lockTtlMs, keyTtlMs } = this.options;
    const [row] = await this.queries.run('a try at the lock', this.statements.lock, [
      this.key,
      owner,
      lockTtlMs,
      keyTtlMs,
    ]);
    if (row?.['granted'] !== null && row?.['granted'] !== undefined) return { granted: Number(row['granted']) };
    const pair = row?.['pair'];
    if (typeof pair === 'string') this.noticed(pair);
    return { retryInMs: Math.max(0, Number(row?.['lease_left_ms'] ?? 0)) };
  }
}
