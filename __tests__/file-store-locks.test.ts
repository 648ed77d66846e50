// The FileTokenStore's lock on a real file system: the lock contract (helpers/store-lock-contract.ts) with its lease in
// the lock file, fences that grow within one millisecond, and the record contract. Two stores on one path stand in for
// two processes of a host: they share nothing but the files.
import { fileStoreForFile, leaseAt } from './helpers/file-store.js';
import { testAccountRecord, testStoreLock } from './helpers/store-contract.js';

const { lockFile, store } = fileStoreForFile();

testStoreLock('FileTokenStore', {
  open: (timings) => store(timings),
  fences: 'every grant',
  lease: leaseAt(lockFile),
});

describe('FileTokenStore: fences', () => {
  // Two grants in one millisecond with no write between them happen on a fast machine (lock, release, lock), and a
  // clock may step back (NTP, a resumed VM): a fence taken from the clock would repeat. A frozen clock makes it certain.
  it('grants each lock a greater fence than the last, even within one millisecond', async () => {
    jest.useFakeTimers({
      now: Date.now(),
      doNotFake: [
        'hrtime',
        'nextTick',
        'performance',
        'queueMicrotask',
        'setImmediate',
        'clearImmediate',
        'setInterval',
        'clearInterval',
        'setTimeout',
        'clearTimeout',
      ],
    });
    try {
      const first = await store().lock();
      await first.release();
      const second = await store().lock();
      await second.release();

      expect(second.fence).toBeGreaterThan(first.fence!);
    } finally {
      jest.useRealTimers();
    }
  });
});

testAccountRecord('FileTokenStore', { open: () => store(), fences: 'every grant' });
