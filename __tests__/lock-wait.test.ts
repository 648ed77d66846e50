// How a shared store waits for its lock (stores/common/lease.ts `acquire`), with tries played by the test: a busy lock is
// waited for up to `lockTimeoutMs`, a try that gets no answer is a silent store, an aborted wait stops trying, and a
// release heard while a try was on its way is not lost. The stores run it against a real Redis and real files in
// their own suites.
import { UNANSWERED } from '../lib/support/deadline.js';
import { acquire, Wakeup } from '../lib/stores/common/lease.js';
import type { Attempt } from '../lib/stores/common/lease.js';
import { until } from './helpers/flow.js';

const GRANT = { fence: 7 };

function timing(overrides: Partial<Parameters<typeof acquire<typeof GRANT>>[1]> = {}) {
  const abandoned: (typeof GRANT)[] = [];
  return {
    abandoned,
    options: {
      lockTimeoutMs: 60_000,
      pollMs: 10,
      wakeup: new Wakeup(),
      what: 'The test lock',
      abandon: (granted: typeof GRANT) => abandoned.push(granted),
      ...overrides,
    },
  };
}

/** A try that answers `value` once `release()` is called, or never. */
function pending<T>(): { promise: Promise<T>; answer(value: T): void } {
  let answer!: (value: T) => void;
  const promise = new Promise<T>((resolve) => (answer = resolve));
  return { promise, answer };
}

const busy = (): Promise<Attempt<typeof GRANT>> => Promise.resolve({ retryInMs: 10_000 });

it('tells a silent store from a busy lock: a try with no answer within tryTimeoutMs rejects at once, and a late grant is released', async () => {
  const silent = pending<Attempt<typeof GRANT>>();
  const { options, abandoned } = timing({ request: { tryTimeoutMs: 50 } });
  const started = Date.now();

  const error = (await acquire(() => silent.promise, options).catch((e: unknown) => e)) as Error;

  expect(Date.now() - started).toBeLessThan(5_000);
  expect(error.name).toBe(UNANSWERED);
  expect(error.message).toBe(
    "The test lock got no answer to a try within 50 ms (the plugin's `storeTimeoutMs`): the store stopped answering; the lock was not found busy.",
  );
  silent.answer({ granted: GRANT });
  await new Promise((resolve) => setImmediate(resolve));
  expect(abandoned).toEqual([GRANT]);
});

it('waits for a busy lock up to lockTimeoutMs, and then says it was held, not silent', async () => {
  let tries = 0;
  const { options } = timing({ lockTimeoutMs: 100, request: { tryTimeoutMs: 1_000 } });

  // Each refused try takes a few milliseconds, as a real store's does: the one under way at the deadline is cut
  // short by it, which is still a busy lock.
  const error = (await acquire(async () => {
    tries += 1;
    await new Promise((resolve) => setTimeout(resolve, 3));
    return busy();
  }, options).catch((e: unknown) => e)) as Error;

  expect(error.message).toBe('The test lock was still held by another process after 100 ms (`lockTimeoutMs`).');
  expect(error.name).not.toBe(UNANSWERED);
  expect(tries).toBeGreaterThan(1);
});

it('stops trying once the signal aborts, rejecting with its reason; a grant answered after it is released', async () => {
  const controller = new AbortController();
  const last = pending<Attempt<typeof GRANT>>();
  let tries = 0;
  const { options, abandoned } = timing({ request: { signal: controller.signal } });
  const waiting = acquire(() => ((tries += 1) === 3 ? last.promise : busy()), options);

  await until(() => tries === 3);
  controller.abort(new Error('a newer pair arrived'));
  last.answer({ granted: GRANT });

  await expect(waiting).rejects.toThrow('a newer pair arrived');
  await until(() => abandoned.length === 1);
  expect(tries).toBe(3);
  expect(abandoned).toEqual([GRANT]);
});

it('hears a release that came while a try was on its way, instead of sleeping out a poll', async () => {
  const wakeup = new Wakeup();
  const first = pending<Attempt<typeof GRANT>>();
  let tries = 0;
  // A poll far longer than the test: only the wake can bring the second try in time.
  const { options } = timing({ pollMs: 60_000, wakeup });
  const waiting = acquire(() => {
    tries += 1;
    return tries === 1 ? first.promise : Promise.resolve({ granted: GRANT });
  }, options);

  await new Promise((resolve) => setImmediate(resolve));
  wakeup.wake();
  first.answer({ retryInMs: 60_000 });

  await expect(waiting).resolves.toMatchObject({ granted: GRANT });
  expect(tries).toBe(2);
});
