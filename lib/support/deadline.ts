// The one way the plugin waits for something with a limit: a promise raced against a deadline, an abort, or both.
// Stores and core use it alike; it imports nothing.

/** What {@link settle} gives when the deadline passed before the promise settled. */
export const TIMED_OUT: unique symbol = Symbol('timed out');
/** What {@link settle} gives when the signal aborted before the promise settled. */
export const ABORTED: unique symbol = Symbol('aborted');

/** An abort signal as axios types it (`GenericAbortSignal`) or the DOM's: only what the race needs. */
export interface AbortSignalLike {
  readonly aborted: boolean;
  addEventListener?: (type: 'abort', listener: () => void, options?: { once?: boolean }) => void;
  removeEventListener?: (type: 'abort', listener: () => void) => void;
}

/**
 * `promise`'s value, or {@link TIMED_OUT} once `ms` have passed, or {@link ABORTED} once `signal` aborts (at once if
 * it already has): whichever comes first. A rejection of `promise` that comes first is thrown; one that comes later is
 * handled, so that a call left to finish on its own cannot become an unhandled rejection.
 */
export async function settle<T>(
  promise: Promise<T>,
  { ms = Infinity, signal }: { ms?: number; signal?: AbortSignalLike | undefined } = {},
): Promise<T | typeof TIMED_OUT | typeof ABORTED> {
  if (ms === Infinity && !signal) return promise;
  promise.catch(() => undefined);
  if (signal?.aborted) return ABORTED;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let onAbort: (() => void) | undefined;
  const late = new Promise<typeof TIMED_OUT | typeof ABORTED>((resolve) => {
    if (ms !== Infinity) timer = setTimeout(() => resolve(TIMED_OUT), Math.max(0, ms));
    onAbort = () => resolve(ABORTED);
    signal?.addEventListener?.('abort', onAbort, { once: true });
  });
  try {
    return await Promise.race([promise, late]);
  } finally {
    clearTimeout(timer);
    if (onAbort) signal?.removeEventListener?.('abort', onAbort);
  }
}

/**
 * The name of the error of a store call or lock try that got no answer in time: the store stopped answering, which
 * the plugin tells from a busy lock (it calls such a store no more in the same renewal).
 */
export const UNANSWERED = 'TokenStoreUnansweredError';

/** An error named {@link UNANSWERED}. */
export function unanswered(message: string): Error {
  const error = new Error(message);
  error.name = UNANSWERED;
  return error;
}
