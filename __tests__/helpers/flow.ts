// Helpers for driving requests and time; free of nock, so end-to-end suites can use them over real HTTP.

/** Fires `n` calls at once and waits for all of them. */
export async function burst<T>(n: number, call: (index: number) => Promise<T>): Promise<PromiseSettledResult<T>[]> {
  return Promise.allSettled(Array.from({ length: n }, (_, index) => call(index)));
}

export function fulfilled<T>(results: PromiseSettledResult<T>[]): number {
  return results.filter((result) => result.status === 'fulfilled').length;
}

/** A clock the test moves by hand. */
export function manualClock(start = Date.parse('2026-01-01T00:00:00Z')): {
  now: () => number;
  advance: (ms: number) => void;
} {
  let time = start;
  return { now: () => time, advance: (ms) => void (time += ms) };
}

/**
 * Waits until `condition` holds (it may be async), checking every few milliseconds; fails after `timeoutMs`, which
 * only a failing test reaches: it is generous, so that a busy machine never fails a test that waits here.
 */
export async function until(condition: () => boolean | Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
}

/**
 * The test's undo list, for what a test takes (connections, locks, subscriptions, plugin handles, folders): each step
 * pushed runs after the test, newest first, even when the test failed half-way. Call it where its `afterEach` belongs.
 */
export function undoAfterEach(): Array<() => unknown> {
  const undo: Array<() => unknown> = [];
  afterEach(async () => {
    for (const step of undo.splice(0).reverse()) await step();
  });
  return undo;
}
