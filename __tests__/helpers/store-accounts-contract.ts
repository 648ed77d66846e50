// The contracts per account, run against every store with `forAccount`: each account's own round trip, lock and
// record, for a few hostile names, and every account apart from the others.
import type { TokenPair, TokenStore } from '../../lib/index.js';
import { undoAfterEach, until } from './flow.js';
import { PAIR_A, testStoreLock, undoable } from './store-lock-contract.js';
import type { LeaseRig, LockRig } from './store-lock-contract.js';
import { accountRecord, testAccountRecord } from './store-record-contract.js';

/**
 * Account names made of what a store's keys and files give a meaning to: a key's separator, a hash tag, a path out of
 * the directory, a lock file's name, an escape that names another name.
 */
export const SEPARATOR_NAMES: readonly string[] = [':', '{a}', 'a/b', '..', '../x', 'a.lock', 'a:', 'a%3A', '#', '%'];

/**
 * Account names that try to reach another account's keys, files or channels: the {@link SEPARATOR_NAMES}, non-ASCII,
 * the longest name.
 */
export const HOSTILE_NAMES: readonly string[] = [
  ...SEPARATOR_NAMES,
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
