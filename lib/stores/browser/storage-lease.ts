import { acquire, HeldLease, Wakeup } from '../common/lease.js';
import type { Attempt, LeaseOptions } from '../common/lease.js';

/**
 * How long a tab waits after writing its claim of the lease before reading it back: tabs that claimed at the same
 * moment see who wrote last. `localStorage` reaches other tabs within milliseconds, and within tens on a busy machine.
 */
const LEASE_SETTLE_MS = 100;

/** The lease as `localStorage` keeps it: its holder, when it ends, and the fence it granted. */
interface Lease {
  owner: string;
  until: number;
  fence: number;
}

/**
 * The tabs' turn to renew where Web Locks are missing: a lease in `localStorage` (`{name}:lock`), extended while its
 * holder renews, so that a tab closed mid-renewal blocks the others one lease at most. `{name}:fence` keeps the fence
 * of the last lease granted: a write with an older one comes from a holder whose lease lapsed, and is refused.
 */
export class StorageLease {
  private readonly wakeup = new Wakeup();
  private readonly leaseKey: string;
  private readonly fenceKey: string;

  /**
   * @param newestFence The fence of the newest record the tab has seen: a lease is granted past it.
   * @param tellReleased Tells the other tabs that the lease is free, so that their waiters look at once.
   */
  constructor(
    private readonly storage: Storage,
    name: string,
    private readonly timing: Required<LeaseOptions>,
    private readonly newestFence: () => number,
    private readonly tellReleased: () => void,
  ) {
    this.leaseKey = `${name}:lock`;
    this.fenceKey = `${name}:fence`;
  }

  /** Waits for the lease, at most `lockTimeoutMs`, and extends it until `release()`. */
  async take(): Promise<{ fence: number; leaseLeftMs: () => number; release: () => void }> {
    const owner = `${Date.now().toString(36)}-${Math.random().toString(36).slice(2)}`;
    const { granted: fence, triedAt } = await acquire(() => this.tryTake(owner), {
      ...this.timing,
      wakeup: this.wakeup,
      what: `The lease "${this.leaseKey}" in localStorage`,
      abandon: () => this.drop(owner),
    });
    const lease = new HeldLease(() => Promise.resolve(this.extend(owner)), this.timing.lockTtlMs, triedAt);
    return {
      fence,
      // Two tabs that claimed at once can both have read their own claim: the one whose claim storage kept holds it.
      leaseLeftMs: () => (this.read()?.owner === owner ? lease.leftMs() : 0),
      release: () => {
        lease.stop();
        this.drop(owner);
      },
    };
  }

  /** The fence of the last lease granted, in any tab. */
  lastFence(): number {
    const fence = Number(this.storage.getItem(this.fenceKey) ?? 0);
    return Number.isFinite(fence) ? fence : 0;
  }

  /** A change in storage: a change of the lease wakes the waiters. */
  heard(key: string | null): void {
    if (key === this.leaseKey) this.wake();
  }

  /** Wakes the waiters, to look at the lease again. */
  wake(): void {
    this.wakeup.wake();
  }

  private async tryTake(owner: string): Promise<Attempt<number>> {
    const now = Date.now();
    const held = this.read();
    if (held && held.until > now) return { retryInMs: held.until - now };
    const fence = Math.max(this.lastFence(), held?.fence ?? 0, this.newestFence()) + 1;
    this.write({ owner, until: now + this.timing.lockTtlMs, fence });
    this.storage.setItem(this.fenceKey, String(fence));
    await new Promise((settled) => setTimeout(settled, LEASE_SETTLE_MS));
    return this.read()?.owner === owner ? { granted: fence } : { retryInMs: this.timing.pollMs };
  }

  private extend(owner: string): boolean {
    const held = this.read();
    if (held?.owner !== owner) return false;
    this.write({ ...held, until: Date.now() + this.timing.lockTtlMs });
    return true;
  }

  private drop(owner: string): void {
    if (this.read()?.owner !== owner) return;
    this.storage.removeItem(this.leaseKey);
    this.tellReleased();
  }

  private read(): Lease | undefined {
    const text = this.storage.getItem(this.leaseKey);
    if (!text) return undefined;
    try {
      const lease = JSON.parse(text) as Partial<Lease>;
      const valid =
        typeof lease.owner === 'string' && typeof lease.until === 'number' && typeof lease.fence === 'number';
      return valid ? (lease as Lease) : undefined;
    } catch {
      return undefined;
    }
  }

  private write(lease: Lease): void {
    this.storage.setItem(this.leaseKey, JSON.stringify(lease));
  }
}
