// The browser store's lock: how the tabs take turns renewing (through Web Locks where the browser has them, else a
// lease in `localStorage`, else within this tab alone), and how the keepers of one tab take turns before that.
import { Mutex } from 'async-mutex';
import type { TokenStoreLock } from '../../contract/store.js';
import { webLocks, webStorage } from './environment.js';
import type { BrowserLocking } from './options.js';
import { StorageLease } from './storage-lease.js';
import type { TabChannel } from './tab-channel.js';
import { WebLock } from './web-lock.js';

/** The fences a lock is granted past, as this tab sees them. */
export interface SeenFences {
  /** The fence of the newest write this tab can see, of the pair or of the account's record. */
  newest(): number;
  /** The fence of the newest record of the pair this tab can see. */
  ofPair(): number;
}

/** The lock of one account's tabs, in the way this browser offers. */
export class BrowserLock {
  /** How the tabs take turns in this browser. */
  readonly locking: BrowserLocking;
  private readonly webLock: WebLock | undefined;
  private readonly lease: StorageLease | undefined;
  /** Keepers attached with this store in this tab take turns here before they take the lease. */
  private readonly tabMutex = new Mutex();

  /**
   * @param name The lock's name, which the lease's keys in `localStorage` start with.
   * @param options The store's lock wait, and the lease's length and polling.
   * @param channel The tabs' channel, over which a lease's release is told.
   */
  constructor(
    name: string,
    options: { lockTimeoutMs: number; lockTtlMs: number; pollMs: number },
    private readonly fences: SeenFences,
    channel: TabChannel,
  ) {
    const locks = webLocks();
    const leaseStorage = locks ? undefined : webStorage('local');
    const newestFence = (): number => fences.newest();
    this.webLock = locks && new WebLock(locks, name, options.lockTimeoutMs, newestFence, channel);
    this.lease =
      leaseStorage && new StorageLease(leaseStorage, name, options, newestFence, () => channel.tellReleased());
    this.locking = this.webLock ? 'web-locks' : this.lease ? 'storage-lease' : 'tab';
  }

  /**
   * Resolves once this tab may renew, and holds the lock until `release()`. Rejects after `lockTimeoutMs`; the plugin
   * then treats the store as down (its `whenStoreDown` option).
   */
  async lock(): Promise<TokenStoreLock> {
    if (this.webLock) return this.webLock.lock();
    const releaseTab = await this.tabMutex.acquire();
    // With neither Web Locks nor localStorage, the turn within this tab is all there is.
    if (!this.lease) return { fence: this.fences.ofPair() + 1, release: releaseTab };
    try {
      const held = await this.lease.take();
      return {
        fence: held.fence,
        leaseLeftMs: held.leaseLeftMs,
        release: () => {
          held.release();
          releaseTab();
        },
      };
    } catch (error) {
      releaseTab();
      throw error;
    }
  }

  /** Marks `fence` as written by this tab, for the next holder of a Web Lock to wait for; nothing to do otherwise. */
  mark(fence: number): Promise<void> | undefined {
    return this.webLock?.mark(fence);
  }

  /** This tab learnt of a write of `fence`: its marker of an older write goes. */
  learnt(fence: number): void {
    this.webLock?.learnt(fence);
  }

  /** Without Web Locks, whether a lease was granted past `fence`: its holder may not have written yet. */
  grantedPast(fence: number): boolean {
    return this.lease !== undefined && this.lease.lastFence() > fence;
  }

  /** A storage event of `key`: a change of the lease wakes its waiters. */
  heard(key: string | null): void {
    this.lease?.heard(key);
  }

  /** Wakes the lease's waiters, to look at the lease now: another tab told of a release, or the store closed. */
  wake(): void {
    this.lease?.wake();
  }

  /** Lets go of this tab's marker of its last write: the store stops speaking to the other tabs. */
  close(): void {
    this.webLock?.close();
  }
}
