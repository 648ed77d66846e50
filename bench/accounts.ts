// The scenarios of many accounts on one axios instance (issue 29): a request names its account with the config's
// `account`, and each account is its own client. The peers have no counterpart (one would attach them to an instance
// per account), so these measure this package against itself: many accounts beside one, and what an account costs in
// memory, held or passed through `maxAccounts`. The emulator runs in a process of its own, with a user per account.
import { Agent, globalAgent } from 'node:http';
import { keeperWithAccounts } from './contenders.js';
import { BENCH_USER, benchAccount } from './remote-emulator.js';
import type { RemoteEmulator } from './remote-emulator.js';
import { interleaved, timed, tokenCalls, withEmulator } from './scenarios.js';
import type { Mode, ScenarioResult, Timed } from './scenarios.js';
import { median, percentile, pool, round, show, slope, spread } from './stats.js';
import type { Cell } from './stats.js';

/** A full collection, for memory read with `process.memoryUsage()`; run through `npm run bench` (`--expose-gc`). */
function collector(scenario: string): () => number {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) throw new Error(`The ${scenario} scenario needs \`node --expose-gc\`: run it through \`npm run bench\`.`);
  return () => {
    // Twice: what the first collection frees may keep more alive until the second (weak maps, finalizers).
    gc();
    gc();
    return process.memoryUsage().heapUsed;
  };
}

/** The fewest and the most, as `1` when they are the same and `1–2` when not. */
function range(values: readonly number[]): string {
  const [least, most] = [Math.min(...values), Math.max(...values)];
  return least === most ? String(least) : `${least}–${most}`;
}

const accountsOf = (count: number): string[] => Array.from({ length: count }, (_, i) => benchAccount(i));

/** How many requests of `settled` failed. */
const failures = (settled: ReadonlyArray<PromiseSettledResult<unknown>>): number =>
  settled.filter((result) => result.status === 'rejected').length;

/** Each named account's first request, `inFlight` at a time: a login each. Throws if one fails. */
async function signIn(
  api: Awaited<ReturnType<typeof keeperWithAccounts>>['api'],
  accounts: readonly string[],
  inFlight: number,
): Promise<void> {
  const failed = failures(
    await pool(accounts.length, inFlight, (i) => api.get('/api/items/first', { account: accounts[i] })),
  );
  if (failed > 0) throw new Error(`${failed} of ${accounts.length} accounts could not sign in.`);
}

// ------------------------------------------------------------------------------------------------ 7. accounts burst

/** One burst: its token calls (the emulator's count, and each account's from the plugin's events), and its requests. */
interface Burst {
  calls: number;
  callsPerAccount: number[];
  results: Timed[];
  /** Requests answered for another user than their account's: a token sent for the wrong account. */
  strangers: number;
}

/**
 * Every account's pair refused at once while each has `each` requests in flight, against the same number of requests
 * on the default account alone, interleaved on one instance: whether many single flights cost more than one.
 */
export async function accountsBurst(mode: Mode): Promise<ScenarioResult> {
  const count = mode.quick ? 100 : 1_000;
  const each = 10;
  const total = count * each;
  const runs = mode.quick ? 2 : 3;
  const manyRow = `${count.toLocaleString('en')} accounts, ${each} requests each`;
  const oneRow = `1 account (the default), ${total.toLocaleString('en')} requests`;
  const named = accountsOf(count);
  const measured = await withEmulator({ tokenFormat: 'jwt', accounts: count }, async (emulator) => {
    const { api, auth } = await keeperWithAccounts({ baseURL: emulator.url });
    const calls = new Map<string | undefined, number>();
    for (const event of ['login', 'refresh'] as const)
      auth.on(event, ({ account }) => calls.set(account, (calls.get(account) ?? 0) + 1));
    // Every account holds a pair before the first burst, so that a burst renews rather than logs in, as in 2.
    await signIn(api, named, 16);
    const burst =
      (accountOf: (i: number) => string | undefined, accounts: ReadonlyArray<string | undefined>) =>
      async (): Promise<Burst> => {
        calls.clear();
        const before = await tokenCalls(emulator);
        await emulator.expire();
        let strangers = 0;
        const results = await Promise.all(
          Array.from({ length: total }, (_, i) => {
            const account = accountOf(i);
            return timed(async () => {
              const { data } = await api.get<{ user?: string }>(`/api/items/${i}`, { account });
              if (data.user !== (account ?? BENCH_USER)) strangers += 1;
            });
          }),
        );
        const callsPerAccount = accounts.map((account) => calls.get(account) ?? 0);
        return { calls: (await tokenCalls(emulator)) - before, callsPerAccount, results, strangers };
      };
    // Request i is account i mod count's: every account's requests are spread over the whole burst.
    return interleaved(
      [
        { name: manyRow, go: burst((i) => named[i % count], named) },
        { name: oneRow, go: burst(() => undefined, [undefined]) },
      ],
      runs,
    );
  });
  const p50s = new Map<string, number[]>();
  const rows: ScenarioResult['rows'] = [...measured].map(([entrant, goes]) => {
    const latencies = goes.map(({ results }) => results.map((result) => result.ms));
    const p50 = latencies.map((ms) => percentile(ms, 50));
    p50s.set(entrant.name, p50);
    const p99 = round(median(latencies.map((ms) => percentile(ms, 99))), 0);
    const perAccount = goes.flatMap((go) => go.callsPerAccount);
    const cells: Record<string, Cell> = {
      'token calls': spread(goes.map((go) => go.calls)),
      'token calls per account': range(perAccount),
      failed: spread(goes.map(({ results }) => results.filter((result) => !result.ok).length)),
      'wrong account': spread(goes.map((go) => go.strangers)),
      'p50 / p99 ms': `${show(spread(p50.map((ms) => round(ms, 0))))} / ${p99}`,
    };
    return { contender: entrant.name, cells };
  });
  const many = p50s.get(manyRow)!;
  const one = p50s.get(oneRow)!;
  rows[0]!.cells['p50 vs 1 account'] = spread(many.map((p50, run) => round(p50 / one[run]!, 3)));
  return {
    id: 7,
    title: `Accounts burst: ${count.toLocaleString('en')} accounts with ${each} requests each in flight when every token is refused, beside 1 account with ${total.toLocaleString('en')} (${runs} interleaved runs)`,
    goal: '1 token call per account, 0 failed, p50 within 10% of 1 account',
    columns: ['token calls', 'token calls per account', 'failed', 'wrong account', 'p50 / p99 ms', 'p50 vs 1 account'],
    rows,
    notes: [
      `One instance, one attachment; the emulator has a user per account. Every account holds a pair before the first burst; each burst starts with every access token refused (the 401 of an expiry, as in 2).`,
      `Request i is for account i mod ${count.toLocaleString('en')}. "Token calls per account" is the fewest and the most of any account in any run, from the plugin's events; "token calls" is the emulator's count.`,
      '"Wrong account": answers the emulator gave for another user than the account the request named.',
      `A round not counted, then ${runs} rounds of one burst per row, in an order rotated each round; the heap is collected before each burst. p50 is the median of the runs [smallest–largest]; p99 the median of the runs. "p50 vs 1 account" is the ratio of the two p50s of each round.`,
    ],
  };
}

// ------------------------------------------------------------------------------------------------ 8. accounts held

/** Heap per named account held: accounts logged in, then idle, on a new attachment each run. */
export async function accountsHeld(mode: Mode): Promise<ScenarioResult> {
  const heapUsed = collector('accounts-held');
  const count = mode.quick ? 200 : 1_000;
  const runs = mode.quick ? 2 : 3;
  const named = accountsOf(count);
  const perAccount = await withEmulator({ tokenFormat: 'jwt', accounts: count }, async (emulator) => {
    const measured: number[] = [];
    // A run not counted first: the token client's sockets and the JIT warm up.
    for (let run = -1; run < runs; run += 1) {
      const { api, auth } = await keeperWithAccounts({ baseURL: emulator.url });
      // The instance's sockets, opened before the baseline: they are the instance's, not the accounts'.
      await pool(8, 8, () => api.get('/api/items/warm-up'));
      const before = heapUsed();
      await signIn(api, named, 8);
      const after = heapUsed();
      if (run >= 0) measured.push(round((after - before) / count, 0));
      auth.eject();
      // A keep-alive socket holds the last request it carried, and through its config the attachment: closed now, so
      // that the next run's baseline does not hold this run's accounts.
      (api.defaults.httpAgent as Agent).destroy();
      globalAgent.destroy();
    }
    return measured;
  });
  return {
    id: 8,
    title: `Memory per account held: ${count.toLocaleString('en')} named accounts logged in, then idle (${runs} runs)`,
    goal: 'published: heap per idle account',
    columns: ['heap bytes / account'],
    rows: [{ contender: 'axios-token-keeper', cells: { 'heap bytes / account': spread(perAccount) } }],
    notes: [
      `Each run: a new instance and attachment (default options but the credentials, so a memory store per account), a few requests on the default account, then a request on each of ${count.toLocaleString('en')} named accounts (a login each, JWTs), the heap collected before and after.`,
      'A run not counted first. Between runs the sockets are closed: a keep-alive socket holds the last request it carried, and through it the attachment.',
    ],
  };
}

// ------------------------------------------------------------------------------------------------ 9. accounts cycled

/**
 * Many accounts, each used once, through a small `maxAccounts`: whether an account dropped to make room leaves
 * anything behind. The heap is read after a collection at checkpoints, from the end of the warm-up on.
 */
export async function accountsCycled(mode: Mode): Promise<ScenarioResult> {
  const heapUsed = collector('accounts-cycled');
  const count = mode.quick ? 3_000 : 20_000;
  const warmUp = mode.quick ? 1_000 : 2_000;
  const step = 1_000;
  const maxAccounts = 100;
  const named = accountsOf(count);
  const row = await withEmulator({ tokenFormat: 'jwt', accounts: count }, async (emulator: RemoteEmulator) => {
    const { api, auth } = await keeperWithAccounts({ baseURL: emulator.url }, { maxAccounts });
    let logins = 0;
    auth.on('login', () => (logins += 1));
    let failed = 0;
    const heap: Array<[number, number]> = [];
    const started = await emulator.counters();
    for (let done = 0; done < count; done += step) {
      // 20 in flight, fewer than maxAccounts, so that idle accounts are there to drop.
      const settled = await pool(step, 20, (i) => api.get(`/api/items/${done + i}`, { account: named[done + i] }));
      failed += failures(settled);
      if (done + step >= warmUp) heap.push([done + step, heapUsed()]);
    }
    const ended = await emulator.counters();
    const growth = heap[heap.length - 1]![1] - heap[0]![1];
    return {
      contender: 'axios-token-keeper',
      cells: {
        logins,
        'token calls': ended.tokenCalls - started.tokenCalls,
        failed,
        'heap growth, MB': round(growth / 2 ** 20, 2),
        'bytes / account (slope)': round(slope(heap), 0),
      },
    };
  });
  return {
    id: 9,
    title: `Accounts cycled: ${count.toLocaleString('en')} named accounts, each used once, through maxAccounts: ${maxAccounts}`,
    goal: 'a login each, 0 failed, heap growth under 4 MB from after the warm-up to the end',
    columns: ['logins', 'token calls', 'failed', 'heap growth, MB', 'bytes / account (slope)'],
    rows: [row],
    notes: [
      `One attachment with the default memory store, \`maxAccounts: ${maxAccounts}\`, 20 requests in flight: one request per account (its login, then its data call), in order.`,
      `The heap after a collection every ${step.toLocaleString('en')} accounts, from the ${warmUp.toLocaleString('en')}th (the warm-up's end) on; growth is the last reading less the first, the slope is the least-squares fit of the readings against the accounts used.`,
    ],
  };
}
