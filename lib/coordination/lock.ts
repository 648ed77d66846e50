// The store's lock as one turn takes it: granted, or missed (with the store's error), or given up on when a newer pair
// ends the wait; a lock granted after its wait was given up is released, and `flush()` waits for that release.
import { ABORTED, settle } from '../support/deadline.js';
import type { TokenStoreLock } from '../contract/store.js';
import type { CheckedStore } from '../account/checked-store.js';
import { isUnanswered, noop } from './calls.js';
import type { StoreCalls } from './calls.js';
import { missed, NO_LOCK } from './turn.js';
import type { HeldLock } from './turn.js';

/** What a turn takes the lock with. */
export interface LockTry {
  readonly checked: CheckedStore;
  readonly calls: StoreCalls;
  /** The plugin's `storeTimeoutMs`: how long one try may take, and a late release. */
  readonly timeoutMs: number;
  /** Aborts once the lock is no longer needed (another holder's newer pair arrived). */
  readonly signal: AbortSignal | undefined;
  /** Hears that a try got no answer: the store is failing already. */
  readonly unanswered: () => void;
  /** Takes the release of a lock granted late, for `flush()` to wait for. */
  readonly settling: (release: Promise<unknown>) => void;
}

/**
 * The store's lock, or one that holds nothing when the store has none or could not grant it (then with the store's
 * error). Once `signal` aborts, the wait ends at once with no lock, and a lock granted late is released (bounded by
 * `storeTimeoutMs`). Its release reports a failure like any call.
 */
export async function takeLock({
  checked,
  calls,
  timeoutMs,
  signal,
  unanswered,
  settling,
}: LockTry): Promise<HeldLock> {
  if (!checked.locks || signal?.aborted) return NO_LOCK;
  const locking = Promise.resolve().then(() => checked.store.lock!({ signal, tryTimeoutMs: timeoutMs }));
  let cause: unknown;
  // A store that stops waiting when the signal aborts rejects then: that is no failure, and is not waited for.
  const granted = await calls.make(() => settle(locking, { signal }), {
    bounded: false,
    failed: (error, masked) => {
      cause = masked;
      if (isUnanswered(error)) unanswered();
    },
  });
  const release = (lock: TokenStoreLock) => calls.make(() => lock.release()).then(noop);
  // Every symbol is no lock: FAILED, SILENT, ABORTED or TIMED_OUT.
  if (typeof granted === 'symbol' || !granted || signal?.aborted) {
    // Granted after the wait was given up: nobody would release it. A process that flushes and exits leaves no lock.
    settling(
      settle(
        locking.then((late) => late && release(late), noop),
        { ms: timeoutMs },
      ),
    );
    // A wait that a newer pair ended needs no lock; any other end is a lock missed.
    return granted === ABORTED || signal?.aborted ? NO_LOCK : missed(cause);
  }
  return {
    fence: granted.fence,
    leaseLeftMs: granted.leaseLeftMs && (() => granted.leaseLeftMs!()),
    release: () => release(granted),
  };
}
