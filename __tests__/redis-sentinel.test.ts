import { randomUUID } from 'node:crypto';
import { closeEmulatorsAfterEach, emulator, refreshTokenCounts } from './helpers/emulator.js';
import { FleetPool, keepEachBursting, sumBursts } from '../harness/fleet.js';
import type { Fleet, FleetStoreConfig } from '../harness/fleet.js';
import { countCommands, requireRedisServer, subscriptions, withConnection } from '../harness/redis-server.js';
import { startRedisSentinel } from '../harness/redis-sentinel.js';
import type { RedisSentinel } from '../harness/redis-sentinel.js';
import { clientLabel } from '../harness/redis-clients.js';
import type { RedisClientChoice } from '../harness/redis-clients.js';
import { roundsOverExpiries } from './helpers/fleets.js';
import { until } from './helpers/flow.js';
import { lossOf, reportLoss } from './helpers/loss-report.js';

// Redis Sentinel (harness/redis-sentinel.ts: a master, a replica and 3 sentinels, `redis-server --sentinel`) under a
// fleet of real processes (harness/fleet-worker.ts) whose RedisTokenStore takes ioredis' `new Redis({ sentinels, name
// })`, with `redis.duplicate()` for pub/sub, or node-redis' `createSentinel()`, its own subscriber. The store contracts
// with these clients: redis-clients.test.ts. Without redis-server this file fails here, once, with the command that
// installs it.
requireRedisServer();
closeEmulatorsAfterEach();

// A worker that crashed, even in a passing test, fails it with the worker's output.
const fleets = new FleetPool();
afterEach(() => fleets.stopAll());

/** The clients that speak to Sentinel: ioredis 5 and 6, node-redis 5 and 6 (4 has no sentinel client). */
const SENTINEL_CLIENTS: readonly RedisClientChoice[] = [
  { library: 'ioredis' },
  { library: 'ioredis6' },
  { library: 'redis5' },
  { library: 'redis6' },
];

/**
 * The failover takes about 2 to 3 s here (1 s for the sentinels to count the master down, then an election); a store
 * call waits for it, as ioredis queues commands while it reconnects, and node-redis' sentinel retries them on the
 * master it rediscovers. The plugin's `storeTimeoutMs` bounds that wait: 10 s, so that a slow machine's failover still
 * ends within it (past it, the processes would go on alone, as docs/stores.md says). `tokenTimeoutMs` must exceed it.
 */
const STORE_TIMEOUT_MS = 10_000;
const TOKEN_TIMEOUT_MS = 30_000;

function sentinelStore(sentinel: RedisSentinel, prefix: string, driver?: RedisClientChoice): FleetStoreConfig {
  return {
    kind: 'redis-sentinel',
    sentinels: sentinel.sentinels,
    name: sentinel.name,
    prefix,
    pubsub: true,
    ...(driver && { driver }),
  };
}

/** The pair's key as the node at `port` holds it (the master, or a replica: what a failover would promote). */
const storedOn = (port: number, key: string): Promise<string | null> =>
  withConnection(port, (client) => client.get(key));

let sentinel: RedisSentinel | undefined;
afterEach(async () => {
  await sentinel?.stop();
  sentinel = undefined;
});

describe('a master, a replica and 3 sentinels', () => {
  it.each(SENTINEL_CLIENTS.map((driver) => [clientLabel(driver), driver] as const))(
    '4 processes on the sentinel client of %s with pub/sub: 1 login and 1 refresh per expiry between them, each written to the replica before the lock goes, no refresh token sent twice, none failed',
    async (_label, driver) => {
      sentinel = await startRedisSentinel();
      const service = await emulator();
      const prefix = `sentinel-test:${randomUUID()}`;
      const fleet = await fleets.start({
        count: 4,
        emulatorUrl: service.url,
        store: sentinelStore(sentinel, prefix, driver),
      });
      const master = await sentinel.master();
      await until(async () => (await subscriptions(master.port, `{${prefix}}*`)) === 4, 10_000);

      const {
        result: { rounds, countAfterRound },
        byCommand,
      } = await countCommands([master.port], async () => {
        const result = await roundsOverExpiries(fleet, service, {
          n: 25,
          expiries: 2,
          count: () => service.counters.tokenCalls,
        });
        // The writes go on off the requests' path, and each lock is released once its writes are done.
        await until(() => locksReleased(fleet), 10_000);
        return result;
      });

      const total = sumBursts(rounds.flat());
      expect(total.errors).toEqual([]);
      expect(total).toMatchObject({ ok: 300, failed: 0 });
      expect(service.counters).toMatchObject({ logins: 1, refreshes: 2, rejected: 0 });
      expect(countAfterRound).toEqual([1, 2, 3]);
      expect(refreshTokenCounts(service)).toEqual({ calls: 2, distinct: 2 });
      expect(total.events.filter((event) => event.name === 'failure' || event.name === 'lock-failed')).toEqual([]);
      // Each token call's pair and the account's record (its spent calls) written, each waited for on the master
      // until the replica had it.
      expect(byCommand.get('wait')).toBe(2 * 3);
    },
    60_000,
  );

  it.each([
    ['ioredis 5', { library: 'ioredis' }],
    ['node-redis 5', { library: 'redis5' }],
  ] as const)(
    'serves every request while the master is killed mid-traffic and a sentinel promotes the replica (%s): one token call for the expiry due meanwhile, no refresh token sent twice, one login in all',
    async (_label, driver) => {
      sentinel = await startRedisSentinel();
      const service = await emulator();
      const prefix = `sentinel-failover:${randomUUID()}`;
      const key = `{${prefix}}:pair`;
      const fleet = await fleets.start({
        count: 4,
        emulatorUrl: service.url,
        store: sentinelStore(sentinel, prefix, driver),
        storeTimeoutMs: STORE_TIMEOUT_MS,
        tokenTimeoutMs: TOKEN_TIMEOUT_MS,
      });
      const master = await sentinel.master();
      const replica = sentinel.nodes.find((node) => node.port !== master.port)!;
      await until(async () => (await subscriptions(master.port, `{${prefix}}*`)) === 4, 10_000);
      const warm = await fleet.burst(20);
      service.expireAccessTokens();
      const expiry = await fleet.burst(20);
      // The expiry's pair has been written, and the lock released after it: the replica has the pair the fleet uses.
      await until(() => locksReleased(fleet), 10_000);
      const renewed = await storedOn(master.port, key);
      expect(await storedOn(replica.port, key)).toBe(renewed);
      const tokenCallsBefore = service.counters.tokenCalls;

      const traffic = keepEachBursting(fleet, 10);
      await sentinel.kill(master.port);
      // A renewal falls due while there is no master: the lock, the read and the write wait for the replica.
      service.expireAccessTokens();
      const promoted = await sentinel.waitForFailover(master.port, 30_000);
      // Traffic on the new master until every process has the renewal's pair (their requests succeed with it).
      await until(() => service.counters.tokenCalls > tokenCallsBefore && locksReleased(fleet), 20_000);
      const during = await traffic.stop();
      const tokenCallsDuringFailover = service.counters.tokenCalls - tokenCallsBefore;
      // And the next expiry is renewed through the new master.
      service.expireAccessTokens();
      const after = await fleet.burst(20);

      const total = sumBursts([...warm, ...expiry, ...during, ...after]);
      const loss = reportLoss(`sentinel failover (${_label})`, lossOf(service, total.failed));
      expect(total.errors).toEqual([]);
      expect(loss).toEqual({ spent: 0, failed: 0, logins: 0 });
      expect(promoted.port).toBe(replica.port);
      expect(tokenCallsDuringFailover).toBe(1);
      expect(service.counters).toMatchObject({ logins: 1, refreshes: 3, rejected: 0 });
      expect(refreshTokenCounts(service)).toEqual({ calls: 3, distinct: 3 });
      expect(total.events.filter((event) => event.name === 'failure' || event.name === 'lock-failed')).toEqual([]);
      await until(() => locksReleased(fleet), 10_000);
      expect(await storedOn(promoted.port, key)).not.toBeNull();
    },
    90_000,
  );
});

/** Every lock the fleet was granted has been released: the writes of each renewal are done. */
function locksReleased(fleet: Fleet): boolean {
  const count = (name: 'lock-acquired' | 'lock-released') =>
    fleet.workers.reduce((sum, worker) => sum + worker.events.filter((event) => event.name === name).length, 0);
  return count('lock-acquired') === count('lock-released');
}
