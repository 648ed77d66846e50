import { randomUUID } from 'node:crypto';
import { closeEmulatorsAfterEach, E2E_PASSWORD, E2E_USER, emulator, refreshTokenCounts } from './helpers/emulator.js';
import { FleetPool, sumBursts } from '../harness/fleet.js';
import type { BurstReply, RedisClusterSettings } from '../harness/fleet.js';
import { requireRedisCluster } from '../harness/redis-cluster.js';
import { until } from './helpers/flow.js';
import { connectionsPerWorker, fleetAccounts, loginsByUser, roundsOverExpiries } from './helpers/fleets.js';
import { escapeAccountName } from '../lib/stores/common/account-key.js';
import { clientLabel } from '../harness/redis-clients.js';
import { countCommands, withConnection } from '../harness/redis-server.js';
import { RedisTokenStore } from '../lib/stores/redis/index.js';
import { keySlot } from '../lib/stores/redis/replicas.js';
import { openRedis } from '../harness/redis-clients.js';
import { PAIR_A, accountRecord } from './helpers/store-contract.js';
import { lossOf, reportLoss } from './helpers/loss-report.js';
import {
  CLUSTER_CLIENTS,
  clusterForDescribe,
  clusterStore,
  failoverMidTraffic,
  storedOnItsNode,
  subscribers,
  usersServed,
} from './helpers/redis-cluster.js';

// A real Redis Cluster (redis-server nodes in cluster mode, formed by redis-cli) under a fleet of real processes
// (harness/fleet-worker.ts) whose RedisTokenStore takes `new Redis.Cluster(nodes)`, with `cluster.duplicate()` for
// pub/sub, or node-redis' `createCluster()`, its own subscriber. Without redis-server or redis-cli this file fails here, once, with the command that installs them.
requireRedisCluster();
closeEmulatorsAfterEach();

// A worker that crashed, even in a passing test, fails it with the worker's output.
const fleets = new FleetPool();
afterEach(() => fleets.stopAll());

describe('a Redis Cluster of 3 masters', () => {
  const theCluster = clusterForDescribe({ masters: 3 });

  it('finds the slot of a key as the cluster does (the store looks up the node that took a write by it)', async () => {
    const keys = [
      '{tokens:orders}:pair',
      `{tokens#${escapeAccountName('jane doe#%3A@ünï🙂')}}#pair`,
      'foo{}{bar}',
      'foo{{bar}}zap',
      '{}',
      'no tag at all',
      '123456789',
    ];
    const slots = await Promise.all(keys.map((key) => theCluster().slotOf(key)));
    expect(keys.map(keySlot)).toEqual(slots);
  });

  it.each(CLUSTER_CLIENTS.map((driver) => [clientLabel(driver), driver] as const))(
    '4 processes on the cluster client of %s with pub/sub: 1 login and 1 refresh per expiry between them, no refresh token sent twice, none failed',
    async (_label, driver) => {
      const cluster = theCluster();
      const service = await emulator();
      const prefix = `cluster-test:${randomUUID()}`;
      const fleet = await fleets.start({
        count: 4,
        emulatorUrl: service.url,
        store: clusterStore(cluster, prefix, undefined, driver),
      });
      // Each process listens through its cluster's subscriber connection, on whichever node that went to.
      expect(await subscribers(cluster, prefix)).toBe(4);

      const { rounds, countAfterRound: refreshesAfterRound } = await roundsOverExpiries(fleet, service, {
        n: 50,
        expiries: 3,
        count: () => service.counters.refreshes,
      });

      const total = sumBursts(rounds.flat());
      expect(total.errors).toEqual([]);
      expect(total).toMatchObject({ ok: 800, failed: 0 });
      expect(service.counters).toMatchObject({ logins: 1, refreshes: 3, rejected: 0, tokenCalls: 4 });
      expect(refreshesAfterRound).toEqual([0, 1, 2, 3]);
      expect(refreshTokenCounts(service)).toEqual({ calls: 3, distinct: 3 });
      expect(total.events.filter((event) => event.name === 'failure')).toEqual([]);
      // The three that did not log in took the pair from the cluster.
      expect(rounds[0]!.filter((reply) => reply.events.some((event) => event.name === 'load'))).toHaveLength(3);
      expect(await storedOnItsNode(cluster, prefix)).toBe(true);
    },
    40_000,
  );

  it('keeps two accounts whose keys live on different nodes apart: each its own login, its own refreshes and its own token', async () => {
    const cluster = theCluster();
    // Two prefixes whose slots two different masters serve.
    const prefixes = [`cluster-account:${randomUUID()}`];
    const firstNode = (await cluster.masterOf(`{${prefixes[0]}}:pair`)).port;
    while (prefixes.length < 2) {
      const candidate = `cluster-account:${randomUUID()}`;
      if ((await cluster.masterOf(`{${candidate}}:pair`)).port !== firstNode) prefixes.push(candidate);
    }
    const [prefixA, prefixB] = prefixes as [string, string];
    const nodes = await Promise.all(prefixes.map((prefix) => cluster.masterOf(`{${prefix}}:pair`)));
    expect(nodes[0]!.port).not.toBe(nodes[1]!.port);

    const service = await emulator({ users: { [E2E_USER]: E2E_PASSWORD, demo: 'demo-password' } });
    const [fleetA, fleetB] = await Promise.all([
      fleets.start({ count: 2, emulatorUrl: service.url, store: clusterStore(cluster, prefixA) }),
      fleets.start({
        count: 2,
        emulatorUrl: service.url,
        store: clusterStore(cluster, prefixB),
        account: { username: 'demo', password: 'demo-password' },
        firstIndex: 2,
      }),
    ]);

    const repliesA: BurstReply[] = [];
    const repliesB: BurstReply[] = [];
    for (let round = 0; round <= 2; round += 1) {
      if (round > 0) service.expireAccessTokens();
      const [a, b] = await Promise.all([fleetA.burst(25), fleetB.burst(25)]);
      repliesA.push(...a);
      repliesB.push(...b);
    }

    expect(sumBursts([...repliesA, ...repliesB])).toMatchObject({ ok: 300, failed: 0, errors: [] });
    expect(loginsByUser(service)).toEqual({ [E2E_USER]: 1, demo: 1 });
    expect(service.counters).toMatchObject({ logins: 2, refreshes: 4, rejected: 0 });
    expect(refreshTokenCounts(service)).toEqual({ calls: 4, distinct: 4 });
    // Every request of a fleet went out with its own account's token.
    expect(usersServed(repliesA)).toEqual({ [E2E_USER]: 150 });
    expect(usersServed(repliesB)).toEqual({ demo: 150 });
    // Each fleet renewed twice, once per expiry, for itself.
    const stats = (replies: BurstReply[]) => replies.slice(-2).map((reply) => reply.stats);
    for (const replies of [repliesA, repliesB]) {
      expect(stats(replies).reduce((sum, stat) => sum + stat.logins, 0)).toBe(1);
      expect(stats(replies).reduce((sum, stat) => sum + stat.refreshes, 0)).toBe(2);
    }
    expect(await storedOnItsNode(cluster, prefixA)).toBe(true);
    expect(await storedOnItsNode(cluster, prefixB)).toBe(true);
  }, 40_000);

  it('spreads one store’s accounts over the masters: 3 processes × 6 accounts, 1 login per account, 1 token call per account per expiry, each request with its own account’s token, on one client and one subscriber per process', async () => {
    const cluster = theCluster();
    const { accounts, users, userOf } = fleetAccounts(6);
    const names = Object.keys(accounts);
    // A prefix under which the accounts' keys (hash-tagged per account) live on every master, so that the round
    // crosses them all.
    const pairKey = (prefix: string, name: string) => `{${prefix}#${escapeAccountName(name)}}#pair`;
    const mastersOf = async (prefix: string) =>
      new Set(await Promise.all(names.map(async (name) => (await cluster.masterOf(pairKey(prefix, name))).port)));
    let prefix = `cluster-accounts:${randomUUID()}`;
    while ((await mastersOf(prefix)).size < 3) prefix = `cluster-accounts:${randomUUID()}`;

    const service = await emulator({ users });
    const fleet = await fleets.start({
      count: 3,
      emulatorUrl: service.url,
      store: clusterStore(cluster, prefix),
      accounts,
      nameConnections: true,
    });
    const { rounds, countAfterRound: tokenCallsAfterRound } = await roundsOverExpiries(fleet, service, {
      n: 6 * names.length,
      expiries: 2,
      count: () => service.counters.tokenCalls,
      burst: { accounts: names },
    });

    const total = sumBursts(rounds.flat());
    expect(total.errors).toEqual([]);
    expect(total).toMatchObject({ ok: 3 * 3 * 6 * names.length, failed: 0 });
    expect(total.accounts).toEqual(Object.fromEntries(names.map((name) => [name, { [userOf[name]!]: 3 * 3 * 6 }])));
    expect(loginsByUser(service)).toEqual(Object.fromEntries(Object.values(userOf).map((user) => [user, 1])));
    expect(service.counters).toMatchObject({
      logins: names.length,
      refreshes: 2 * names.length,
      rejected: 0,
      tokenCalls: 3 * names.length,
    });
    expect(tokenCallsAfterRound).toEqual([1, 2, 3].map((round) => round * names.length));
    expect(refreshTokenCounts(service)).toEqual({ calls: 2 * names.length, distinct: 2 * names.length });
    expect(total.events.filter((event) => event.name === 'failure' || event.name === 'lock-failed')).toEqual([]);
    for (const name of names) {
      const key = pairKey(prefix, name);
      expect(await withConnection((await cluster.masterOf(key)).port, (client) => client.exists(key))).toBe(1);
    }
    // Each process: its cluster client's connection to each of the 3 masters, and one subscriber connection (its
    // duplicate's), for its 6 accounts: no connection per account.
    expect(await connectionsPerWorker(fleet, cluster.livePorts())).toEqual([4, 4, 4]);
  }, 60_000);
});

/**
 * ioredis Cluster options that ride out a failover: until a replica takes over, the live nodes answer MOVED to the
 * dead master, whose connection is closed, and ioredis gives a command up after `maxRedirections` such turns, about
 * 100 ms apart. With the default 16, every process's lock try failed after about a second, before the replica took
 * over (2.1 to 2.9 s with a cluster-node-timeout of 1 s), and the processes renewed without the lock (in one run of
 * three, a refresh token sent twice and a second login). 128 turns cover about 13 s, past the plugin's
 * `storeTimeoutMs` below, which bounds the wait.
 */
const RIDE_OUT_FAILOVER: RedisClusterSettings = { maxRedirections: 128, retryDelayOnMoved: 100 };

/**
 * A failover takes 2 to 3.2 s here, busy machine or not (1 s of cluster-node-timeout, then the replica's election); a
 * renewal that falls due meanwhile waits for it, each store call bounded by the plugin's `storeTimeoutMs`. With its
 * default (5 s, a third of `tokenTimeoutMs`) the outcome would depend on the machine's speed: past it, each process
 * goes on alone with a login of its own. 10 s, so that the renewal waits for the replica in every run.
 */
const FAILOVER_TIMEOUTS = { storeTimeoutMs: 10_000, tokenTimeoutMs: 30_000 };

describe('a Redis Cluster of 3 masters with a replica each', () => {
  const theCluster = clusterForDescribe({ masters: 3, replicasPerMaster: 1, nodeTimeoutMs: 1_000 });

  it.each(CLUSTER_CLIENTS.map((driver) => [clientLabel(driver), driver] as const))(
    'waits, on %s, for the replica of the master that took each write (the pair, the account’s record), once it wrote',
    async (_label, driver) => {
      const cluster = theCluster();
      const prefix = `cluster-replicas:${randomUUID()}`;
      const connections = await openRedis(driver, { nodes: cluster.nodes });
      try {
        const store = new RedisTokenStore(connections.client, { prefix });
        const { port } = await cluster.masterOf(`{${prefix}}:pair`);

        const { byCommand } = await countCommands([port], async () => {
          expect(await store.set(PAIR_A)).toBe(true);
          expect(await store.setAccount(accountRecord())).toBe(true);
          // A write the fence refuses wrote nothing: nothing to wait for.
          const lock = await store.lock();
          await lock.release();
          expect(await store.set(PAIR_A, lock.fence! - 1)).toBe(false);
        });

        // On the master of the slot, where the writes went: one WAIT for each.
        expect(byCommand.get('wait')).toBe(2);
        const replicas = await Promise.all(
          cluster.livePorts().map((each) =>
            withConnection(each, async (client) => {
              // The replica of the master that took the writes.
              const replicaOf = /^master_port:(\d+)/m.exec(await client.info('replication'))?.[1];
              if (replicaOf !== String(port)) return null;
              // A replica answers reads on its connections that say READONLY; others get MOVED to the master.
              await client.call('READONLY');
              return client.get(`{${prefix}}:pair`);
            }),
          ),
        );
        expect(replicas.filter((value) => value !== null).map((value) => JSON.parse(value) as unknown)).toEqual([
          expect.objectContaining({ pair: PAIR_A }),
        ]);
      } finally {
        await connections.close();
      }
    },
  );

  it('serves every request while the master of the account’s slot is killed mid-traffic and its replica takes over: one token call for the expiry due meanwhile', async () => {
    const cluster = theCluster();
    const service = await emulator();
    const prefix = `cluster-failover:${randomUUID()}`;
    const key = `{${prefix}}:pair`;
    const fleet = await fleets.start({
      count: 4,
      emulatorUrl: service.url,
      store: clusterStore(cluster, prefix, RIDE_OUT_FAILOVER),
      ...FAILOVER_TIMEOUTS,
    });
    const warm = await fleet.burst(20);
    const { master, during, tokenCallsDuringFailover } = await failoverMidTraffic(cluster, fleet, service, key);
    // And the next expiry is renewed through the new master.
    service.expireAccessTokens();
    const after = await fleet.burst(20);

    const total = sumBursts([...warm, ...during, ...after]);
    const loss = reportLoss('cluster failover of the account’s slot', lossOf(service, total.failed));
    expect(total.errors).toEqual([]);
    expect(loss).toEqual({ spent: 0, failed: 0, logins: 0 });
    expect(tokenCallsDuringFailover).toBe(1);
    expect(service.counters).toMatchObject({ logins: 1, refreshes: 2, rejected: 0 });
    expect(refreshTokenCounts(service)).toEqual({ calls: 2, distinct: 2 });
    // No store call failed: the renewal that fell due during the failover waited for the replica and held the lock.
    expect(total.events.filter((event) => event.name === 'failure' || event.name === 'lock-failed')).toEqual([]);
    expect((await cluster.masterOf(key)).port).not.toBe(master.port);
    // Subscribers on the killed node moved to another: every process still hears the pairs written.
    await until(async () => (await subscribers(cluster, prefix)) === 4, 10_000);
    expect(await storedOnItsNode(cluster, prefix)).toBe(true);
  }, 60_000);
});

describe('a Redis Cluster of 3 masters with a replica each, on ioredis’ default Cluster settings and the plugin’s defaults', () => {
  // A failover of 4 to 5 s (3 s of cluster-node-timeout, then the replica's election): every try at the lock fails
  // before it ends, in every run, on a quiet machine or a busy one.
  const theCluster = clusterForDescribe({ masters: 3, replicasPerMaster: 1, nodeTimeoutMs: 3_000 });

  it('costs the account one token call when the master of the account’s slot is killed as the tokens expire: the renewal waits the failover out, no refresh token sent twice, no request failed', async () => {
    const cluster = theCluster();
    const service = await emulator();
    const prefix = `cluster-failover-defaults:${randomUUID()}`;
    const key = `{${prefix}}:pair`;
    // ioredis gives a command up after 16 MOVED turns, about a second, well before the replica takes over: every
    // try at the lock fails fast ("Too many Cluster redirections"), which the plugin waits out as a store that is down.
    const fleet = await fleets.start({ count: 4, emulatorUrl: service.url, store: clusterStore(cluster, prefix) });
    const warm = await fleet.burst(20);
    const { master, during, tokenCallsDuringFailover } = await failoverMidTraffic(cluster, fleet, service, key);

    const total = sumBursts([...warm, ...during]);
    expect(total.errors).toEqual([]);
    expect(tokenCallsDuringFailover).toBe(1);
    expect(service.counters).toMatchObject({ logins: 1, refreshes: 1, rejected: 0 });
    expect(refreshTokenCounts(service)).toEqual({ calls: 1, distinct: 1 });
    expect((await cluster.masterOf(key)).port).not.toBe(master.port);
  }, 90_000);
});
