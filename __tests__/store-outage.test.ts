// A shared store that stops answering costs no spent refresh token. 4 real processes (harness/fleet-worker.ts) share
// one account through one real redis-server, which stops answering (SIGSTOP, as a paused VM or a partition without
// resets) or dies (SIGKILL, then started again empty) for 12 s as the tokens expire. No process sends the refresh
// token the fleet shares without the store's lock: each gets a pair of its own (one login), renews it with its own
// refresh token at the next expiry, and the fleet is one client again, on one pair, once Redis answers. Without
// redis-server this file fails here, once, with the command that installs it.
import { randomUUID } from 'node:crypto';
import { FleetPool, keepEachBursting, sumBursts } from '../harness/fleet.js';
import type { FleetEvent, RedisClientSettings } from '../harness/fleet.js';
import { subscriptions, withConnection } from '../harness/redis-server.js';
import type { TokenServiceEmulator } from '../lib/emulator/index.js';
import { closeEmulatorsAfterEach, emulator } from './helpers/emulator.js';
import { until } from './helpers/flow.js';
import { redisServerForFile } from './helpers/redis.js';

closeEmulatorsAfterEach();
const server = redisServerForFile();
const fleets = new FleetPool();
afterEach(() => fleets.stopAll());

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** A client that fails fast while Redis is down, and is back soon after: see redis-restart.test.ts. */
const FAIL_FAST: RedisClientSettings = { maxRetriesPerRequest: 1, maxReconnectDelayMs: 200 };
/** Token calls and logins time out at 3 s; store calls, and each try at the lock, at a third of it. */
const TOKEN_TIMEOUT_MS = 3_000;
const OUTAGE_MS = 12_000;

/** The refresh tokens the token calls carried, in order. */
function refreshTokensSent(service: TokenServiceEmulator): Array<string | undefined> {
  return service.calls
    .filter((call) => call.route === 'token')
    .map((call) => (JSON.parse(call.body) as { refresh_token?: string }).refresh_token);
}

describe.each([
  ['stops answering (SIGSTOP) for 12 s as the tokens expire', 'pause'],
  ['dies (SIGKILL) as the tokens expire and comes back empty 12 s later', 'kill'],
] as const)('a fleet of 4 processes whose Redis %s', (_, outage) => {
  it('sends no spent refresh token and fails no request: one login per process at most, then one pair again', async () => {
    const prefix = `outage-test:${randomUUID()}`;
    const key = `{${prefix}}:pair`;
    const service = await emulator();
    const fleet = await fleets.start({
      count: 4,
      emulatorUrl: service.url,
      store: { kind: 'redis', url: server().url, prefix, pubsub: true, client: FAIL_FAST },
      tokenTimeoutMs: TOKEN_TIMEOUT_MS,
    });
    const warm = await fleet.burst(10);
    await until(async () => (await subscriptions(server().port, `{${prefix}}*`)) === 4, 5_000);
    expect(service.counters.logins).toBe(1);

    if (outage === 'pause') server().pause();
    else await server().kill();
    const from = Date.now();
    service.expireAccessTokens();
    const during = keepEachBursting(fleet, 10);
    // Pacing, not waiting for something: a second expiry inside the outage, which each process meets with the pair
    // it got alone, renewed with its own refresh token, not with another login.
    await sleep(OUTAGE_MS / 2);
    service.expireAccessTokens();
    await sleep(OUTAGE_MS / 2);
    if (outage === 'pause') server().resume();
    else await server().restart();
    await until(async () => (await subscriptions(server().port, `{${prefix}}*`)) === 4, 10_000);
    const around = await during.stop();
    const inOutage = { ...service.counters };

    // Redis answers again: the next expiry brings every process back on one pair, with one token call.
    service.expireAccessTokens();
    const after = await fleet.burst(10);
    await until(async () => (await withConnection(server().port, (client) => client.get(key))) !== null, 5_000);
    const record = JSON.parse((await withConnection(server().port, (client) => client.get(key)))!) as {
      pair: { access: string };
    };
    await Promise.all(fleet.workers.map((_w, i) => fleet.burst(3, { only: [i], path: `/check/${i}` })));
    const onStoredPair = fleet.workers.map((_w, i) =>
      service.calls
        .filter((call) => call.path.startsWith(`/check/${i}/`))
        .every((call) => call.authorization === `Bearer ${record.pair.access}`),
    );

    const total = sumBursts([...warm, ...around, ...after]);
    // Each said once that it went on alone, and why.
    const warned = fleet.workers.map(
      (worker) =>
        worker.events.filter(
          (event: FleetEvent) => event.name === 'warning' && event.code === 'STORE_LOCK_MISSED' && event.at >= from,
        ).length,
    );
    const sent = refreshTokensSent(service);
    expect(total.errors).toEqual([]);
    expect(total.failed).toBe(0);
    expect(around.length).toBeGreaterThanOrEqual(4);
    // No refresh token sent twice, none refused; each process logged in once in the outage, then renewed its own pair.
    expect(sent.length - new Set(sent).size).toBe(0);
    expect(service.counters.rejected).toBe(0);
    expect(inOutage.logins).toBe(1 + 4);
    expect(inOutage.refreshes).toBe(4);
    expect(warned).toEqual([1, 1, 1, 1]);
    // Back on one pair: one token call for the expiry after the outage, no login.
    expect(service.counters.logins).toBe(1 + 4);
    expect(service.counters.refreshes).toBe(4 + 1);
    expect(onStoredPair).toEqual([true, true, true, true]);
    // The stall promise: no request waited much beyond a try at the lock and a login.
    expect(total.slowestMs).toBeLessThan(TOKEN_TIMEOUT_MS + TOKEN_TIMEOUT_MS / 3 + 1_000);
  }, 60_000);
});
