// Availability first, by choice (`whenStoreDown: 'go-alone'`): a fleet whose store is down serves every request, each
// holder with a pair of its own, but not as one burst of logins, and never with a spent refresh token. Real processes
// (harness/fleet-worker.ts) share one account through one real redis-server, which stops answering (SIGSTOP) or dies
// (SIGKILL, then starts again empty) as the tokens expire. Without redis-server this file fails here, once, with the
// command that installs it. The scenarios mostly wait, and run at once, each on a redis-server and a token service of
// its own.
import { keepEachBursting, sumBursts } from '../harness/fleet.js';
import type { FleetEvent, RedisClientSettings } from '../harness/fleet.js';
import { requireRedisServer, subscriptions, withConnection } from '../harness/redis-server.js';
import { until } from './helpers/flow.js';
import { inOwnOutageRig, pausedWhileBursting, spentSent, warmFleet, warningsOf } from './helpers/outage.js';

requireRedisServer();

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** A client that fails fast while Redis is down, and is back soon after: see redis-restart.test.ts. */
const FAIL_FAST: RedisClientSettings = { maxRetriesPerRequest: 1, maxReconnectDelayMs: 200 };

describe("with `whenStoreDown: 'go-alone'`, a fleet whose Redis is down as the tokens expire", () => {
  it.concurrent(
    '10 processes, Redis paused for 3 s, shorter than the wait before going alone: one token call for all, no login',
    () =>
      inOwnOutageRig(async (rig) => {
        const { server, service, fleets } = rig;
        const { fleet } = await warmFleet(fleets, server, service, 10, { whenStoreDown: 'go-alone' });
        const callsBefore = service.counters.tokenCalls;

        const total = sumBursts((await pausedWhileBursting(rig, fleet, { ms: 3_000, burst: 5 })).replies);

        expect(total.errors).toEqual([]);
        expect(service.counters.tokenCalls - callsBefore).toBe(1);
        expect(service.counters).toMatchObject({ logins: 1, refreshes: 1, rejected: 0 });
        expect(spentSent(service)).toBe(0);
      }),
    90_000,
  );

  it.concurrent(
    '10 processes, Redis paused for 30 s: one login per process at most, none before a third of `storeOutageWaitMs`, spread over the rest of it, no request failed, no refresh token sent',
    () =>
      inOwnOutageRig(async (rig) => {
        const { server, service, fleets } = rig;
        // Tries at the store every second or so (each bounded by `storeTimeoutMs`), so that each process goes alone close
        // to the end of its own wait, not at the end of a 5 s try.
        const storeTimeoutMs = 1_000;
        const waitMs = 15_000;
        const { fleet } = await warmFleet(fleets, server, service, 10, {
          whenStoreDown: 'go-alone',
          storeOutageWaitMs: waitMs,
          storeTimeoutMs,
        });
        const outage = await pausedWhileBursting(rig, fleet, { ms: 30_000, burst: 5 });
        const { pausedAt, tokenCallsInOutage: callsInOutage } = outage;
        const total = sumBursts(outage.replies);

        const logins = fleet.workers.flatMap((worker) =>
          worker.events.filter((event: FleetEvent) => event.name === 'login' && event.at > pausedAt).map((e) => e.at),
        );
        expect(total.errors).toEqual([]);
        expect(total.failed).toBe(0);
        expect(callsInOutage).toBe(10);
        expect(logins).toHaveLength(10);
        expect(service.counters).toMatchObject({ logins: 1 + 10, refreshes: 0, rejected: 0 });
        // None before a third of the wait, counted from its first try at the store, had passed.
        expect(Math.min(...logins) - pausedAt).toBeGreaterThanOrEqual(waitMs / 3);
        // Spread: the ten logins, each at its own random point in the rest of the wait, do not come as one burst (ten
        // uniform draws over 10 s fall within 2 s of each other once in 200,000 runs).
        expect(Math.max(...logins) - Math.min(...logins)).toBeGreaterThan(2_000);
        expect(warningsOf(fleet, pausedAt).map((codes) => codes.sort())).toEqual(
          Array(10).fill(['STORE_LOCK_MISSED', 'STORE_UNAVAILABLE']),
        );
        expect(spentSent(service)).toBe(0);
      }),
    120_000,
  );

  it.concurrent.each([
    ['stops answering (SIGSTOP) for 12 s', 'pause'],
    ['dies (SIGKILL) and comes back empty 12 s later', 'kill'],
  ] as const)(
    '4 processes, Redis %s: sends no spent refresh token and fails no request: one login per process at most, its own refresh token at the next expiry, then one pair again',
    (_, outage) =>
      inOwnOutageRig(async ({ server, service, fleets }) => {
        // Token calls and logins time out at 3 s; store calls, and each try at the lock, at a third of it. Each process
        // goes alone within 1 to 3 s of its first failed try, well inside the first half of the outage.
        const { fleet, prefix } = await warmFleet(fleets, server, service, 4, {
          whenStoreDown: 'go-alone',
          storeOutageWaitMs: 3_000,
          tokenTimeoutMs: 3_000,
          client: FAIL_FAST,
        });
        const key = `{${prefix}}:pair`;

        if (outage === 'pause') server.pause();
        else await server.kill();
        const from = Date.now();
        service.expireAccessTokens();
        const during = keepEachBursting(fleet, 10);
        // Pacing, not waiting for something: a second expiry inside the outage, which each process meets with the pair
        // it got alone, renewed with its own refresh token, not with another login.
        await sleep(6_000);
        service.expireAccessTokens();
        await sleep(6_000);
        if (outage === 'pause') server.resume();
        else await server.restart();
        await until(async () => (await subscriptions(server.port, `{${prefix}}*`)) === 4, 10_000);
        const around = await during.stop();
        const inOutage = { ...service.counters };

        // Redis answers again: the next expiry brings every process back on one pair, with one token call.
        service.expireAccessTokens();
        const after = await fleet.burst(10);
        await until(async () => (await withConnection(server.port, (client) => client.get(key))) !== null, 5_000);
        const record = JSON.parse((await withConnection(server.port, (client) => client.get(key)))!) as {
          pair: { access: string };
        };
        await Promise.all(fleet.workers.map((_w, i) => fleet.burst(3, { only: [i], path: `/check/${i}` })));
        const onStoredPair = fleet.workers.map((_w, i) =>
          service.calls
            .filter((call) => call.path.startsWith(`/check/${i}/`))
            .every((call) => call.authorization === `Bearer ${record.pair.access}`),
        );

        const total = sumBursts([...around, ...after]);
        expect(total.errors).toEqual([]);
        expect(total.failed).toBe(0);
        expect(around.length).toBeGreaterThanOrEqual(4);
        expect(spentSent(service)).toBe(0);
        expect(service.counters.rejected).toBe(0);
        // Each process logged in once in the outage, then renewed its own pair with its own refresh token.
        expect(inOutage.logins).toBe(1 + 4);
        expect(inOutage.refreshes).toBe(4);
        // Each said once that the store was down, and once that it went on alone.
        expect(warningsOf(fleet, from).map((codes) => codes.sort())).toEqual(
          Array(4).fill(['STORE_LOCK_MISSED', 'STORE_UNAVAILABLE']),
        );
        // Back on one pair: one token call for the expiry after the outage, no login.
        expect(service.counters.logins).toBe(1 + 4);
        expect(service.counters.refreshes).toBe(4 + 1);
        expect(onStoredPair).toEqual([true, true, true, true]);
      }),
    90_000,
  );
});
