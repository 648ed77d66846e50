// What the tests of a fleet on a real Redis Cluster (redis-cluster-*.test.ts) share: a cluster per describe, the
// cluster clients tested, the store the fleet's processes open on it, and the test's looks at the nodes, the token
// service and the replies; and a master killed mid-traffic.
import { keepBursting } from '../../harness/fleet.js';
import type { BurstReply, Fleet, FleetStoreConfig, RedisClusterSettings } from '../../harness/fleet.js';
import { startRedisCluster } from '../../harness/redis-cluster.js';
import type { ClusterNodeAddress, RedisCluster, RedisClusterOptions } from '../../harness/redis-cluster.js';
import type { RedisClientChoice } from '../../harness/redis-clients.js';
import { subscriptions, withConnection } from '../../harness/redis-server.js';
import type { TokenServiceEmulator } from '../../lib/emulator/index.js';
import { until } from './flow.js';

/** The store of a fleet's processes on `cluster`, with pub/sub; `client`'s Cluster settings, `driver`'s client. */
export function clusterStore(
  cluster: RedisCluster,
  prefix: string,
  client?: RedisClusterSettings,
  driver?: RedisClientChoice,
): FleetStoreConfig {
  return {
    kind: 'redis-cluster',
    nodes: cluster.nodes,
    prefix,
    pubsub: true,
    ...(client && { client }),
    ...(driver && { driver }),
  };
}

/**
 * The cluster clients tested: ioredis' `Redis.Cluster` with `cluster.duplicate()` for pub/sub, and node-redis'
 * `createCluster()`, its own subscriber, at each major (5 in RESP3).
 */
export const CLUSTER_CLIENTS: readonly RedisClientChoice[] = [
  { library: 'ioredis' },
  { library: 'ioredis6' },
  { library: 'redis4' },
  { library: 'redis5', resp: 3 },
  { library: 'redis6' },
];

/** Which users the emulator served a fleet's requests as, over all its replies. */
export function usersServed(replies: readonly BurstReply[]): Record<string, number> {
  const served: Record<string, number> = {};
  for (const reply of replies)
    for (const [user, count] of Object.entries(reply.users)) served[user] = (served[user] ?? 0) + count;
  return served;
}

/** Reads the pair's key on the node that serves its slot, with a plain client: the pair is in the cluster. */
export async function storedOnItsNode(cluster: RedisCluster, prefix: string): Promise<boolean> {
  const key = `{${prefix}}:pair`;
  const { port } = await cluster.masterOf(key);
  return (await withConnection(port, (client) => client.get(key))) !== null;
}

/** How many connections, over the live nodes, are subscribed to the account's channels. */
export async function subscribers(cluster: RedisCluster, prefix: string): Promise<number> {
  const counts = await Promise.all(cluster.livePorts().map((port) => subscriptions(port, `{${prefix}}*`)));
  return counts.reduce((sum, count) => sum + count, 0);
}

/** A cluster for the describe that calls this: started before its tests, stopped after them. */
export function clusterForDescribe(options: RedisClusterOptions): () => RedisCluster {
  let cluster: RedisCluster | undefined;
  beforeAll(async () => {
    cluster = await startRedisCluster(options);
  }, 60_000);
  afterAll(async () => {
    await cluster?.stop();
  });
  return () => {
    if (!cluster) throw new Error('The cluster did not start (see beforeAll).');
    return cluster;
  };
}

/** Every lock the fleet was granted has been released: each renewal's writes are done (its lock goes after them). */
function locksReleased(fleet: Fleet): boolean {
  const count = (name: 'lock-acquired' | 'lock-released') =>
    fleet.workers.reduce((sum, worker) => sum + worker.events.filter((event) => event.name === name).length, 0);
  return count('lock-acquired') === count('lock-released');
}

/**
 * Kills the master of `key`'s slot while every process of the warm `fleet` keeps bursting, the tokens expiring
 * meanwhile, and waits until a replica has taken over: the master killed, the replies of the traffic during the
 * failover, and the token calls made in it. The login's pair is written off the requests' path, and waited for on the
 * replica before its lock goes: the master is killed once every lock is released, with the pair on its replica (killed
 * before that, the failover may lose the pair, which costs a second login, by design: a store that lost the pair).
 */
export async function failoverMidTraffic(
  cluster: RedisCluster,
  fleet: Fleet,
  service: TokenServiceEmulator,
  key: string,
): Promise<{ master: ClusterNodeAddress; during: BurstReply[]; tokenCallsDuringFailover: number }> {
  await until(() => locksReleased(fleet), 10_000);
  const master = await cluster.masterOf(key);
  const tokenCallsBefore = service.counters.tokenCalls;

  const traffic = keepBursting(fleet, 20);
  await cluster.kill(master.port);
  // A renewal falls due while the slot has no master: the lock, the read and the write wait for the replica.
  service.expireAccessTokens();
  await cluster.waitUntilOk(20_000);
  const during = await traffic.stop();
  return { master, during, tokenCallsDuringFailover: service.counters.tokenCalls - tokenCallsBefore };
}
