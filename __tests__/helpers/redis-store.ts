// What the RedisTokenStore's test files (redis-store-*.test.ts) share: a real redis-server per file and the file's own
// connection to it, to look at and plant keys; a prefix and an undo list per test; stores on connections of their own,
// as other processes would have; and the test's looks at the keys, the channels and what a store sends.
import axios from 'axios';
import type { AxiosInstance } from 'axios';
import Redis from 'ioredis';
import { attachTokenAuth } from '../../lib/index.js';
import type { TokenAuth } from '../../lib/index.js';
import type { TokenServiceEmulator } from '../../lib/emulator/index.js';
import { escapeAccountName } from '../../lib/stores/common/account-key.js';
import { RedisTokenStore } from '../../lib/stores/redis/index.js';
import type { RedisTokenStoreOptions } from '../../lib/stores/redis/index.js';
import { isLockScript } from '../../harness/redis-clients.js';
import type { RedisServer } from '../../harness/redis-server.js';
import { E2E_PASSWORD, E2E_USER } from './emulator.js';
import { undoAfterEach } from './flow.js';
import { prefixPerTest, redisForFile } from './redis.js';
import { undoable } from './store-contract.js';
import type { LeaseRig } from './store-contract.js';

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** The keys of an account: its pair, its fence, its lock, its record, and the channel its writes are told on. */
export type KeyName = 'pair' | 'fence' | 'lock' | 'account' | 'changed';

/** What a store sends on a connection {@link watched} counts. */
export interface Sent {
  /** Its tries at the lock (the LOCK script's EVALs). */
  lockTries: number;
  /** Its reads of the pair (GETs). */
  reads: number;
}

/**
 * Counts what a store sends on `client` (wrapped in place, before the store is made): its lock tries (the LOCK
 * script's EVALs) and its reads of the pair (GETs), so that a test waits for the try or the read it means.
 */
export function watched(client: Redis): Sent {
  const seen = { lockTries: 0, reads: 0 };
  const evaluate = client.eval.bind(client) as (script: string, ...rest: (string | number)[]) => Promise<unknown>;
  const read = client.get.bind(client);
  client.eval = ((script: string, ...rest: (string | number)[]) => {
    if (isLockScript(script)) seen.lockTries += 1;
    return evaluate(script, ...rest);
  }) as typeof client.eval;
  client.get = (name: string) => {
    seen.reads += 1;
    return read(name);
  };
  return seen;
}

/** Waits until `condition` holds, asking again every few milliseconds; fails after `timeoutMs`. */
export async function eventually(condition: () => Promise<boolean>, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await sleep(5);
  }
}

/** What a test file of the RedisTokenStore uses; `server`, `redis`, `prefix` and `serial` as the running test sees them. */
export interface RedisStoreFile {
  server: () => RedisServer;
  /** The test file's own connection, to look at and plant keys. */
  redis: () => Redis;
  /** The running test's prefix, of its own. */
  prefix: () => string;
  /** The running test's number in the file. */
  serial: () => number;
  /** Connections, locks, subscriptions and plugin handles the test took: undone after it, even when it fails. */
  undo: Array<() => unknown>;
  /** The key of the default account's `name` under the running test's prefix. */
  key: (name: KeyName) => string;
  /** A named account's key, as RedisTokenStore.forAccount documents it: `{prefix#escaped name}#pair`, … */
  accountKey: (name: string, what: KeyName) => string;
  /** A new connection, as another process would have; closed after the test. */
  connection: (name?: string) => Redis;
  /** A second connection for pub/sub, as the README shows (`redis.duplicate()`); closed after the test. */
  subscriberOf: (client: Redis) => Redis;
  /** A store on a connection of its own; with `pubsub`, on a subscriber connection too. */
  store: (options?: Partial<RedisTokenStoreOptions> & { pubsub?: boolean }, client?: Redis) => RedisTokenStore;
  locked: ReturnType<typeof undoable>['locked'];
  listen: ReturnType<typeof undoable>['listen'];
  /** The default account's keys under the running test's prefix, sorted. */
  keys: () => Promise<string[]>;
  /** Every key of this test's prefix, its named accounts' included, as SCAN finds them on the server. */
  scanned: () => Promise<string[]>;
  /**
   * How many subscriptions Redis counts on this prefix's channels, its named accounts' included: a store listens once
   * Redis has its SUBSCRIBE.
   */
  subscriptions: () => Promise<number>;
  /** The lease at the lock key that `lockKey()` names, as the lock contract sees it. */
  leaseAt: (lockKey: () => string) => LeaseRig;
  /**
   * The plugin on `service` with the emulator's account, over a store on a connection {@link watched} counts, which
   * takes `options`: what the store sends, as the test waits for it. Ejected after the test.
   */
  attachWatched: (
    service: TokenServiceEmulator,
    options: Partial<RedisTokenStoreOptions> & { pubsub?: boolean },
  ) => { api: AxiosInstance; auth: TokenAuth; sent: Sent };
}

/**
 * A real redis-server for the test file that calls this (at its top level), and what its tests use of it. Without
 * redis-server the file fails here, once, with the command that installs it.
 */
export function redisStoreForFile(): RedisStoreFile {
  const { server, redis } = redisForFile();
  const { prefix, serial } = prefixPerTest('token-keeper-test');
  const undo = undoAfterEach();
  const { locked, listen } = undoable(() => undo);

  const key = (name: KeyName) => `{${prefix()}}:${name}`;
  const accountKey = (name: string, what: KeyName) => `{${prefix()}#${escapeAccountName(name)}}#${what}`;

  function connection(name?: string): Redis {
    const client = new Redis(server().url, name ? { connectionName: name } : {});
    undo.push(() => client.quit());
    return client;
  }

  function subscriberOf(client: Redis): Redis {
    const subscriber = client.duplicate();
    undo.push(() => subscriber.quit());
    return subscriber;
  }

  function store(
    options: Partial<RedisTokenStoreOptions> & { pubsub?: boolean } = {},
    client = connection(),
  ): RedisTokenStore {
    const { pubsub, ...rest } = options;
    const created = new RedisTokenStore(client, {
      prefix: prefix(),
      ...rest,
      ...(pubsub ? { subscriber: subscriberOf(client) } : {}),
    });
    if (pubsub) undo.push(() => created.close());
    return created;
  }

  return {
    server,
    redis,
    prefix,
    serial,
    undo,
    key,
    accountKey,
    connection,
    subscriberOf,
    store,
    locked,
    listen,
    keys: async () => (await redis().keys(`{${prefix()}}*`)).sort(),
    scanned: async () => {
      const found: string[] = [];
      let cursor = '0';
      do {
        const [next, batch] = await redis().scan(cursor, 'MATCH', `{${prefix()}[#}]*`, 'COUNT', 1_000);
        found.push(...batch);
        cursor = next;
      } while (cursor !== '0');
      return found.sort();
    },
    subscriptions: async () => {
      const channels = (await redis().call('PUBSUB', 'CHANNELS', `{${prefix()}[#}]*`)) as string[];
      if (channels.length === 0) return 0;
      const counts = (await redis().call('PUBSUB', 'NUMSUB', ...channels)) as Array<string | number>;
      return counts.filter((_, index) => index % 2 === 1).reduce<number>((sum, count) => sum + Number(count), 0);
    },
    leaseAt: (lockKey) => ({
      where: lockKey,
      owner: () => redis().get(lockKey()),
      ttlLeft: () => redis().pttl(lockKey()),
      // A killed holder's key expires with its lease, as nobody extends it.
      plant: async (owner, holder) =>
        void (await redis().set(lockKey(), owner, 'PX', holder === 'killed' ? 500 : 10_000)),
      // Its holder stalled past its lease: the key is gone.
      lapse: async () => void (await redis().del(lockKey())),
    }),
    attachWatched: (service, options) => {
      const api = axios.create({ baseURL: service.url });
      const client = connection();
      const sent = watched(client);
      const auth = attachTokenAuth(api, {
        credentials: { username: E2E_USER, password: E2E_PASSWORD },
        store: store(options, client),
      });
      undo.push(() => auth.eject());
      return { api, auth, sent };
    },
  };
}
