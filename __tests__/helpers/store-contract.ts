import type { AccountRecord, TokenPair, TokenStore, TokenStoreLock } from '../../lib/index.js';
import { undoAfterEach, until } from './flow.js';

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
   * killed, so that nobody extends it and it lapses within a second.
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

      const error = (await open({ lockTtlMs: 1_000, lockTimeoutMs: 1_500 }).lock!().catch(
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

/** An account's record as a holder writes it: a login pause another holder caused, a spent budget, a dead token. */
export function accountRecord(expiresInMs = 3_600_000): AccountRecord {
  const now = Date.now();
  const pause = { until: now + 60_000, rejections: 1, code: 'LOGIN_REJECTED', message: 'refused (HTTP 401).', by: 'a' };
  return {
    version: 1,
    loginPause: pause,
    refusals: {
      uncured: [['GET http://api.test/forbidden', now + 60_000]],
      general: false,
      uncuredRenewals: 0,
      until: 0,
    },
    spent: { login: [now - 1_000], refresh: [now - 2_000, now - 500] },
    cookieRefreshRefused: false,
    refusedRefresh: ['1x2y3z'],
    expiresAt: now + expiresInMs,
  };
}

/**
 * The account-record contract, run against every store that keeps the account's record: none at first; what one
 * holder writes, another reads; and, where the lock fences its holders, a holder whose lock was overtaken cannot
 * overwrite the record of a later one.
 */
export function testAccountRecord(name: string, { open, fences }: Pick<LockRig, 'open' | 'fences'>): void {
  describe(`${name}: the account's record`, () => {
    it('has none at first; what one holder writes, another reads, as it was written', async () => {
      const first = open();
      const second = open();
      expect(await first.getAccount?.()).toBeNull();
      const record = accountRecord();
      expect(await first.setAccount?.(record)).not.toBe(false);
      expect(await second.getAccount?.()).toEqual(record);
      const later = { ...record, loginPause: null, spent: { login: [], refresh: [Date.now()] } };
      expect(await second.setAccount?.(later)).not.toBe(false);
      expect(await first.getAccount?.()).toEqual(later);
    });

    if (fences === 'every grant') {
      it('refuses the write of a holder whose lock a later holder was granted since, and keeps the later record', async () => {
        const first = open();
        const second = open();
        const a = await first.lock!();
        await a.release();
        const b = await second.lock!();
        const kept = accountRecord();
        expect(await second.setAccount?.(kept, b.fence)).toBe(true);
        expect(await first.setAccount?.({ ...kept, loginPause: null }, a.fence)).toBe(false);
        await b.release();
        expect(await first.getAccount?.()).toEqual(kept);
      });
    }
  });
}

/**
 * Account names that try to reach another account's keys, files or channels: a key's separator, a hash tag, a path
 * out of the directory, a lock file's name, an escape that names another name, non-ASCII, the longest name.
 */
export const HOSTILE_NAMES: readonly string[] = [
  ':',
  '{a}',
  'a/b',
  '..',
  '../x',
  'a.lock',
  'a:',
  'a%3A',
  '#',
  '%',
  'a b',
  'pair',
  '}:pair',
  'ünïcødé 🙂',
  'x'.repeat(256),
  `${'x'.repeat(255)}y`,
];

/** A few names that carry every hostile character at once, for the contracts run per account. */
export const CONTRACT_NAMES: readonly string[] = ['tenant:{42}/../a.lock', 'jane doe#%3A@ünï🙂'];

/** How the accounts' contract sees a store that keeps many accounts (its `forAccount`). */
export interface AccountsRig extends Pick<LockRig, 'open' | 'fences'> {
  /** The lease of account `name`'s lock, for a store whose lease other processes see. */
  lease?: (name: string) => LeaseRig;
  /** The store keeps the account's record (`getAccount`, `setAccount`). */
  record: boolean;
  /** The names the lock and record contracts run against. @default CONTRACT_NAMES */
  names?: readonly string[];
  /**
   * Resolves once the store hears `count` accounts' writes, where it starts listening after `subscribe()` returns
   * (Redis confirms a SUBSCRIBE later). @default at once
   */
  listening?: (count: number) => Promise<void>;
  /**
   * The store tells its listeners of other holders' writes (pub/sub, storage events), not only of its own: false for
   * a store that cannot (Redis over REST). @default true
   */
  hearsOtherHolders?: boolean;
}

/**
 * The contracts per account, for a store with `forAccount`: the round trip, the lock and the record of the store of
 * each of a few hostile names, as the store's own; and that the default account and accounts with hostile names never
 * see each other's pair, record, lock or notifications.
 */
export function testStoreAccounts(name: string, rig: AccountsRig): void {
  const { open, fences, lease, record, names = CONTRACT_NAMES, listening, hearsOtherHolders = true } = rig;
  const of = (store: TokenStore, account: string): TokenStore => {
    if (!store.forAccount) throw new Error(`${name} has no forAccount.`);
    return store.forAccount(account);
  };
  for (const account of names) {
    const label = `${name}, account ${JSON.stringify(account)}`;
    describe(label, () => {
      it('gives back the pair set, to itself and another holder, and null after clear()', async () => {
        const tokens = of(open(), account);
        // A store whose writes are not fenced (memory) says nothing; the others say true.
        expect(await tokens.set(PAIR_A)).not.toBe(false);
        expect(await tokens.get()).toEqual(PAIR_A);
        expect(await of(open(), account).get()).toEqual(PAIR_A);
        expect(await tokens.clear()).not.toBe(false);
        expect(await of(open(), account).get()).toBeNull();
      });
    });
    testStoreLock(label, {
      open: (timings) => of(open(timings), account),
      fences,
      ...(lease && { lease: lease(account) }),
    });
    if (record) testAccountRecord(label, { open: () => of(open(), account), fences });
  }

  describe(`${name}: accounts apart`, () => {
    const undo = undoAfterEach();
    const { locked, listen } = undoable(() => undo);
    /** The default account (undefined) and every hostile name, each with a pair of its own. */
    const accounts: Array<string | undefined> = [undefined, ...HOSTILE_NAMES];
    const pairOf = (index: number): TokenPair => ({ access: `access-${index}`, refresh: `refresh-${index}` });
    const storeOf = (holder: TokenStore, account: string | undefined) =>
      account === undefined ? holder : of(holder, account);

    it('keeps a pair per account: each reads its own, and a clear drops one account’s alone', async () => {
      const writer = open();
      const reader = open();
      for (const [index, account] of accounts.entries()) await storeOf(writer, account).set(pairOf(index));

      for (const [index, account] of accounts.entries())
        expect(await storeOf(reader, account).get()).toEqual(pairOf(index));
      await storeOf(writer, 'a:').clear();
      for (const [index, account] of accounts.entries())
        expect(await storeOf(reader, account).get()).toEqual(account === 'a:' ? null : pairOf(index));
    });

    if (record) {
      it('keeps a record per account: each reads its own', async () => {
        const writer = open();
        const reader = open();
        for (const [index, account] of accounts.entries())
          await storeOf(writer, account).setAccount!({ ...accountRecord(), refusedRefresh: [`fingerprint-${index}`] });

        for (const [index, account] of accounts.entries())
          expect((await storeOf(reader, account).getAccount!())?.refusedRefresh).toEqual([`fingerprint-${index}`]);
      });
    }

    it('keeps a lock per account: one account’s held lock keeps no other account waiting', async () => {
      const held = await locked(of(open(), 'a:'));
      const others = open({ lockTimeoutMs: 5_000 });

      for (const account of accounts.filter((each) => each !== 'a:'))
        await (await locked(storeOf(others, account))).release();
      if (fences === 'every grant') expect(typeof held.fence).toBe('number');
    });

    it('tells each account’s listeners of that account’s writes alone', async () => {
      const writer = open();
      const writers = accounts.map((account) => storeOf(writer, account));
      // A store that hears only its own writes is listened to on the very store objects that write.
      const reader = hearsOtherHolders ? open() : undefined;
      const readers = reader ? accounts.map((account) => storeOf(reader, account)) : writers;
      const heard = readers.map((store) => listen(store).heard);
      await listening?.(accounts.length);

      for (const [index, store] of writers.entries()) {
        await store.set(pairOf(index));
        // Its own listener hears it; a notification of another account's would come before, on the same path.
        await until(() => heard[index]!.length >= 1);
      }

      expect(heard).toEqual(accounts.map((_, index) => [pairOf(index)]));
    });
  });
}
