/**
 * A real Redis Cluster on 127.0.0.1: `masters` redis-server nodes in cluster mode (and `replicasPerMaster` replicas
 * of each) on free ports, formed by `redis-cli --cluster create`, in a temporary folder that `stop()` removes. For
 * the cluster tests and benchmarks; no jest here.
 *
 * @example
 * requireRedisCluster(); // while the test file loads: fails it once, with the install command, when a binary is missing
 * const cluster = await startRedisCluster({ masters: 3, replicasPerMaster: 1 });
 * try {
 *   const client = new Redis.Cluster(cluster.nodes);
 *   await cluster.kill((await cluster.masterOf('{account}:pair')).port);
 *   await cluster.waitUntilOk();
 * } finally {
 *   await cluster.stop();
 * }
 */
import { execFile, spawnSync } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type Redis from 'ioredis';
import { freePort, launchRedisServer, requireRedisServer, stopProcess, until, withConnection } from './redis-server.js';

/** Where a node listens: what `new Redis.Cluster(nodes)` takes. */
export interface ClusterNodeAddress {
  host: string;
  port: number;
}

export interface RedisClusterOptions {
  /** @default 3 (the fewest `redis-cli --cluster create` accepts) */
  masters?: number;
  /** @default 0 */
  replicasPerMaster?: number;
  /**
   * `cluster-node-timeout`: how long a node may not answer before the others count it as failing, and so about how
   * long a failover takes to begin. Redis' default is 15 s; a test wants a short one.
   * @default 1_000
   */
  nodeTimeoutMs?: number;
}

export interface RedisCluster {
  /** Every node started, masters and replicas, killed ones included: startup nodes for `new Redis.Cluster()`. */
  readonly nodes: readonly ClusterNodeAddress[];
  /** The ports of the nodes still running. */
  livePorts(): number[];
  /** `CLUSTER KEYSLOT key`: the hash slot of a key (of its `{tag}` when it has one). */
  slotOf(key: string): Promise<number>;
  /** The master that serves `key`'s slot now, as the live nodes see it (`CLUSTER NODES`, masters not marked failing). */
  masterOf(key: string): Promise<ClusterNodeAddress>;
  /** Ends one node at once (SIGKILL), as a crash would; resolves once its process has ended. */
  kill(port: number): Promise<void>;
  /**
   * Resolves once every live node reports `cluster_state:ok` and every slot has a live master (after a kill: once a
   * replica has taken the dead master's place); rejects after `timeoutMs`.
   */
  waitUntilOk(timeoutMs?: number): Promise<void>;
  /** Ends every node and removes their folder. */
  stop(): Promise<void>;
}

/** The redis-cli that forms the cluster: REDIS_CLI_PATH when set. */
const REDIS_CLI = process.env.REDIS_CLI_PATH || 'redis-cli';

/**
 * Fails, rather than skips, when redis-server or redis-cli is missing; synchronous, for a test file to call while it
 * loads (see requireRedisServer). Debian's redis-server package brings redis-cli (through redis-tools).
 */
export function requireRedisCluster(): void {
  requireRedisServer();
  const probe = spawnSync(REDIS_CLI, ['--version'], { encoding: 'utf8' });
  if (probe.error || probe.status !== 0) {
    const where = process.env.REDIS_CLI_PATH ? `at ${REDIS_CLI} (REDIS_CLI_PATH)` : 'on PATH';
    const error = new Error(
      `redis-cli was not found ${where}; it forms the test cluster. Install it with \`apt-get install redis-server\` ` +
        '(which brings redis-tools; `npm test` does), or set REDIS_CLI_PATH to one; the cluster tests fail without it, ' +
        'they never skip.',
    );
    error.stack = `${error.name}: ${error.message}`;
    throw error;
  }
}

interface Node extends ClusterNodeAddress {
  process: ChildProcess;
}

export async function startRedisCluster(options: RedisClusterOptions = {}): Promise<RedisCluster> {
  requireRedisCluster();
  const masters = options.masters ?? 3;
  const replicas = options.replicasPerMaster ?? 0;
  const nodeTimeoutMs = options.nodeTimeoutMs ?? 1_000;
  const dir = await mkdtemp(join(tmpdir(), 'token-keeper-cluster-'));
  const nodes: Node[] = [];
  const stop = async (): Promise<void> => {
    // Nothing to keep: SIGKILL spares a master's wait for its replicas at shutdown.
    await Promise.all(nodes.map((node) => stopProcess(node.process, 'SIGKILL')));
    await rm(dir, { recursive: true, force: true });
  };
  try {
    const started = await Promise.all(
      Array.from({ length: masters * (1 + replicas) }, () => startNode(dir, nodeTimeoutMs)),
    );
    nodes.push(...started);
    await form(nodes, replicas);
    const cluster = makeCluster(nodes, stop);
    await cluster.waitUntilOk(30_000);
    if (replicas > 0) await untilReplicasInSync(nodes, 30_000);
    return cluster;
  } catch (error) {
    await stop();
    throw error;
  }
}

/** One node, on a free port and a free cluster-bus port (`cluster-port`: the default, port + 10,000, may be taken). */
async function startNode(dir: string, nodeTimeoutMs: number): Promise<Node> {
  for (let attempt = 1; ; attempt += 1) {
    const [port, busPort] = [await freePort(), await freePort()];
    const args = [
      ...['--port', String(port), '--cluster-port', String(busPort)],
      ...['--cluster-enabled', 'yes', '--cluster-config-file', `nodes-${port}.conf`, '--dir', dir],
      ...['--cluster-node-timeout', String(nodeTimeoutMs)],
    ];
    try {
      return { host: '127.0.0.1', port, process: await launchRedisServer(args) };
    } catch (error) {
      if (attempt === 3) throw error;
    }
  }
}

/** `redis-cli --cluster create`: slots spread over the first masters, then a replica for each, in order. */
function form(nodes: readonly Node[], replicas: number): Promise<void> {
  const args = [
    '--cluster',
    'create',
    ...nodes.map((node) => `${node.host}:${node.port}`),
    '--cluster-replicas',
    String(replicas),
    '--cluster-yes',
  ];
  return new Promise((resolve, reject) => {
    execFile(REDIS_CLI, args, { timeout: 60_000, encoding: 'utf8' }, (error, stdout, stderr) => {
      if (error) reject(new Error(`redis-cli ${args.join(' ')} failed: ${error.message}\n${stdout}${stderr}`));
      else resolve();
    });
  });
}

function makeCluster(nodes: Node[], stop: () => Promise<void>): RedisCluster {
  const live = (): Node[] => nodes.filter((node) => node.process.exitCode === null && node.process.signalCode === null);
  const ask = async <T>(command: (client: Redis) => Promise<T>): Promise<T> => {
    const node = live()[0];
    if (!node) throw new Error('Every node of the cluster has been killed.');
    return withConnection(node.port, command);
  };
  const cluster: RedisCluster = {
    nodes: nodes.map(({ host, port }) => ({ host, port })),
    livePorts: () => live().map((node) => node.port),
    slotOf: (key) => ask(async (client) => Number(await client.call('CLUSTER', 'KEYSLOT', key))),
    async masterOf(key) {
      const slot = await cluster.slotOf(key);
      const table = await ask((client) => client.call('CLUSTER', 'NODES') as Promise<string>);
      const master = parseNodes(table).find(
        (entry) => entry.master && !entry.failing && entry.slots.some(([from, to]) => from <= slot && slot <= to),
      );
      if (!master) throw new Error(`No live master serves slot ${slot} (of ${key}) now:\n${table}`);
      return { host: master.host, port: master.port };
    },
    async kill(port) {
      const node = nodes.find((candidate) => candidate.port === port);
      if (!node) throw new RangeError(`The cluster has no node on port ${port}.`);
      await stopProcess(node.process, 'SIGKILL');
    },
    async waitUntilOk(timeoutMs = 30_000) {
      await until(
        async () => {
          const ports = live().map((node) => node.port);
          const states = await Promise.all(
            ports.map((port) =>
              withConnection(port, async (client) => {
                const info = (await client.call('CLUSTER', 'INFO')) as string;
                const table = parseNodes((await client.call('CLUSTER', 'NODES')) as string);
                const served = table
                  .filter((entry) => entry.master && !entry.failing && ports.includes(entry.port))
                  .reduce((sum, entry) => sum + entry.slots.reduce((count, [from, to]) => count + to - from + 1, 0), 0);
                return /^cluster_state:ok\s*$/m.test(info) && served === 16_384;
              }),
            ),
          );
          return states.every(Boolean);
        },
        timeoutMs,
        () => `The cluster did not reach cluster_state:ok with every slot on a live master within ${timeoutMs} ms.`,
      );
    },
    stop,
  };
  return cluster;
}

/** Until every replica has its master's data: a replica that never synced cannot stand in for it. */
async function untilReplicasInSync(nodes: readonly Node[], timeoutMs: number): Promise<void> {
  await until(
    async () => {
      const roles = await Promise.all(
        nodes.map((node) => withConnection(node.port, (client) => client.info('replication'))),
      );
      return roles.every((info) => /^role:master/m.test(info) || /^master_link_status:up/m.test(info));
    },
    timeoutMs,
    () => `The replicas were not in sync with their masters within ${timeoutMs} ms.`,
  );
}

interface NodeEntry {
  host: string;
  port: number;
  master: boolean;
  failing: boolean;
  slots: Array<[number, number]>;
}

/**
 * `CLUSTER NODES`: `<id> <ip:port@bus> <flags> <master> <ping> <pong> <epoch> <link> <slot|from-to>…`. Slots being
 * migrated (`[…]`) are left out.
 */
function parseNodes(table: string): NodeEntry[] {
  return table
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => {
      const [, address = '', flags = '', , , , , , ...slots] = line.trim().split(' ');
      const [host = '', port = ''] = address.split('@')[0]!.split(/:(?=\d+$)/);
      const flagList = flags.split(',');
      return {
        host,
        port: Number(port),
        master: flagList.includes('master'),
        failing: flagList.includes('fail') || flagList.includes('fail?'),
        slots: slots
          .filter((slot) => !slot.startsWith('['))
          .map((slot) => {
            const [from, to = from] = slot.split('-').map(Number);
            return [from!, to!] as [number, number];
          }),
      };
    });
}
