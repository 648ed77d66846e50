/**
 * Redis with replicas, and Redis Sentinel, on 127.0.0.1 at free ports, with no persistence: a master and its replicas
 * (`startRedisReplicas`), and the same watched by sentinels (`startRedisSentinel`: `redis-server --sentinel` with a
 * config written to a temporary folder that `stop()` removes), for the tests and benchmarks of a deployment with
 * replicas and of a failover. No jest here; whoever starts them stops them.
 *
 * @example
 * const sentinel = await startRedisSentinel({ replicas: 1, sentinels: 3 });
 * try {
 *   const redis = new Redis({ sentinels: sentinel.sentinels, name: sentinel.name });
 *   const master = await sentinel.master();
 *   await sentinel.kill(master.port);
 *   await sentinel.waitForFailover(master.port);
 * } finally {
 *   await sentinel.stop();
 * }
 */
import type { ChildProcess } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, launchRedisServer, startRedisServer, stopProcess, until, withConnection } from './redis-server.js';
import type { RedisServer } from './redis-server.js';
import type Redis from 'ioredis';

/** Where a node listens: what ioredis' `sentinels` and node-redis' `sentinelRootNodes` take. */
export interface RedisAddress {
  host: string;
  port: number;
}

/** A master and its replicas, each a RedisServer (kill, pause, restart: a restarted replica follows its master again). */
export interface RedisReplicas {
  readonly master: RedisServer;
  readonly replicas: readonly RedisServer[];
  /** Resolves once every replica's link to the master is up and it has the master's writes so far. */
  inSync(timeoutMs?: number): Promise<void>;
  stop(): Promise<void>;
}

/** A master and `replicas` replicas of it, in sync before it resolves. */
export async function startRedisReplicas(options: { replicas?: number } = {}): Promise<RedisReplicas> {
  const master = await startRedisServer();
  const replicas: RedisServer[] = [];
  const stop = async (): Promise<void> => {
    await Promise.all([...replicas, master].map((server) => server.stop()));
  };
  try {
    for (let i = 0; i < (options.replicas ?? 1); i += 1)
      replicas.push(await startRedisServer(['--replicaof', '127.0.0.1', String(master.port)]));
    const set: RedisReplicas = {
      master,
      replicas,
      inSync: (timeoutMs = 30_000) => untilInSync(master.port, replicas, timeoutMs),
      stop,
    };
    await set.inSync();
    return set;
  } catch (error) {
    await stop();
    throw error;
  }
}

async function untilInSync(masterPort: number, replicas: readonly RedisServer[], timeoutMs: number): Promise<void> {
  await until(
    async () => {
      const offset = replicationOffset(await withConnection(masterPort, (client) => client.info('replication')));
      const states = await Promise.all(
        replicas.map((replica) => withConnection(replica.port, (client) => client.info('replication'))),
      );
      return states.every(
        (info) => /^master_link_status:up/m.test(info) && replicationOffset(info, 'slave_repl_offset') >= offset,
      );
    },
    timeoutMs,
    () => `The replicas were not in sync with their master within ${timeoutMs} ms.`,
  );
}

function replicationOffset(info: string, field = 'master_repl_offset'): number {
  return Number(new RegExp(`^${field}:(\\d+)`, 'm').exec(info)?.[1] ?? -1);
}

export interface RedisSentinelOptions {
  /** @default 1 */
  replicas?: number;
  /** @default 3 */
  sentinels?: number;
  /** `down-after-milliseconds`: how long the master may not answer before a sentinel counts it down. @default 1_000 */
  downAfterMs?: number;
  /** `failover-timeout`. @default 5_000 */
  failoverTimeoutMs?: number;
}

export interface RedisSentinel {
  /** The master's name, as the sentinels monitor it: ioredis' `name`, node-redis' `name`. */
  readonly name: string;
  /** The sentinels: ioredis' `sentinels`, node-redis' `sentinelRootNodes`. */
  readonly sentinels: readonly RedisAddress[];
  /** Every data node started, master and replicas, killed ones included. */
  readonly nodes: readonly RedisAddress[];
  /** The master as the sentinels name it now (`SENTINEL get-master-addr-by-name`, asked of a live sentinel). */
  master(): Promise<RedisAddress>;
  /** The ports of the data nodes still running. */
  livePorts(): number[];
  /** Ends a data node at once (SIGKILL), as a crash would; resolves once its process has ended. */
  kill(port: number): Promise<void>;
  /**
   * Resolves once the sentinels name a master other than `formerPort`, and that node says it is a master: a replica
   * has taken over. Rejects after `timeoutMs`.
   */
  waitForFailover(formerPort: number, timeoutMs?: number): Promise<RedisAddress>;
  /** Ends every node and sentinel, and removes the sentinels' folder. */
  stop(): Promise<void>;
}

/** The master's name the sentinels monitor. */
const MASTER_NAME = 'token-keeper';

/**
 * A master, its replicas and `sentinels` sentinels monitoring it with a quorum of a majority, each sentinel on a free
 * port with a config of its own (sentinels rewrite theirs); resolves once every sentinel sees every replica.
 */
export async function startRedisSentinel(options: RedisSentinelOptions = {}): Promise<RedisSentinel> {
  const data = await startRedisReplicas({ replicas: options.replicas ?? 1 });
  const dir = await mkdtemp(join(tmpdir(), 'token-keeper-sentinel-'));
  const sentinels: Array<{ port: number; process: ChildProcess }> = [];
  const servers = [data.master, ...data.replicas];
  const stop = async (): Promise<void> => {
    await Promise.all(sentinels.map((sentinel) => stopProcess(sentinel.process, 'SIGKILL')));
    await Promise.all(servers.map((server) => server.kill()));
    await rm(dir, { recursive: true, force: true });
  };
  const count = options.sentinels ?? 3;
  try {
    for (let i = 0; i < count; i += 1) sentinels.push(await startSentinel(dir, data.master.port, count, options));
    const alive = servers.map(() => true);
    const live = () => servers.filter((_, index) => alive[index]);
    // The first sentinel that answers: one may be down, or busy electing.
    const ask = async <T>(question: (client: Redis) => Promise<T>): Promise<T> => {
      let failure: unknown;
      for (const sentinel of sentinels) {
        try {
          return await withConnection(sentinel.port, question);
        } catch (error) {
          failure = error;
        }
      }
      throw failure;
    };
    const master = async (): Promise<RedisAddress> => {
      const [host, port] = (await ask((client) => client.call('SENTINEL', 'get-master-addr-by-name', MASTER_NAME))) as [
        string,
        string,
      ];
      return { host, port: Number(port) };
    };
    const set: RedisSentinel = {
      name: MASTER_NAME,
      sentinels: sentinels.map(({ port }) => ({ host: '127.0.0.1', port })),
      nodes: servers.map(({ port }) => ({ host: '127.0.0.1', port })),
      master,
      livePorts: () => live().map((server) => server.port),
      async kill(port) {
        const index = servers.findIndex((server) => server.port === port);
        if (index === -1) throw new RangeError(`No data node listens on port ${port}.`);
        alive[index] = false;
        await servers[index]!.kill();
      },
      async waitForFailover(formerPort, timeoutMs = 30_000) {
        let now: RedisAddress | undefined;
        await until(
          async () => {
            now = await master();
            if (now.port === formerPort) return false;
            const info = await withConnection(now.port, (client) => client.info('replication'));
            return /^role:master/m.test(info);
          },
          timeoutMs,
          () => `No replica took over from the master on port ${formerPort} within ${timeoutMs} ms.`,
        );
        return now!;
      },
      stop,
    };
    // Every sentinel knows the replicas, and the other sentinels: a failover needs both.
    await until(
      async () => {
        const views = await Promise.all(
          sentinels.map(({ port }) =>
            withConnection(port, async (client) => {
              const replicas = (await client.call('SENTINEL', 'replicas', MASTER_NAME)) as unknown[];
              const others = (await client.call('SENTINEL', 'sentinels', MASTER_NAME)) as unknown[];
              return replicas.length === data.replicas.length && others.length === count - 1;
            }),
          ),
        );
        return views.every(Boolean);
      },
      30_000,
      () => 'The sentinels did not see every replica and each other within 30 s.',
    );
    return set;
  } catch (error) {
    await stop();
    throw error;
  }
}

async function startSentinel(
  dir: string,
  masterPort: number,
  count: number,
  options: RedisSentinelOptions,
): Promise<{ port: number; process: ChildProcess }> {
  for (let attempt = 1; ; attempt += 1) {
    const port = await freePort();
    const config = join(dir, `sentinel-${port}.conf`);
    await writeFile(
      config,
      [
        `port ${port}`,
        `dir ${dir}`,
        `sentinel monitor ${MASTER_NAME} 127.0.0.1 ${masterPort} ${Math.floor(count / 2) + 1}`,
        `sentinel down-after-milliseconds ${MASTER_NAME} ${options.downAfterMs ?? 1_000}`,
        `sentinel failover-timeout ${MASTER_NAME} ${options.failoverTimeoutMs ?? 5_000}`,
        `sentinel parallel-syncs ${MASTER_NAME} 1`,
        '',
      ].join('\n'),
    );
    try {
      return { port, process: await launchRedisServer([config, '--sentinel'], '+monitor master') };
    } catch (error) {
      if (attempt === 3) throw error;
    }
  }
}
