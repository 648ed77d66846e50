// The file store's lock: a lock file beside the token file, taken by creating it (an exclusive create, which one
// process wins), kept as a lease by touching it, broken once its holder stopped touching it, and the fence claimed
// under it, which refuses the writes of a holder whose lease lapsed. Node only.
import { randomUUID } from 'node:crypto';
import type { Stats } from 'node:fs';
import { mkdir, open, readFile, stat, unlink, utimes } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { TokenStoreLock, TokenStoreLockRequest } from '../../contract/store.js';
import { acquire, HeldLease, Wakeup } from '../common/lease.js';
import type { Attempt, LeaseOptions } from '../common/lease.js';
import { hasErrorCode, ignoreMissing, readRecord, replaceFile, sweepTemporaries } from './writes.js';

/**
 * The lock of one token file: `tokens.json.lock` while a process holds it, and `tokens.json.fence`, the number of the
 * last lock granted.
 */
export class FileLock {
  /** The lock file, there while a process holds the lock: it holds the holder's name, and its mtime is the lease's. */
  readonly lockPath: string;
  private readonly fencePath: string;
  /** Ends a waiter's sleep when the lock file or the token file changes. */
  private readonly wakeup = new Wakeup();

  /**
   * @param path The token file, as an absolute path.
   * @param options The store's lease, lock wait and polling.
   */
  constructor(
    private readonly path: string,
    private readonly options: Required<LeaseOptions>,
  ) {
    this.lockPath = `${path}.lock`;
    this.fencePath = `${path}.fence`;
  }

  /** Waits for the lock file, at most `lockTimeoutMs`, and holds it, extending its lease, until `release()`. */
  async take(request?: TokenStoreLockRequest): Promise<TokenStoreLock> {
    const owner = randomUUID();
    // Made in the first try, so that a hung mount is bounded like any try.
    let made: Promise<unknown> | undefined;
    const { triedAt } = await acquire(
      async () => {
        await (made ??= mkdir(dirname(this.path), { recursive: true, mode: 0o700 }));
        return this.tryLock(owner);
      },
      {
        ...this.options,
        request,
        wakeup: this.wakeup,
        what: `The lock file ${this.lockPath}`,
        abandon: () => this.unlock(owner),
      },
    );
    let lease: HeldLease | undefined;
    try {
      // Granted as the wait was given up (a newer pair arrived): released now, before it claims a fence.
      request?.signal?.throwIfAborted();
      lease = new HeldLease(() => this.extend(owner), this.options.lockTtlMs, triedAt);
      // One more than any fence granted or written before, kept in a file of its own so that the claim never
      // touches the pair: from now on, a holder whose lease lapsed has an older fence and its writes are refused.
      const fence = (await this.latestFence((await readRecord(this.path))?.fence ?? 0)) + 1;
      await replaceFile(this.fencePath, String(fence), false);
      // Paused past the lease while claiming, another may have claimed the same number: then the lock is not ours.
      if (!(await this.owns(owner)))
        throw new Error(`The lock file ${this.lockPath} passed to another process while this one claimed its fence.`);
      await sweepTemporaries(this.path, this.options.lockTtlMs);
      const held = lease;
      return {
        fence,
        leaseLeftMs: () => held.leftMs(),
        release: async () => {
          held.stop();
          await this.unlock(owner);
        },
      };
    } catch (error) {
      lease?.stop();
      await this.unlock(owner);
      throw error;
    }
  }

  /** The lock file or the token file changed: the waiters try again now rather than at their next poll. */
  wake(): void {
    this.wakeup.wake();
  }

  /**
   * The fence of the last grant, or `written` (the fence of the record as last read) if the fence file went missing.
   * A later holder grants itself a fence before it writes, so the fence file alone tells of it.
   */
  async latestFence(written: number): Promise<number> {
    const granted = Number((await readFile(this.fencePath, 'utf8').catch(ignoreMissing)) ?? 0);
    return Math.max(Number.isSafeInteger(granted) ? granted : 0, written);
  }

  private async tryLock(owner: string): Promise<Attempt<true>> {
    try {
      const handle = await open(this.lockPath, 'wx', 0o600);
      try {
        await handle.writeFile(owner);
      } finally {
        await handle.close();
      }
      return { granted: true };
    } catch (error) {
      // Windows answers EPERM for a lock file that is being deleted while another process still has it open.
      if (!hasErrorCode(error, 'EEXIST') && !hasErrorCode(error, 'EPERM')) throw error;
    }
    const held = await stat(this.lockPath).catch(ignoreMissing);
    if (!held) return { retryInMs: 0 };
    const age = Date.now() - held.mtimeMs;
    if (age <= this.options.lockTtlMs) return { retryInMs: this.options.lockTtlMs - age };
    // Its holder stopped extending it: killed, or stalled past its lease.
    await this.breakStale(held);
    return { retryInMs: 0 };
  }

  /**
   * Removes a lock judged stale, one waiter at a time: two waiters that both judged it stale must not both remove
   * it, or the second would remove the lock the first has just taken, and both would renew. Under the guard, the
   * lock is removed only if it is still the file judged stale.
   */
  private async breakStale(judged: Stats): Promise<void> {
    const guard = `${this.lockPath}.break`;
    try {
      await (await open(guard, 'wx', 0o600)).close();
    } catch (error) {
      if (!hasErrorCode(error, 'EEXIST')) throw error;
      // Another waiter is breaking it. A guard left by a waiter that died while breaking goes after a lease.
      const left = await stat(guard).catch(ignoreMissing);
      if (left && Date.now() - left.mtimeMs > this.options.lockTtlMs) await unlink(guard).catch(ignoreMissing);
      return;
    }
    try {
      const now = await stat(this.lockPath).catch(ignoreMissing);
      if (now?.ino === judged.ino && now.mtimeMs === judged.mtimeMs) await unlink(this.lockPath).catch(ignoreMissing);
    } finally {
      await unlink(guard).catch(ignoreMissing);
    }
  }

  private async extend(owner: string): Promise<boolean> {
    if (!(await this.owns(owner))) return false;
    const now = new Date();
    await utimes(this.lockPath, now, now);
    return true;
  }

  private async unlock(owner: string): Promise<void> {
    // Compare and delete: a lease that lapsed may be another holder's lock by now.
    if (await this.owns(owner)) await unlink(this.lockPath).catch(ignoreMissing);
    this.wakeup.wake();
  }

  private async owns(owner: string): Promise<boolean> {
    return (await readFile(this.lockPath, 'utf8').catch(ignoreMissing)) === owner;
  }
}
