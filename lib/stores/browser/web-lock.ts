import type { TokenStoreLock } from '../../contract/store.js';
import type { TabChannel } from './tab-channel.js';

/**
 * How long a tab that was just granted the lock waits for the pair the previous holder wrote, when the lock manager
 * says there is a newer one than this tab has seen: storage and messages reach a tab a little after the lock can.
 * Past it, the tab asks the others.
 */
const CATCH_UP_MS = 1_000;

/**
 * The tabs' turn to renew through the Web Locks API, which the browser frees at once when a tab closes. A tab that
 * wrote a record also holds the shared lock `{name}@{fence}` until it learns of a newer write: the next holder of the
 * lock finds that marker in `navigator.locks.query()`, as consistent as the lock itself, and knows what to wait for.
 */
export class WebLock {
  /** The marker this tab holds, for the last fence it wrote. */
  private marker: { fence: number; release: () => void } | undefined;
  /** The last fence this tab marked, and when its marker is held. */
  private marking: { fence: number; done: Promise<void> } | undefined;

  constructor(
    private readonly locks: LockManager,
    private readonly lockName: string,
    private readonly lockTimeoutMs: number,
    /** The fence of the newest write this tab can see, of the pair or of the account's record. */
    private readonly newestFence: () => number,
    private readonly channel: TabChannel,
  ) {}

  /**
   * Resolves once this tab holds the lock and has seen the record of the last marked write, with a fence past both;
   * rejects after `lockTimeoutMs`.
   */
  async lock(): Promise<TokenStoreLock> {
    const release = await this.request();
    try {
      // The previous holder's pair may reach this tab a little after the lock does: wait for it, so that the plugin's
      // re-read under the lock sees it and does not spend a refresh token that holder has already spent.
      const written = await this.lastMarked();
      await this.catchUp(written);
      return { fence: Math.max(written, this.newestFence()) + 1, release };
    } catch (error) {
      release();
      throw error;
    }
  }

  /** Marks `fence` as written by this tab, for the next holder of the lock to wait for. */
  mark(fence: number): Promise<void> {
    // A turn that writes the pair and the account's record (at once) marks their fence once.
    if (this.marking?.fence === fence) return this.marking.done;
    // The marker of an older write, if any, went when this tab learnt of this one.
    const done = new Promise<void>((marked) => {
      this.locks
        .request(`${this.lockName}@${fence}`, { mode: 'shared' }, () => {
          marked();
          return new Promise<void>((release) => {
            this.marker = { fence, release: () => release() };
          });
        })
        .catch(() => marked());
    });
    this.marking = { fence, done };
    return done;
  }

  /** This tab learnt of a write of `fence`: the marker of an older write goes. */
  learnt(fence: number): void {
    if (this.marker && this.marker.fence < fence) {
      this.marker.release();
      this.marker = undefined;
    }
  }

  close(): void {
    this.marker?.release();
  }

  /** Waits for the lock, at most `lockTimeoutMs`; resolves to its release. */
  private request(): Promise<() => void> {
    return new Promise<() => void>((resolve, reject) => {
      const giveUp = new AbortController();
      const timer = setTimeout(() => giveUp.abort(), this.lockTimeoutMs);
      this.locks
        .request(this.lockName, { signal: giveUp.signal }, () => {
          clearTimeout(timer);
          // The lock is held until this promise settles, or until the tab closes.
          return new Promise<void>((released) => resolve(() => released()));
        })
        .catch((error: unknown) => {
          clearTimeout(timer);
          reject(giveUp.signal.aborted || !(error instanceof Error) ? this.timedOut() : error);
        });
    });
  }

  /** The newest fence a tab has marked as written, as the lock manager sees it (0 for none). */
  private async lastMarked(): Promise<number> {
    const { held = [] } = await this.locks.query();
    const prefix = `${this.lockName}@`;
    let newest = 0;
    for (const lock of held) {
      if (lock.name?.startsWith(prefix)) newest = Math.max(newest, Number(lock.name.slice(prefix.length)) || 0);
    }
    return newest;
  }

  /** Resolves once this tab has seen a record of `fence` or newer; after a while it asks the others, then gives up. */
  private async catchUp(fence: number): Promise<void> {
    if (await this.channel.until(() => this.newestFence() >= fence, CATCH_UP_MS)) return;
    await this.channel.ask((known) => known.fence >= fence);
  }

  private timedOut(): Error {
    return new Error(
      `The Web Lock "${this.lockName}" was still held by another tab after ${this.lockTimeoutMs} ms (\`lockTimeoutMs\`).`,
    );
  }
}
