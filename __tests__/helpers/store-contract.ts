import type { TokenPair, TokenStore, TokenStoreLock } from '../../lib/index.js';

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

/** Two holders of one shared store, as two processes would have, and how this store's lock lapses. */
export interface FencingRig {
  a: TokenStore;
  b: TokenStore;
  /** Takes the lock of `holder`, to be released after the test. */
  take: (holder: TokenStore) => Promise<TokenStoreLock>;
  /** Makes the lock that A holds lapse, as a stall past its lease would, so that B can take it. */
  lapse: () => Promise<void>;
  /** Whether the store's lock is held (by anyone). */
  lockHeld: () => Promise<boolean>;
}

/** The fencing contract every shared store keeps: a holder whose lock lapsed cannot overwrite the later holder's pair. */
export async function expectLapsedHolderFencedOut({ a, b, take, lapse, lockHeld }: FencingRig): Promise<void> {
  const lockA = await take(a);
  expect(await a.set(PAIR_A, lockA.fence)).toBe(true);

  await lapse();
  const lockB = await take(b);
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
  expect(await lockHeld()).toBe(true);
}

/** And writes without a fence (a store used without its lock) always land, leaving the fence to later fenced writes. */
export async function expectUnfencedWritesLand({ a, b, take }: Pick<FencingRig, 'a' | 'b' | 'take'>): Promise<void> {
  const lockA = await a.lock!();
  expect(await a.set(PAIR_A, lockA.fence)).toBe(true);
  await lockA.release();
  const lockB = await take(b);
  expect(await b.set(PAIR_B, lockB.fence)).toBe(true);

  expect(await a.set(PAIR_C)).toBe(true);
  expect(await a.get()).toEqual(PAIR_C);
  expect(await a.set(STALE, lockA.fence)).toBe(false);
  expect(await a.get()).toEqual(PAIR_C);

  expect(await a.clear()).toBe(true);
  expect(await a.get()).toBeNull();
  expect(await a.set(PAIR_A)).toBe(true);
  expect(await a.get()).toEqual(PAIR_A);
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
