// The lock contract (helpers/store-contract.ts) over the stores whose lock lives in one process: MemoryTokenStore,
// and BrowserTokenStore in Node, which has neither Web Locks nor localStorage, so that it takes turns within one tab
// ('tab'). Every keeper attached with one store object is a holder. The file and Redis stores run the contract in
// their own files, beside the files and the redis-server they need; the browser store's Web Locks and lease run in
// Chromium (browser.test.ts).
import { MemoryTokenStore } from 'axios-token-keeper';
import { BrowserTokenStore } from 'axios-token-keeper/browser-store';
import { testAccountRecord, testStoreAccounts, testStoreLock } from './helpers/store-contract.js';

let memory: MemoryTokenStore;
let tab: BrowserTokenStore;
let serial = 0;

beforeEach(() => {
  memory = new MemoryTokenStore();
  serial += 1;
  tab = new BrowserTokenStore({ key: `store-locks-${serial}`, storage: 'none' });
  // The contract below is that of a tab's own lock: fail, rather than test another mode under its name.
  if (tab.locking !== 'tab') throw new Error(`BrowserTokenStore locks with '${tab.locking}' here, not 'tab'.`);
});

afterEach(() => {
  tab.close();
});

testStoreLock('MemoryTokenStore', { open: () => memory, fences: 'none' });

testStoreLock("BrowserTokenStore, 'tab'", { open: () => tab, fences: 'past the last write' });

testAccountRecord('MemoryTokenStore', { open: () => memory, fences: 'none' });
testAccountRecord("BrowserTokenStore, 'tab'", { open: () => tab, fences: 'past the last write' });

// Each account's store (forAccount) as the store itself, and the accounts apart.
testStoreAccounts('MemoryTokenStore', { open: () => memory, fences: 'none', record: true });
testStoreAccounts("BrowserTokenStore, 'tab'", { open: () => tab, fences: 'past the last write', record: true });

// Beyond the contract, which stores shared across processes keep too: a lock within one process is fair, and a
// holder's release cannot end another holder's turn (both as async-mutex's Mutex, which these stores used before).
describe.each([
  ['MemoryTokenStore', () => memory],
  ["BrowserTokenStore, 'tab'", () => tab],
] as Array<[string, () => MemoryTokenStore | BrowserTokenStore]>)('%s: lock within the process', (_name, open) => {
  /** Lets every promise settle that can settle now (timers aside). */
  const settled = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

  it('grants the waiters in the order they asked, and a second release of a turn frees nobody', async () => {
    const store = open();
    const first = await store.lock();
    const granted: number[] = [];
    const waiting = [1, 2, 3].map((n) =>
      store.lock().then((lock) => {
        granted.push(n);
        return lock;
      }),
    );
    await settled();
    expect(granted).toEqual([]);

    await first.release();
    const second = await waiting[0]!;
    await first.release();
    await settled();
    expect(granted).toEqual([1]);

    await second.release();
    const third = await waiting[1]!;
    await settled();
    expect(granted).toEqual([1, 2]);
    await third.release();
    await (await waiting[2]!).release();
    expect(granted).toEqual([1, 2, 3]);
  });
});
