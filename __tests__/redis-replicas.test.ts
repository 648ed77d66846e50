// RedisTokenStore where the master has a replica: after each write that other holders depend on (the pair, its
// deletion, the account's record), it waits for the replica to have it (`WAIT 1 ms`, on the connection that took the
// write), with every client it takes; where the master has no replica it never sends WAIT, which would block for its
// whole timeout. A real master and replica (harness/redis-sentinel.ts) and a lone redis-server. Without redis-server
// this file fails here, once, with the command that installs it.
import Redis from 'ioredis';
import { RedisTokenStore } from '../lib/stores/redis/index.js';
import type { RedisTokenStoreOptions } from '../lib/stores/redis/index.js';
import { keySlot } from '../lib/stores/redis/replicas.js';
import { clientLabel, openRedis, TESTED_CLIENTS } from '../harness/redis-clients.js';
import type { RedisClientChoice } from '../harness/redis-clients.js';
import { countCommands, requireRedisServer, startRedisServer, withConnection } from '../harness/redis-server.js';
import type { RedisServer } from '../harness/redis-server.js';
import { startRedisReplicas } from '../harness/redis-sentinel.js';
import type { RedisReplicas } from '../harness/redis-sentinel.js';
import { accountRecord, PAIR_A, PAIR_B } from './helpers/store-contract.js';
import { undoAfterEach } from './helpers/flow.js';
import { prefixPerTest } from './helpers/redis.js';

requireRedisServer();

let replicated: RedisReplicas;
let lone: RedisServer;
beforeAll(async () => {
  [replicated, lone] = await Promise.all([startRedisReplicas({ replicas: 1 }), startRedisServer()]);
}, 60_000);
afterAll(async () => {
  await Promise.all([replicated?.stop(), lone?.stop()]);
});

const { prefix } = prefixPerTest('replicas-test');
/** Connections and stores the test took: undone after it, even when it fails. */
const undo = undoAfterEach();

const pairKey = () => `{${prefix()}}:pair`;
const accountKey = () => `{${prefix()}}:account`;

/** A store on `server` through `choice`'s client and subscriber, closed after the test. */
async function storeOn(
  server: RedisServer,
  choice: RedisClientChoice,
  options: Partial<RedisTokenStoreOptions> = {},
): Promise<RedisTokenStore> {
  const connections = await openRedis(choice, { url: server.url }, { subscriber: true });
  undo.push(() => connections.close());
  const store = new RedisTokenStore(connections.client, {
    prefix: prefix(),
    ...(connections.subscriber && { subscriber: connections.subscriber }),
    ...options,
  });
  undo.push(() => store.close());
  return store;
}

/** Every command the server at `port` runs from now on, as MONITOR sees it, until `stop()`. */
async function monitor(port: number): Promise<{ commands: string[][]; stop(): void }> {
  const client = new Redis({ host: '127.0.0.1', port, lazyConnect: true });
  const watching = await client.monitor();
  const commands: string[][] = [];
  watching.on('monitor', (_time: string, args: string[]) => commands.push(args));
  const stop = () => {
    watching.disconnect();
    client.disconnect();
  };
  undo.push(stop);
  return { commands, stop };
}

describe('keySlot: the hash slot of a key, as Redis Cluster computes it', () => {
  it('is CRC16-XMODEM modulo 16384, of the first non-empty {tag} when the key has one', () => {
    // The check value of CRC16-XMODEM, from the Redis Cluster specification.
    expect(keySlot('123456789')).toBe(0x31c3);
    expect(keySlot('{user1000}.following')).toBe(keySlot('user1000'));
    expect(keySlot('foo{bar}{zap}')).toBe(keySlot('bar'));
    expect(keySlot('foo{{bar}}zap')).toBe(keySlot('{bar'));
    // The tag's bytes, not its characters.
    expect(keySlot('{ünï🙂}:pair')).toBe(keySlot('ünï🙂'));
  });
  // That it agrees with a real cluster's CLUSTER KEYSLOT, empty tags included: redis-cluster.test.ts.
});

describe.each(TESTED_CLIENTS.map((choice) => [clientLabel(choice), choice] as const))(
  'RedisTokenStore on %s',
  (_label, choice) => {
    it('waits for the replica after each write of the pair, its deletion and the account’s record, which the replica then holds; asks the master for its replicas once', async () => {
      const store = await storeOn(replicated.master, choice);
      const onReplica = (key: string) => withConnection(replicated.replicas[0]!.port, (client) => client.get(key));

      const { byCommand } = await countCommands([replicated.master.port], async () => {
        expect(await store.set(PAIR_A)).toBe(true);
        expect(JSON.parse((await onReplica(pairKey()))!)).toMatchObject({ pair: PAIR_A });
        expect(await store.setAccount(accountRecord())).toBe(true);
        expect(await onReplica(accountKey())).not.toBeNull();
        expect(await store.clear()).toBe(true);
        expect(await onReplica(pairKey())).toBeNull();
      });

      expect(byCommand.get('wait')).toBe(3);
      // INFO replication, once: what the master has for replicas is known for the writes that follow.
      expect(byCommand.get('info')).toBe(1);
    });

    it('sends no WAIT where the master has no replica (it would block for its whole timeout), and asks once', async () => {
      const store = await storeOn(lone, choice);

      const { byCommand } = await countCommands([lone.port], async () => {
        await store.set(PAIR_A);
        await store.setAccount(accountRecord());
        await store.set(PAIR_B);
      });

      expect(byCommand.get('wait')).toBeUndefined();
      expect(byCommand.get('info')).toBe(1);
    });
  },
);

describe('RedisTokenStore: the wait for a replica', () => {
  const ioredis: RedisClientChoice = { library: 'ioredis' };

  it('waits `replicaWaitMs` at most (1 s by default), and never more than half the plugin’s `storeTimeoutMs`, which its lock requests carry', async () => {
    const byDefault = await storeOn(replicated.master, ioredis);
    const shorter = await storeOn(replicated.master, ioredis, { replicaWaitMs: 300 });
    const watch = await monitor(replicated.master.port);

    await byDefault.set(PAIR_A);
    await shorter.set(PAIR_B);
    // The plugin's storeTimeoutMs of 400 ms: the write and its wait must end within one store call.
    const lock = await byDefault.lock({ tryTimeoutMs: 400 });
    await byDefault.set(PAIR_A, lock.fence);
    await lock.release();
    watch.stop();

    const waits = watch.commands.filter(([name]) => name?.toLowerCase() === 'wait');
    expect(waits).toEqual([
      ['WAIT', '1', '1000'],
      ['WAIT', '1', '300'],
      ['WAIT', '1', '200'],
    ]);
  });

  it('writes whatever the replica does: one that does not answer costs the write its wait, no failure, and the master is asked for its replicas again at the next write', async () => {
    const store = await storeOn(replicated.master, ioredis, { replicaWaitMs: 200 });
    await store.set(PAIR_A);
    const replica = replicated.replicas[0]!;

    replica.pause();
    const paused = await countCommands([replicated.master.port], () => store.set(PAIR_B)).finally(() =>
      replica.resume(),
    );
    await replicated.inSync();
    const after = await countCommands([replicated.master.port], () => store.set(PAIR_A));

    expect(paused.result).toBe(true);
    expect(paused.byCommand.get('wait')).toBe(1);
    expect(await store.get()).toEqual(PAIR_A);
    // No replica acknowledged: the next write reads INFO replication again (a replica may have gone for good).
    expect(after.byCommand.get('info')).toBe(1);
    expect(after.byCommand.get('wait')).toBe(1);
  });
});
