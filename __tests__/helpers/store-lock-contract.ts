// The lock contract, run against every store with a lock, with the pairs the store contracts write and the round trip
// of a pair; the record contract and the contracts per account are beside it (store-record-contract.ts,
// store-accounts-contract.ts). A store's test file imports them all from store-contract.ts.
import type { TokenPair, TokenStore, TokenStoreLock } from '../../lib/index.js';
import { undoAfterEach } from './flow.js';

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export const PAIR_A: TokenPair = { access: 'access-of-a', refresh: 'refresh-of-a', expiresAt: 1_900_000_000_000 };
export const PAIR_B: TokenPair = { access: 'access-of-b', refresh: 'refresh-of-b' };
export const PAIR_C: TokenPair = { access: 'access-of-c' };
/** What a holder whose lock lapsed would write. */
export const STALE: TokenPair = { access: 'stale-access', refresh: 'stale-refresh' };

/** A store gives back the pair set and null after `clear()`, to itself and to another instance on the same place. */
export async function expectRoundTrip(store: () => TokenStore): Promise<void> {
  const tokens = store();
  expect(await tokens.set(PAIR_A)).toBe(true);
  expect(await tokens.get()).toEqual(PAIR_A);
  expect(await store().get()).toEqual(PAIR_A);

  expect(await tokens.clear()).toBe(true);
  expect(await tokens.get()).toBeNull();
  expect(await store().get()).toBeNull();
}

/** The lease options of the stores that take them (file, Redis); the others have no lease. */
export interface LockTimings {
  lockTtlMs?: number;
  lockTimeoutMs?: number;
  pollMs?: number;
}

/** A lease that other processes see (a lock file, a Redis key): how a test looks at it and stands in for another owner. */
export interface LeaseRig {
  /** Where the lease is, as the store's errors name it: the lock file's path, the lock key. */
  where(): string;
  /** Who holds the lease (the lock file's content, the key's value), or null when no one does. */
  owner(): Promise<string | null>;
  /** How long the lease has left, where the store keeps that (a key's TTL; a lock file's age is judged by each waiter). */
  ttlLeft?(): Promise<number>;
  /**
   * Writes a lease for `owner` as another process would: one that lives on past the test, or one whose holder was
   * killed, so that nobody extends it and it lapses within half a second (the file store's lock file is aged instead).
   */
  plant(owner: string, holder: 'live' | 'killed'): Promise<void>;
  /** Makes the lease held now lapse, as its holder's stall past the lease would. */
  lapse(): Promise<void>;
}

/** A store with a lock, as the lock contract sees it. */
export interface LockRig {
  /**
   * Opens a holder of the store for the running test: another process's (file, Redis), or, for a lock that lives in
   * one process (memory, a browser tab), the one store object that keepers attached with it share. Leases take
   * `timings`; the other stores ignore them.
   */
  open: (timings?: LockTimings) => TokenStore;
  /**
   * How the lock numbers its grants for fenced writes: a greater fence at every grant (file, Redis); one greater than
   * the last write's (a browser tab); none (memory, whose writes are not fenced).
   */
  fences: 'every grant' | 'past the last write' | 'none';
  /** For a lock held with a lease other processes see. */
  lease?: LeaseRig;
}

/**
 * The lock contract, written once and run against every store with a lock (in the manner of axios-cache-interceptor's
 * `testStorage(name, storage)`): one holder at a time; fences that order the writes; and, for a lease other processes
 * see, that it is extended while held, taken over once its holder is gone, never released for someone else, and that
 * a holder whose lease lapsed is fenced out.
 */
export function testStoreLock(name: string, { open, fences, lease }: LockRig): void {
  describe(`${name}: lock`, () => {
    /** Releases of the locks the test took: run after it, even when it fails half-way. */
    const undo = undoAfterEach();
    const { locked } = undoable(() => undo);
    /** The lease is held, with at most `ttlMs` left where the store keeps that. */
    const expectHeld = async (held: LeaseRig, ttlMs: number): Promise<void> => {
      expect(await held.owner()).toMatch(/./s);
      const left = await held.ttlLeft?.();
      if (left !== undefined) {
        expect(left).toBeGreaterThan(0);
        expect(left).toBeLessThanOrEqual(ttlMs);
      }
    };

    it('lets one holder in at a time: a second is granted once the first releases', async () => {
      const first = open({ lockTtlMs: 5_000 });
      const second = open({ lockTtlMs: 5_000 });
      const a = await locked(first);
      let released = false;
      let releasedWhenGranted: boolean | undefined;

      const waiting = locked(second).then((lock) => {
        releasedWhenGranted = released;
        return lock;
      });
      // Many polls of a leased store's waiter (pollMs 25 to 50) fall in this time; none may take the lock.
      await sleep(300);
      expect(releasedWhenGranted).toBeUndefined();
      released = true;
      await a.release();
      const b = await waiting;
      await b.release();
      const c = await locked(first);
      await c.release();

      expect(releasedWhenGranted).toBe(true);
      if (fences === 'every grant') {
        expect(typeof a.fence).toBe('number');
        expect(b.fence).toBeGreaterThan(a.fence!);
        expect(c.fence).toBeGreaterThan(b.fence!);
      }
    });

    if (fences !== 'none') {
      it('grants a fence greater than that of the last write', async () => {
        const far = Date.now() + 3_600_000;
        expect(await open().set(PAIR_A, far)).toBe(true);

        const lock = await locked(open());

        expect(lock.fence).toBeGreaterThan(far);
      });

      it('always lands an unfenced set() or clear(), and keeps the fence for later fenced writes', async () => {
        const a = open();
        const b = open();
        const lockA = await locked(a);
        expect(await a.set(PAIR_A, lockA.fence)).toBe(true);
        await lockA.release();
        const lockB = await locked(b);
        expect(await b.set(PAIR_B, lockB.fence)).toBe(true);

        expect(await a.set(PAIR_C)).toBe(true);
        expect(await a.get()).toEqual(PAIR_C);
        expect(await a.set(STALE, lockA.fence)).toBe(false);
        expect(await a.get()).toEqual(PAIR_C);

        expect(await a.clear()).toBe(true);
        expect(await a.get()).toBeNull();
        expect(await a.set(PAIR_A)).toBe(true);
        expect(await a.get()).toEqual(PAIR_A);
      });
    }

    if (!lease) return;

    it('holds a lease while locked, and removes it on release', async () => {
      const lock = await locked(open({ lockTtlMs: 5_000 }));
      await expectHeld(lease, 5_000);

      await lock.release();

      expect(await lease.owner()).toBeNull();
    });

    it('takes over the lease of a killed holder once it lapses', async () => {
      await lease.plant('a holder that was killed', 'killed');

      const lock = await locked(open({ lockTtlMs: 1_000, lockTimeoutMs: 5_000 }));

      expect(typeof lock.fence).toBe('number');
      expect(await lease.owner()).not.toBeNull();
      expect(await lease.owner()).not.toBe('a holder that was killed');
      await lock.release();
      expect(await lease.owner()).toBeNull();
    });

    it('gives up on a live foreign lease after lockTimeoutMs, naming the option and the lease, and leaves it', async () => {
      await lease.plant('a live holder', 'live');

      const error = (await open({ lockTtlMs: 1_000, lockTimeoutMs: 300 }).lock!().catch(
        (reason: unknown) => reason,
      )) as Error;

      expect(error).toBeInstanceOf(Error);
      expect(error.message).toContain('`lockTimeoutMs`');
      expect(error.message).toContain(lease.where());
      expect(await lease.owner()).toBe('a live holder');
    });

    it('extends the lease while it is held, so that another holder cannot take it after lockTtlMs', async () => {
      const lock = await locked(open({ lockTtlMs: 1_000 }));
      // Past the first lease: only the extensions keep it alive from here on.
      await sleep(1_000);

      // Another holder tries for a whole lease more: the lease must be extended (every third of it) all that time.
      const error = (await open({ lockTtlMs: 1_000, lockTimeoutMs: 1_000 }).lock!().catch(
        (reason: unknown) => reason,
      )) as Error;

      expect(error).toBeInstanceOf(Error);
      expect(error.message).toContain('`lockTimeoutMs`');
      await expectHeld(lease, 1_000);
      await lock.release();
      expect(await lease.owner()).toBeNull();
    });

    it('release() leaves a lease that another holder took meanwhile (compare and delete)', async () => {
      const lock = await open().lock!();
      // Its lease lapsed and another holder took the lock: the lease is that holder's now.
      await lease.plant('another holder', 'live');

      await lock.release();

      expect(await lease.owner()).toBe('another holder');
    });

    it('refuses a write under a lapsed lock once a later lock was granted, and keeps the later pair', async () => {
      // A's lease is long, so it never extends during the test: the test makes it lapse.
      const a = open({ lockTtlMs: 60_000 });
      const b = open({ lockTtlMs: 1_000, lockTimeoutMs: 5_000 });
      const lockA = await locked(a);
      expect(await a.set(PAIR_A, lockA.fence)).toBe(true);

      await lease.lapse();
      const lockB = await locked(b);
      expect(lockB.fence).toBeGreaterThan(lockA.fence!);
      // Refused from the grant on, before B has written anything.
      expect(await a.set(STALE, lockA.fence)).toBe(false);
      expect(await a.get()).toEqual(PAIR_A);
      expect(await b.set(PAIR_B, lockB.fence)).toBe(true);

      expect(await a.set(STALE, lockA.fence)).toBe(false);
      expect(await a.clear(lockA.fence)).toBe(false);
      expect(await a.get()).toEqual(PAIR_B);
      expect(await b.get()).toEqual(PAIR_B);

      // A's release must not remove B's lock.
      await lockA.release();
      expect(await lease.owner()).not.toBeNull();
    });
  });
}

/**
 * A store's lock and listeners, taken for one test: their release and unsubscribe go on the test's undo list
 * (`undo()` gives the current one), so they are undone even when the test fails.
 */
export function undoable(undo: () => Array<() => unknown>) {
  return {
    locked: async (holder: TokenStore): Promise<TokenStoreLock> => {
      const lock = await holder.lock!();
      undo().push(() => lock.release());
      return lock;
    },
    /** Subscribes a listener that records what it hears. */
    listen: (holder: TokenStore): { heard: Array<TokenPair | null>; stop: () => void } => {
      const heard: Array<TokenPair | null> = [];
      const stop = holder.subscribe!((pair) => heard.push(pair));
      undo().push(stop);
      return { heard, stop };
    },
  };
}
