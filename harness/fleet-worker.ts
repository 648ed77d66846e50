/**
 * One process of a fleet (see fleet.ts): an axios instance with the plugin attached to a shared store, for the default
 * account and the named ones of its config, driven by its parent over IPC. Run bundled (`fleetWorkerScript` in
 * fleet.ts), with its config, as JSON, in FLEET_WORKER_CONFIG.
 *
 * It never prints a token: what it reports are counts, timings, event names and error codes and messages, and those
 * pass through `mask` first in case a message quotes something it should not.
 */
import { performance } from 'node:perf_hooks';
import axios from 'axios';
import type { RedisOptions } from 'ioredis';
import { attachTokenAuth, isTokenAuthError } from '../lib/index.js';
import type { TokenAuthStats, TokenStore, TokenStoreLock, TokenStoreLockRequest } from '../lib/index.js';
import { FileTokenStore } from '../lib/stores/file/index.js';
import { RedisTokenStore } from '../lib/stores/redis/index.js';
import { PostgresTokenStore } from '../lib/stores/postgres/index.js';
import pg from 'pg';
import type { RedisClientLike, RedisSubscriberLike } from '../lib/stores/redis/index.js';
import { E2E_PASSWORD, E2E_USER } from './account.js';
import { connectionNameOf, DEFAULT_ACCOUNT, maskSecrets } from './fleet.js';
import { isLockScript, openRedis } from './redis-clients.js';
import type { FleetEvent, ParentMessage, RedisClientSettings, WorkerConfig, WorkerMessage } from './fleet.js';

const CONFIG_VARIABLE = 'FLEET_WORKER_CONFIG';

/** The passwords to mask: the default account's, and this worker's own once its config is read. */
const passwords = [E2E_PASSWORD];

const mask = (text: string): string => maskSecrets(text, passwords);

/** What a failed request says: the plugin's code or axios's, the HTTP status, the message; never the config. */
function describeError(error: unknown): string {
  if (isTokenAuthError(error)) return mask(`${error.code}: ${error.message}`);
  if (axios.isAxiosError(error))
    return mask(
      `${error.code ?? 'AXIOS_ERROR'}${error.response ? ` (HTTP ${error.response.status})` : ''}: ${error.message}`,
    );
  return mask(error instanceof Error ? `${error.name}: ${error.message}` : String(error));
}

function send(message: WorkerMessage): void {
  // After a disconnect there is nobody to tell.
  if (process.connected) process.send?.(message);
}

function readConfig(): WorkerConfig {
  const text = process.env[CONFIG_VARIABLE];
  if (!text) throw new Error(`${CONFIG_VARIABLE} is not set: start this file through startFleet() in fleet.ts.`);
  return JSON.parse(text) as WorkerConfig;
}

/** Events since the last reply, so that a reply carries what happened between bursts too (a pub/sub load). */
let pending: FleetEvent[] = [];
/** What the Postgres store said through `onWarning`, masked, since the last reply. */
const storeWarnings: string[] = [];

function record(event: FleetEvent): void {
  pending.push(event);
  send({ type: 'event', event });
}

/**
 * The store, with its lock reported: the parent learns which process holds the lock (to kill it there) and when
 * each waited and got it. Everything else goes straight through; a named account's store is reported the same way.
 */
function reporting(store: TokenStore, shareAccount: boolean): TokenStore {
  const wrapped: TokenStore = {
    // Whether it keeps a pair's DPoP key: a wrapper that dropped it would have `dpop` refuse the store.
    dpopKeys: store.dpopKeys,
    get: async () => {
      const pair = await store.get();
      // Frozen with the lock held and the pair read: the parent thaws it after another holder renewed.
      if (freeze.armed && locksHeld > 0) {
        freeze.armed = false;
        process.kill(process.pid, 'SIGSTOP');
      }
      return pair;
    },
    set: (pair, fence) => store.set(pair, fence),
    clear: (fence) => store.clear(fence),
  };
  if (store.forAccount) wrapped.forAccount = (name) => reporting(store.forAccount!(name), shareAccount);
  if (store.subscribe) wrapped.subscribe = (listener) => store.subscribe!(listener);
  // The account's record: a wrapper that dropped these would leave each process its own guards.
  if (shareAccount && store.getAccount && store.setAccount) {
    wrapped.getAccount = () => store.getAccount!();
    wrapped.setAccount = (record, fence) => store.setAccount!(record, fence);
  }
  if (store.lock) {
    wrapped.lock = async (request?: TokenStoreLockRequest): Promise<TokenStoreLock> => {
      record({ name: 'lock-requested', at: Date.now() });
      let lock: TokenStoreLock;
      try {
        lock = await store.lock!(request);
      } catch (error) {
        // The plugin stopped waiting (a newer pair arrived): no failure of the store's.
        if (request?.signal?.aborted) record({ name: 'lock-abandoned', at: Date.now() });
        else record({ name: 'lock-failed', at: Date.now(), message: describeError(error) });
        throw error;
      }
      record({ name: 'lock-acquired', at: Date.now(), ...(lock.fence !== undefined && { fence: lock.fence }) });
      locksHeld += 1;
      return {
        ...(lock.fence !== undefined && { fence: lock.fence }),
        ...(lock.leaseLeftMs && { leaseLeftMs: () => lock.leaseLeftMs!() }),
        release: async () => {
          locksHeld -= 1;
          await lock.release();
          record({ name: 'lock-released', at: Date.now() });
        },
      };
    };
  }
  return wrapped;
}

/** Locks this worker holds now, and whether the next read under one stops it (the parent's `freeze-after-read`). */
let locksHeld = 0;
const freeze = { armed: false };

/** Tries at the lock since the last reply, as the LOCK script answered them. */
const lockTries = { grants: 0, refused: 0 };

/**
 * Counts the store's tries at the lock, by wrapping on the client itself (so that the store still recognises it) the
 * method the store sends its scripts with: `eval`, or `sendCommand` on a node-redis cluster or sentinel. A call of the LOCK script
 * (the one that takes `KEYS[3]` with `SET … NX`) answers `[1, fence]` when granted and `[0, …]` when another process
 * holds it.
 */
function countLockTries(client: RedisClientLike): void {
  const method =
    ('getSlotMaster' in client || 'getSentinelNode' in client) && 'sendCommand' in client ? 'sendCommand' : 'eval';
  const send = (client as unknown as Record<string, (...args: unknown[]) => Promise<unknown>>)[method]!.bind(client);
  const counting = async (...args: unknown[]): Promise<unknown> => {
    const reply = await send(...args);
    if (args.flat().some(isLockScript) && Array.isArray(reply)) {
      if (Number(reply[0]) === 1) lockTries.grants += 1;
      else lockTries.refused += 1;
    }
    return reply;
  };
  Object.assign(client, { [method]: counting });
}

/**
 * Keeps the replies to the subscriber's SUBSCRIBE, by wrapping its `subscribe` in place: once they are answered, this
 * process hears every pair written from then on (on a cluster too, where a PING would go to another node than the
 * subscription's).
 */
function confirming(subscriber: RedisSubscriberLike): Promise<unknown>[] {
  const subscribed: Promise<unknown>[] = [];
  const subscribe = subscriber.subscribe.bind(subscriber) as (...args: unknown[]) => Promise<unknown>;
  Object.assign(subscriber, {
    subscribe: (...args: unknown[]) => {
      const reply = subscribe(...args);
      subscribed.push(reply.catch(() => undefined));
      return reply;
    },
  });
  return subscribed;
}

/** The worker's ioredis options: `lazyConnect`, one retry of a command across a reconnect, and the test's. */
function redisOptions(settings: RedisClientSettings = {}): RedisOptions {
  return sentinelOptions({ maxRetriesPerRequest: 1, ...settings });
}

/** The worker's ioredis options through Sentinel: `lazyConnect`, and the test's over ioredis' own. */
function sentinelOptions(settings: RedisClientSettings = {}): RedisOptions {
  const { maxReconnectDelayMs, ...rest } = settings;
  return {
    lazyConnect: true,
    ...rest,
    ...(maxReconnectDelayMs !== undefined && { retryStrategy: (times) => Math.min(times * 50, maxReconnectDelayMs) }),
  };
}

async function main(): Promise<void> {
  const config = readConfig();
  const account = config.account ?? { username: E2E_USER, password: E2E_PASSWORD };
  const accounts = config.accounts ?? {};
  passwords.push(account.password, ...Object.values(accounts).map((each) => each.password));
  passwords.push(...(config.encryption?.keys.map((key) => key.secret) ?? []));
  const encryption = config.encryption && { encryption: config.encryption };
  const closers: Array<() => Promise<unknown>> = [];
  let store: FileTokenStore | RedisTokenStore | PostgresTokenStore;
  let subscribed: Promise<unknown>[] = [];
  const timings = config.lock ?? {};
  if (config.store.kind === 'file') {
    store = new FileTokenStore(config.store.path, {
      ...timings,
      ...encryption,
      ...(config.store.watch !== undefined && { watch: config.store.watch }),
    });
  } else if (config.store.kind === 'postgres') {
    const { store: settings } = config;
    const pool = new pg.Pool({ connectionString: settings.url, max: settings.poolMax ?? 5 });
    // pg emits 'error' for an idle connection the server ended (a restart): the store's next statement says it.
    pool.on('error', () => undefined);
    const postgresStore = new PostgresTokenStore(pool, {
      key: settings.key,
      ...timings,
      ...encryption,
      ...(settings.news !== undefined && { news: settings.news }),
      ...(settings.newsPollMs !== undefined && { newsPollMs: settings.newsPollMs }),
      onWarning: (message) => storeWarnings.push(mask(message)),
    });
    closers.push(
      () => postgresStore.close(),
      () => pool.end(),
    );
    store = postgresStore;
  } else {
    const { store: settings } = config;
    const name = config.nameConnections ? { name: connectionNameOf(process.pid) } : {};
    const connections = await openRedis(
      settings.driver ?? { library: 'ioredis' },
      settings.kind === 'redis'
        ? { url: settings.url }
        : settings.kind === 'redis-sentinel'
          ? { sentinels: settings.sentinels, name: settings.name }
          : { nodes: settings.nodes },
      settings.kind === 'redis'
        ? // No retries of commands across a reconnect: a test wants to see a store failure, not a hidden delay.
          { subscriber: settings.pubsub, ioredis: redisOptions(settings.client), ...name }
        : settings.kind === 'redis-sentinel'
          ? // ioredis' own retries: a command waits across the failover, which the plugin's storeTimeoutMs bounds.
            { subscriber: settings.pubsub, ioredis: sentinelOptions(settings.client), ...name }
          : { subscriber: settings.pubsub, ...(settings.client && { ioredisCluster: settings.client }), ...name },
    );
    closers.push(() => connections.close());
    countLockTries(connections.client);
    if (connections.subscriber) subscribed = confirming(connections.subscriber);
    const redisStore = new RedisTokenStore(connections.client, {
      prefix: settings.prefix,
      ...timings,
      ...encryption,
      ...(connections.subscriber && { subscriber: connections.subscriber }),
    });
    // Closed before the connections: it unsubscribes on the subscriber.
    closers.unshift(() => redisStore.close());
    store = redisStore;
  }

  const shared = reporting(store, config.shareAccount ?? true);
  const attach = () => {
    const api = axios.create({ baseURL: config.emulatorUrl });
    const auth = attachTokenAuth(api, {
      credentials: (name) => {
        const who = name === undefined ? account : accounts[name];
        return who && { username: who.username, password: who.password };
      },
      store: shared,
      tokenRetryDelayMs: config.tokenRetryDelayMs ?? 5,
      ...(config.tokenTimeoutMs !== undefined && { tokenTimeoutMs: config.tokenTimeoutMs }),
      ...(config.storeTimeoutMs !== undefined && { storeTimeoutMs: config.storeTimeoutMs }),
      ...(config.dpop !== undefined && { dpop: config.dpop }),
      ...(config.whenStoreDown !== undefined && { whenStoreDown: config.whenStoreDown }),
      ...(config.storeOutageWaitMs !== undefined && { storeOutageWaitMs: config.storeOutageWaitMs }),
      ...(config.tokenBudget !== undefined && { tokenBudget: config.tokenBudget }),
      ...(config.tokenRetries !== undefined && { tokenRetries: config.tokenRetries }),
      ...(config.loginCooldownMs !== undefined && { loginCooldownMs: config.loginCooldownMs }),
    });
    const ofAccount = (name: string | undefined) => (name === undefined ? {} : { account: name });
    auth.on('login', ({ reason, durationMs, account: name }) =>
      record({ name: 'login', at: Date.now(), reason, durationMs, ...ofAccount(name) }),
    );
    auth.on('refresh', ({ reason, durationMs, account: name }) =>
      record({ name: 'refresh', at: Date.now(), reason, durationMs, ...ofAccount(name) }),
    );
    auth.on('load', () => record({ name: 'load', at: Date.now() }));
    auth.on('warning', ({ code }) => record({ name: 'warning', at: Date.now(), code }));
    auth.on('failure', ({ operation, code, error }) =>
      record({ name: 'failure', at: Date.now(), operation, code, message: describeError(error) }),
    );
    return { api, auth };
  };
  const holders = Array.from({ length: config.holders ?? 1 }, attach);
  const { auth } = holders[0]!;

  // The store subscribed when the plugin attached: ready once Redis has answered that SUBSCRIBE.
  await Promise.all(subscribed);

  const burst = async (
    id: number,
    n: number,
    path: string,
    named: Array<string | null>,
    timeout: number | undefined,
    logout: boolean,
  ): Promise<void> => {
    if (logout) await auth.logout();
    const before = auth.stats().replays;
    const startedAt = Date.now();
    const latenciesMs: number[] = new Array<number>(n).fill(0);
    const errors: string[] = [];
    const users: Record<string, number> = {};
    const byAccount: Record<string, Record<string, number>> = {};
    const outcomes = await Promise.all(
      Array.from({ length: n }, async (_, i) => {
        const started = performance.now();
        const name = named.length === 0 ? null : named[i % named.length]!;
        try {
          const { api } = holders[i % holders.length]!;
          const { data } = await api.get<{ user?: unknown }>(`${path}/${i}`, {
            ...(name !== null && { account: name }),
            ...(timeout !== undefined && { timeout }),
          });
          const user = String(data?.user);
          users[user] = (users[user] ?? 0) + 1;
          const served = (byAccount[name ?? DEFAULT_ACCOUNT] ??= {});
          served[user] = (served[user] ?? 0) + 1;
          return true;
        } catch (error) {
          errors.push(describeError(error));
          return false;
        } finally {
          latenciesMs[i] = performance.now() - started;
        }
      }),
    );
    const ok = outcomes.filter(Boolean).length;
    const stats: TokenAuthStats = auth.stats();
    const events = pending;
    pending = [];
    const { grants, refused } = lockTries;
    lockTries.grants = 0;
    lockTries.refused = 0;
    send({
      type: 'burst-done',
      id,
      ok,
      failed: n - ok,
      latenciesMs,
      slowestMs: Math.max(0, ...latenciesMs),
      users,
      accounts: byAccount,
      lockGrants: grants,
      lockRefused: refused,
      replays: stats.replays - before,
      stats,
      statuses: holders.map((holder) => holder.auth.getState().status),
      storeWarnings: storeWarnings.splice(0),
      errors,
      events,
      startedAt,
      finishedAt: Date.now(),
    });
  };

  let closing = false;
  const exit = async (): Promise<void> => {
    if (closing) return;
    closing = true;
    // The last renewal's pair goes to the store after its requests have left: written before the process goes.
    for (const holder of holders) await holder.auth.flush();
    for (const holder of holders) holder.auth.eject();
    for (const close of closers) await close().catch(() => undefined);
    process.disconnect?.();
    process.exit(0);
  };

  process.on('message', (message: ParentMessage) => {
    if (message.type === 'burst')
      void burst(
        message.id,
        message.n,
        message.path ?? '/api/things',
        message.accounts ?? [],
        message.requestTimeoutMs,
        message.logout === true,
      );
    else if (message.type === 'freeze-after-read') freeze.armed = true;
    else if (message.type === 'exit') void exit();
  });
  send({ type: 'ready', pid: process.pid });
}

// An orphan would hold the lock, the store and the emulator's sockets: it goes with its parent.
process.on('disconnect', () => process.exit(0));
// Node's own report would print the whole error, an axios config with its Authorization header included.
for (const event of ['unhandledRejection', 'uncaughtException'] as const) {
  process.on(event, (reason: unknown) => {
    process.stderr.write(`fleet worker: ${event}: ${describeError(reason)}\n`);
    process.exit(70);
  });
}

main().catch((error: unknown) => {
  process.stderr.write(`fleet worker: failed to start: ${describeError(error)}\n`);
  process.exit(70);
});
