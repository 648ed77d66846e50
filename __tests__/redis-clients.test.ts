// RedisTokenStore with every client it takes, as users open them (harness/redis-clients.ts): ioredis 5 and 6, node-redis
// 4, 5 and 6, in RESP2 and RESP3, each with a subscriber, against one real redis-server for the file, and the sentinel
// clients of ioredis and node-redis 5 through Redis Sentinel. The store contracts run with each; then the leak of a
// token through a client's error; then the clients it refuses.
import { inspect } from 'node:util';
import Redis from 'ioredis';
import Redis6 from 'ioredis6';
import { createClient as createClient4, createCluster as createCluster4 } from 'redis4';
import { createClient as createClient5 } from 'redis5';
import { createClient as createClient6 } from 'redis6';
import { RedisTokenStore } from '../lib/stores/redis/index.js';
import type { RedisClientLike, RedisSubscriberLike, RedisTokenStoreOptions } from '../lib/stores/redis/index.js';
import { clientLabel, openRedis, TESTED_CLIENTS } from '../harness/redis-clients.js';
import type { RedisClientChoice, RedisConnections, RedisTarget } from '../harness/redis-clients.js';
import { subscriptions } from '../harness/redis-server.js';
import { startRedisSentinel } from '../harness/redis-sentinel.js';
import type { RedisSentinel } from '../harness/redis-sentinel.js';
import { closeEmulatorsAfterEach, emulator } from './helpers/emulator.js';
import { undoAfterEach, until } from './helpers/flow.js';
import { prefixPerTest, redisForFile, whileRedisRefusesWrites } from './helpers/redis.js';
import {
  CONTRACT_NAMES,
  expectRoundTrip,
  PAIR_A,
  PAIR_B,
  testAccountRecord,
  testStoreAccounts,
  testStoreLock,
  undoable,
} from './helpers/store-contract.js';
import { escapeAccountName } from '../lib/stores/common/account-key.js';

const { server, redis } = redisForFile();
closeEmulatorsAfterEach();

const { prefix } = prefixPerTest('clients-test');
/** Connections, subscriptions and plugin handles the test took: undone after it, even when it fails. */
const undo = undoAfterEach();

const key = (name: 'pair' | 'lock') => `{${prefix()}}:${name}`;
const { listen } = undoable(() => undo);

/** Opens `choice`'s client (and subscriber) on `target` (the file's server unless told), closed after the test. */
async function connect(
  choice: RedisClientChoice,
  target: RedisTarget = { url: server().url },
): Promise<RedisConnections> {
  const connections = await openRedis(choice, target, { subscriber: true });
  undo.push(() => connections.close());
  return connections;
}

/** Where the contracts run: the client's target, and the test's own connection to the master (to plant a lock). */
interface Deployment {
  target: () => RedisTarget;
  port: () => number;
  redis: () => Redis;
}

/** The store's contracts, with `choice`'s client and a subscriber, on `deployment`. */
function contractsOn(label: string, choice: RedisClientChoice, deployment: Deployment): void {
  const { port, redis } = deployment;
  /** Two processes' connections: the stores a test opens take them in turn. */
  let processes: RedisConnections[] = [];
  let opened = 0;
  beforeEach(async () => {
    processes = [await connect(choice, deployment.target()), await connect(choice, deployment.target())];
    opened = 0;
  });
  const store = (options: Partial<RedisTokenStoreOptions> = {}): RedisTokenStore => {
    const { client, subscriber } = processes[opened++ % processes.length]!;
    const created = new RedisTokenStore(client, { prefix: prefix(), ...(subscriber && { subscriber }), ...options });
    undo.push(() => created.close());
    return created;
  };

  it('gives back the pair set, and null before any set and after clear()', async () => {
    expect(await store().get()).toBeNull();
    await expectRoundTrip(() => store());
  });

  it("tells a store of another process's writes, and of its own once; after close() of nothing", async () => {
    const subscribed = store();
    const other = store();
    const heard = listen(subscribed).heard;
    const heardByOther = listen(other).heard;
    await until(async () => (await subscriptions(port(), `{${prefix()}}*`)) === 2, 5_000);

    await other.set(PAIR_A);
    await until(() => heard.length === 1, 5_000);
    await subscribed.set(PAIR_B);
    await until(() => heardByOther.length === 2, 5_000);
    await other.clear();
    await until(() => heard.length === 3, 5_000);
    expect(heard).toEqual([PAIR_A, PAIR_B, null]);
    expect(heardByOther).toEqual([PAIR_A, PAIR_B, null]);

    await subscribed.close();
    await until(async () => (await subscriptions(port(), `{${prefix()}}*`)) === 1, 5_000);
    await other.set(PAIR_A);
    await until(() => heardByOther.length === 4, 5_000);
    expect(heard).toHaveLength(3);
  });

  it('reports a Redis error without the tokens written, whatever the client attaches to it', async () => {
    const service = await emulator();
    // A full Redis refuses every write; the error names the command, and some clients attach its arguments.
    const { failures, status, tokens } = await whileRedisRefusesWrites(redis(), service, store(), (auth) =>
      undo.push(() => auth.eject()),
    );

    expect(status).toBe(200);
    const reported = inspect(failures, { depth: Infinity, showHidden: true });
    expect(failures.length).toBeGreaterThan(0);
    expect(reported).toMatch(/OOM/);
    expect(reported).not.toContain(tokens!.access);
    expect(reported).not.toContain(tokens!.refresh);
    expect(service.counters).toMatchObject({ logins: 1, refreshes: 0 });
  });

  testStoreLock(label, {
    open: (timings) => store(timings),
    fences: 'every grant',
    lease: {
      where: () => key('lock'),
      owner: () => redis().get(key('lock')),
      ttlLeft: () => redis().pttl(key('lock')),
      plant: async (owner, holder) =>
        void (await redis().set(key('lock'), owner, 'PX', holder === 'killed' ? 500 : 10_000)),
      lapse: async () => void (await redis().del(key('lock'))),
    },
  });

  testAccountRecord(label, { open: () => store(), fences: 'every grant' });

  // The contracts per account, for one name that carries every hostile character (redis-store-accounts.test.ts runs
  // more).
  const named = CONTRACT_NAMES[0]!;
  const namedKey = () => `{${prefix()}#${escapeAccountName(named)}}#lock`;
  testStoreAccounts(label, {
    open: (timings) => store(timings),
    fences: 'every grant',
    record: true,
    names: [named],
    lease: () => ({
      where: namedKey,
      owner: () => redis().get(namedKey()),
      ttlLeft: () => redis().pttl(namedKey()),
      plant: async (owner, holder) =>
        void (await redis().set(namedKey(), owner, 'PX', holder === 'killed' ? 500 : 10_000)),
      lapse: async () => void (await redis().del(namedKey())),
    }),
    listening: (count) => until(async () => (await subscriptions(port(), `{${prefix()}[#}]*`)) === count, 5_000),
  });

  it('listens for the default account and several named ones on its one subscriber connection, a channel each, and lets a channel go with its last listener', async () => {
    const parent = store();
    const names = ['alice', 'a:b', '{c}'];
    const listeners = [listen(parent), ...names.map((name) => listen(parent.forAccount(name)))];
    /** The channels of the connections subscribed to any: this store's subscriber alone (not the sentinels' own). */
    const subscribed = async (): Promise<number[]> =>
      ((await redis().client('LIST')) as string)
        .split('\n')
        .filter((line) => !/ name=sentinel-/.test(line))
        .map((line) => Number(/ sub=(\d+) /.exec(line)?.[1] ?? 0))
        .filter((channels) => channels > 0);
    await until(async () => (await subscribed()).join() === '4', 5_000);

    const other = store();
    for (const [index, name] of names.entries()) await other.forAccount(name).set({ access: `access-${index}` });
    await other.set(PAIR_A);
    await until(() => listeners.every((listener) => listener.heard.length === 1), 5_000);
    expect(listeners.map((listener) => listener.heard)).toEqual([
      [PAIR_A],
      ...names.map((_, index) => [{ access: `access-${index}` }]),
    ]);

    for (const listener of listeners.slice(1)) listener.stop();
    await until(async () => (await subscribed()).join() === '1', 5_000);
  });
}

describe.each(TESTED_CLIENTS.map((choice) => [clientLabel(choice), choice] as const))(
  'RedisTokenStore on %s, with a subscriber',
  (label, choice) =>
    contractsOn(label, choice, { target: () => ({ url: server().url }), port: () => server().port, redis }),
);

/** Sentinel's clients: ioredis `new Redis({ sentinels, name })` and node-redis 5 and 6 `createSentinel()`. */
const SENTINEL_CLIENTS: readonly RedisClientChoice[] = [{ library: 'ioredis' }, { library: 'redis5' }];

describe('through Redis Sentinel (a master, a replica and 3 sentinels)', () => {
  let sentinel: RedisSentinel | undefined;
  let master: { port: number } | undefined;
  let connection: Redis | undefined;
  beforeAll(async () => {
    sentinel = await startRedisSentinel();
    master = await sentinel.master();
    connection = new Redis({ host: '127.0.0.1', port: master.port });
  }, 60_000);
  afterAll(async () => {
    await connection?.quit();
    await sentinel?.stop();
  });

  describe.each(SENTINEL_CLIENTS.map((choice) => [clientLabel(choice), choice] as const))(
    'RedisTokenStore on the sentinel client of %s, with a subscriber',
    (label, choice) =>
      contractsOn(label, choice, {
        target: () => ({ sentinels: sentinel!.sentinels, name: sentinel!.name }),
        port: () => master!.port,
        redis: () => connection!,
      }),
  );
});

describe('RedisTokenStore: the clients it refuses, saying what to pass instead', () => {
  const make =
    (client: unknown, options: Partial<RedisTokenStoreOptions> = {}) =>
    () =>
      new RedisTokenStore(client as RedisClientLike, { prefix: prefix(), ...options });
  /** A client that is opened (or not) by the test, and closed after it. */
  const later = <T extends { quit(): Promise<unknown>; on(event: 'error', listener: () => void): unknown }>(
    client: T,
  ): T => {
    // node-redis emits a connection's errors as events, which would end the test run without a listener.
    client.on('error', () => undefined);
    undo.push(async () => {
      // An ioredis connection quit while it connects fails its ready check later and keeps the process 2 s more.
      const ioredis = client as unknown as { status?: string; once(event: string, listener: () => void): unknown };
      if (ioredis.status === 'connecting' || ioredis.status === 'connect')
        await new Promise<void>((settled) => (ioredis.once('ready', settled), ioredis.once('end', settled)));
      await client.quit().catch(() => undefined);
    });
    return client;
  };
  /** Closes an ioredis connection and waits until it says so (`status` 'end'): `quit()` resolves before. */
  const closed = async <T extends Redis | Redis6>(client: T): Promise<T> => {
    const ended = new Promise((resolve) => client.once('end', resolve));
    await client.quit();
    await ended;
    return client;
  };

  it.each<[string, unknown, string]>([
    ['nothing', undefined, 'got undefined'],
    ['a plain object', {}, 'got a plain object'],
    ['a URL', 'redis://127.0.0.1:6379', 'got a string (a URL?)'],
    ['a store', new Map(), 'got an object of class Map'],
    ['a client with only get()', { get: () => Promise.resolve(null) }, 'got a plain object'],
  ])(
    'refuses %s as the client, asking for an ioredis, a connected node-redis or an @upstash/redis client',
    (_what, client, got) => {
      expect(make(client)).toThrow(TypeError);
      expect(make(client)).toThrow(
        'RedisTokenStore: the first argument must be an ioredis `Redis` or `Cluster` (`new Redis(url)`), a ' +
          'node-redis client, cluster or sentinel, connected (`const client = createClient({ url }); ' +
          `await client.connect()\`), or an @upstash/redis client (\`new Redis({ url, token })\`); ${got}.`,
      );
    },
  );

  it.each([
    ['a node-redis 4 client', () => createClient4({ url: server().url })],
    ['a node-redis 5 client', () => createClient5({ url: server().url })],
    ['a node-redis 6 client', () => createClient6({ url: server().url })],
    ['a node-redis 4 cluster', () => createCluster4({ rootNodes: [{ url: server().url }] })],
  ])('refuses %s that is not connected, asking for `await client.connect()`', (_what, create) => {
    const client = create();
    expect(make(client)).toThrow(TypeError);
    expect(make(client)).toThrow(
      'RedisTokenStore: the first argument is a node-redis client that is not open, on which every command would ' +
        'fail: call `await client.connect()` before handing it to the store.',
    );
  });

  it('refuses a node-redis 4 client in legacyMode, whose commands take callbacks', () => {
    // Not connected: legacyMode is what the refusal names, connected or not.
    const client = createClient4({ url: server().url, legacyMode: true });
    expect(make(client)).toThrow(
      'RedisTokenStore: the first argument is a node-redis 4 client in `legacyMode`, whose commands take callbacks: ' +
        'pass a client without it, such as `client.duplicate({ legacyMode: false })`, connected.',
    );
  });

  it.each([
    ['ioredis 5', () => new Redis(server().url)],
    ['ioredis 6', () => new Redis6(server().url)],
  ])('refuses a closed %s connection', async (_what, create) => {
    const client = await closed(create());
    expect(make(client)).toThrow(
      'RedisTokenStore: the first argument is an ioredis connection that was closed (`quit()` or `disconnect()`), ' +
        'on which every command would fail: pass an open one.',
    );
  });

  it('refuses an ioredis connection in subscriber mode as the client, and takes it as the subscriber', async () => {
    const client = later(new Redis(server().url));
    const subscribed = later(client.duplicate());
    await subscribed.subscribe('some-channel');

    expect(make(subscribed)).toThrow(
      'RedisTokenStore: the first argument is an ioredis connection in subscriber mode, which can send no other ' +
        'command: pass your main connection first, and this one as `subscriber`.',
    );
    expect(make(client, { subscriber: subscribed })()).toBeInstanceOf(RedisTokenStore);
  });

  it.each([
    ['node-redis 4', () => createClient4({ url: server().url })],
    ['node-redis 5', () => createClient5({ url: server().url })],
    ['node-redis 6 (RESP3, where it could still send commands)', () => createClient6({ url: server().url })],
  ])('refuses a %s client in subscriber mode as the client', async (_what, create) => {
    const client = later(create());
    await client.connect();
    await client.subscribe('some-channel', () => undefined);

    expect(make(client)).toThrow(
      'RedisTokenStore: the first argument is a node-redis client in subscriber mode (it has subscribed), which ' +
        'can send no other command: pass your main client first, and this one as `subscriber`.',
    );
  });

  it.each([
    ['ioredis', () => new Redis(server().url), '`redis.duplicate()`'],
    [
      'node-redis',
      () => createClient5({ url: server().url }),
      '`client.duplicate()`, connected (`await subscriber.connect()`)',
    ],
  ])('refuses the %s client itself as its subscriber', async (_what, create, second) => {
    const client = later(create());
    if ('isOpen' in client) await client.connect();
    expect(make(client, { subscriber: client as RedisSubscriberLike })).toThrow(
      'RedisTokenStore: `subscriber` is the connection given as the first argument; once subscribed it could send ' +
        `no other command. Pass a second connection: ${second}.`,
    );
  });

  it('refuses a node-redis subscriber that is not connected, asking for `await subscriber.connect()`', async () => {
    const client = later(createClient6({ url: server().url }));
    await client.connect();
    expect(make(client, { subscriber: client.duplicate() })).toThrow(
      'RedisTokenStore: `subscriber` is a node-redis subscriber that is not open, on which every command would ' +
        'fail: call `await subscriber.connect()` before handing it to the store.',
    );
  });

  it('refuses a closed ioredis subscriber', async () => {
    const client = later(new Redis(server().url));
    const subscriber = await closed(client.duplicate());
    expect(make(client, { subscriber })).toThrow(
      'RedisTokenStore: `subscriber` is an ioredis connection that was closed (`quit()` or `disconnect()`), on ' +
        'which every command would fail: pass an open one.',
    );
  });

  it.each<[string, unknown, string]>([
    ['a channel name', 'tokens', 'got a string (not a client)'],
    ['a plain object', { subscribe: () => Promise.resolve() }, 'got a plain object'],
  ])('refuses %s as the subscriber, asking for a second connection', (_what, subscriber, got) => {
    const client = later(new Redis(server().url, { lazyConnect: true }));
    expect(make(client, { subscriber: subscriber as RedisSubscriberLike })).toThrow(
      'RedisTokenStore: `subscriber` must be a second connection: with ioredis `redis.duplicate()`; with ' +
        'node-redis `client.duplicate()`, connected (`await subscriber.connect()`), or the cluster or sentinel itself with ' +
        `\`createCluster()\` or \`createSentinel()\`; ${got}.`,
    );
  });

  it('takes a node-redis client before its connection is ready: connect() was called, the commands wait for it', async () => {
    const client = later(createClient5({ url: server().url, RESP: 3 }));
    const connecting = client.connect();
    const subscriber = later(client.duplicate());
    const subscribing = subscriber.connect();
    const store = new RedisTokenStore(client, { prefix: prefix(), subscriber });
    undo.push(() => store.close());

    expect(await store.set(PAIR_A)).toBe(true);
    expect(await store.get()).toEqual(PAIR_A);
    await Promise.all([connecting, subscribing]);
  });
});
