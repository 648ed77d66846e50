// The lock contract (helpers/store-contract.ts) over the stores whose lock lives in one process: MemoryTokenStore,
// and BrowserTokenStore in Node, which has neither Web Locks nor localStorage, so that it takes turns within one tab
// ('tab'). Every keeper attached with one store object is a holder. The file and Redis stores run the contract in
// their own files, beside the files and the redis-server they need; the browser store's Web Locks and lease run in
// Chromium (browser.test.ts).
import { MemoryTokenStore } from 'axios-token-keeper';
import { BrowserTokenStore } from 'axios-token-keeper/browser-store';
import { testAccountRecord, testStoreLock } from './helpers/store-contract.js';

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
