// A fleet is one client while its store is down, by default (`whenStoreDown: 'wait'`): no holder generates a token
// without the store's word. Real processes (harness/fleet-worker.ts) share one account through one real redis-server,
// which stops answering (SIGSTOP, as a paused VM or a partition without resets) as the tokens expire. Default options
// throughout: the plugin's (`storeTimeoutMs` 5 s, `storeOutageWaitMs` 15 s) and the harness's ioredis client. Without
// redis-server this file fails here, once, with the command that installs it. The scenarios mostly wait, and run at
// once, each on a redis-server and a token service of its own.
import { sumBursts } from '../harness/fleet.js';
import type { BurstReply } from '../harness/fleet.js';
import { requireRedisServer } from '../harness/redis-server.js';
import { inOwnOutageRig, pausedWhileBursting, spentSent, warmFleet, warningsOf } from './helpers/outage.js';

requireRedisServer();

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** The plugin's default `storeTimeoutMs`: 5 s, a third of the default `tokenTimeoutMs`. */
const STORE_TIMEOUT_MS = 5_000;

describe('a fleet whose Redis is down as its tokens expire, by default', () => {
  it.concurrent(
    '4 processes, Redis paused for 12 s: no token generated during the outage, then one token call for all, no request failed, no refresh token sent twice',
    () =>
      inOwnOutageRig(async (rig) => {
        const { server, service, fleets } = rig;
        const { fleet } = await warmFleet(fleets, server, service, 4);
        const callsBefore = service.counters.tokenCalls;

        const outage = await pausedWhileBursting(rig, fleet, { ms: 12_000, burst: 10 });
        const { pausedAt: from, tokenCallsInOutage: callsInOutage } = outage;
        const total = sumBursts(outage.replies);
        await Promise.all(fleet.workers.map((_w, i) => fleet.burst(3, { only: [i] })));

        expect(total.errors).toEqual([]);
        expect(total.failed).toBe(0);
        expect(total.ok).toBeGreaterThanOrEqual(40);
        expect(callsInOutage).toBe(0);
        // One token call, after the store answered, served the fleet: one refresh, the login of the start, nothing else.
        expect(service.counters.tokenCalls - callsBefore).toBe(1);
        expect(service.counters).toMatchObject({ logins: 1, refreshes: 1, rejected: 0 });
        expect(spentSent(service)).toBe(0);
        // Each said once that the store was down, and that it waits for it.
        expect(warningsOf(fleet, from)).toEqual([
          ['STORE_UNAVAILABLE'],
          ['STORE_UNAVAILABLE'],
          ['STORE_UNAVAILABLE'],
          ['STORE_UNAVAILABLE'],
        ]);
      }),
    90_000,
  );

  it.concurrent(
    '4 processes, Redis paused for 30 s, requests with a `timeout` of 5 s: each fails with STORE_UNAVAILABLE within its timeout and one `storeTimeoutMs`, nothing reaches the token service until the store answers, then one token call serves all',
    () =>
      inOwnOutageRig(async (rig) => {
        const { server, service, fleets } = rig;
        const { fleet } = await warmFleet(fleets, server, service, 4);
        const callsBefore = service.counters.tokenCalls;
        const timeout = 5_000;

        const outage = await pausedWhileBursting(rig, fleet, { ms: 30_000, burst: 10, requestTimeoutMs: timeout });
        const { pausedAt, resumedAt, replies, tokenCallsInOutage: callsInOutage } = outage;
        const after = sumBursts(await fleet.burst(10));

        // The bursts that began and ended in the outage: every request of them failed, saying the store is down, in time.
        const inOutage = sumBursts(
          replies.filter((reply) => reply.finishedAt < resumedAt && reply.startedAt >= pausedAt),
        );
        expect(inOutage.failed).toBeGreaterThanOrEqual(4 * 10 * 3);
        expect(inOutage.ok).toBe(0);
        expect(inOutage.errors.filter((error) => !error.startsWith('STORE_UNAVAILABLE: '))).toEqual([]);
        // A bound, not a speed: no request waited past its own timeout and one try at the store.
        expect(inOutage.slowestMs).toBeLessThan(timeout + STORE_TIMEOUT_MS + 1_000);
        expect(callsInOutage).toBe(0);
        // Once Redis answers, one token call serves the fleet.
        expect(after.failed).toBe(0);
        expect(service.counters.tokenCalls - callsBefore).toBe(1);
        expect(service.counters).toMatchObject({ logins: 1, refreshes: 1, rejected: 0 });
      }),
    120_000,
  );

  it.concurrent(
    '4 processes, Redis paused for good as the tokens expire: each holder sends the refused token once, and its later requests fail unsent, with no token call',
    () =>
      inOwnOutageRig(async ({ server, service, fleets }) => {
        const { fleet } = await warmFleet(fleets, server, service, 4);
        const callsBefore = service.counters.tokenCalls;
        const seen = service.calls.length;

        server.pause();
        service.expireAccessTokens();
        // Each holder requests on a path of its own, so that the service's log tells whose the 401s were: one request
        // first, which the API refuses, then bursts while the renewal for it waits for the store, and fails.
        let running = true;
        const loops = fleet.workers.map(async (worker, i) => {
          const path = `/api/holder-${i}`;
          const replies: BurstReply[] = [await worker.burst(1, { path })];
          while (running) replies.push(await worker.burst(10, { path }));
          return replies;
        });
        // Pacing, not waiting for something: past two outage waits (`storeOutageWaitMs`, 15 s), each failed.
        await sleep(35_000);
        running = false;
        const total = sumBursts((await Promise.all(loops)).flat());
        server.resume();

        const refusals = fleet.workers.map(
          (_worker, i) =>
            service.calls
              .slice(seen)
              .filter((call) => call.route === 'data' && call.path.startsWith(`/api/holder-${i}/`) && !call.user)
              .length,
        );
        // Once refused, a token is sent no more while its renewal fails: the later requests waited for one, and failed.
        expect(refusals).toEqual([1, 1, 1, 1]);
        expect(total.ok).toBe(0);
        expect(total.failed).toBeGreaterThanOrEqual(4 * (1 + 10));
        expect(total.errors.filter((error) => !error.startsWith('STORE_UNAVAILABLE: '))).toEqual([]);
        expect(service.counters.tokenCalls - callsBefore).toBe(0);
      }),
    90_000,
  );
});
