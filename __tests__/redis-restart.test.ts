import { randomUUID } from 'node:crypto';
import { closeEmulatorsAfterEach, emulator } from './helpers/emulator.js';
import { FleetPool, keepBursting, sumBursts } from '../harness/fleet.js';
import type { Fleet, RedisClientSettings } from '../harness/fleet.js';
import { until } from './helpers/flow.js';
import type { TokenServiceEmulator } from '../lib/emulator/index.js';
import { requireRedisServer, startRedisServer, subscriptions, withConnection } from '../harness/redis-server.js';
import type { RedisServer } from '../harness/redis-server.js';

// A fleet of real processes (harness/fleet-worker.ts) on one real redis-server that is killed (SIGKILL) mid-traffic
// and started again, empty, on the same port. Without redis-server this file fails here, once, with the command that
// installs it.
requireRedisServer();
closeEmulatorsAfterEach();

let redis: RedisServer;
beforeAll(async () => {
  redis = await startRedisServer();
});
afterAll(async () => {
  await redis?.stop();
});

// A worker that crashed, even in a passing test, fails it with the worker's output.
const fleets = new FleetPool();
afterEach(() => fleets.stopAll());

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** The pair's key as Redis holds it now, read on a connection of the test's own. */
const read = (key: string): Promise<string | null> => withConnection(redis.port, (client) => client.get(key));

/**
 * A client that fails fast while Redis is down and is back soon after it returns: a command is given up after one
 * failed reconnect (ioredis' default retries it through 20, about 10 s, which the plugin cuts at `storeTimeoutMs`),
 * and reconnects are tried every 200 ms at most (ioredis' default grows to 2 s). The offline queue stays on: without
 * it, the commands of a renewal that falls due just after the restart, before the client has reconnected, fail at
 * once, and each process renews on its own (for 4 processes, 3 refresh tokens sent twice and 3 extra logins).
 */
const FAIL_FAST: RedisClientSettings = { maxRetriesPerRequest: 1, maxReconnectDelayMs: 200 };

async function startOn(prefix: string): Promise<{ fleet: Fleet; service: TokenServiceEmulator }> {
  const service = await emulator();
  const fleet = await fleets.start({
    count: 4,
    emulatorUrl: service.url,
    store: { kind: 'redis', url: redis.url, prefix, pubsub: true, client: FAIL_FAST },
  });
  return { fleet, service };
}

describe('a fleet of 4 processes on a Redis killed mid-traffic and restarted empty', () => {
  it('loses no request and logs in no more: the tokens in memory carry the requests, and the renewal right after the restart writes the pair back', async () => {
    const prefix = `restart-test:${randomUUID()}`;
    const key = `{${prefix}}:pair`;
    const { fleet, service } = await startOn(prefix);
    const warm = await fleet.burst(20);
    expect(await read(key)).not.toBeNull();

    const during = keepBursting(fleet, 20);
    await sleep(100);
    await redis.kill();
    await sleep(1_000);
    await redis.restart();
    // Empty: the pair is only in the processes' memory now.
    expect(await read(key)).toBeNull();
    const around = await during.stop();

    // Due at once, while the clients may still be reconnecting.
    service.expireAccessTokens();
    const renewal = await fleet.burst(20);
    const written = await read(key);
    // The subscriptions are back (ioredis subscribes again on reconnect): the next renewal reaches everyone.
    await until(async () => (await subscriptions(redis.port, `{${prefix}}*`)) === 4, 5_000);
    service.expireAccessTokens();
    const next = await fleet.burst(20);

    const total = sumBursts([...warm, ...around, ...renewal, ...next]);
    expect(total.errors).toEqual([]);
    expect(total.failed).toBe(0);
    expect(around.length).toBeGreaterThanOrEqual(4 * 3);
    expect(service.counters).toMatchObject({ logins: 1, refreshes: 2, rejected: 0 });
    expect(written).not.toBeNull();
    expect(await read(key)).not.toBeNull();
  }, 40_000);

  it('loses no request when an expiry falls due while Redis is down, and is one client again after the restart', async () => {
    const prefix = `restart-test:${randomUUID()}`;
    const key = `{${prefix}}:pair`;
    const { fleet, service } = await startOn(prefix);
    const warm = await fleet.burst(20);

    await redis.kill();
    // No lock to share: each process renews on its own, and what that costs is the token service's to bear.
    service.expireAccessTokens();
    const whileDown = await fleet.burst(20);
    await redis.restart();
    await until(async () => (await subscriptions(redis.port, `{${prefix}}*`)) === 4, 5_000);

    const tokenCalls = service.counters.tokenCalls;
    service.expireAccessTokens();
    const after = await fleet.burst(20);

    expect(sumBursts([...warm, ...whileDown, ...after])).toMatchObject({ ok: 240, failed: 0, errors: [] });
    // One renewal between them again, written back to Redis; the others took its pair.
    expect(service.counters.tokenCalls - tokenCalls).toBe(1);
    expect(await read(key)).not.toBeNull();
  }, 40_000);
});
