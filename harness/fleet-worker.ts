/**
 * One process of a fleet (see fleet.ts): an axios instance with the plugin attached to a shared store, driven by its
 * parent over IPC. Run as `node --import tsx fleet-worker.ts` with its config, as JSON, in FLEET_WORKER_CONFIG.
 *
 * It never prints a token: what it reports are counts, timings, event names and error codes and messages, and those
 * pass through `mask` first in case a message quotes something it should not.
 */
import { performance } from 'node:perf_hooks';
import axios from 'axios';
import Redis from 'ioredis';
import { attachTokenAuth, isTokenAuthError } from '../lib/index.js';
import type { TokenAuthStats, TokenStore, TokenStoreLock } from '../lib/index.js';
import { FileTokenStore } from '../lib/stores/file.js';
import { RedisTokenStore } from '../lib/stores/redis.js';
import { E2E_PASSWORD, E2E_USER } from './account.js';
import { maskSecrets } from './fleet.js';
import type { FleetEvent, ParentMessage, WorkerConfig, WorkerMessage } from './fleet.js';

const CONFIG_VARIABLE = 'FLEET_WORKER_CONFIG';

const mask = (text: string): string => maskSecrets(text, [E2E_PASSWORD]);

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

/** Events since the last reply, so that a reply carries what happened between bursts too (a pub/sub adopt). */
let pending: FleetEvent[] = [];

function record(event: FleetEvent): void {
  pending.push(event);
  send({ type: 'event', event });
}

/**
 * The store, with its lock reported: the parent learns which process holds the lock (to kill it there) and when
 * each waited and got it. Everything else goes straight through.
 */
function reporting(store: TokenStore): TokenStore {
  const wrapped: TokenStore = {
    get: () => store.get(),
    set: (pair, fence) => store.set(pair, fence),
    clear: (fence) => store.clear(fence),
  };
  if (store.subscribe) wrapped.subscribe = (listener) => store.subscribe!(listener);
  if (store.lock) {
    wrapped.lock = async (): Promise<TokenStoreLock> => {
      record({ name: 'lock-requested', at: Date.now() });
      let lock: TokenStoreLock;
      try {
        lock = await store.lock!();
      } catch (error) {
        record({ name: 'lock-failed', at: Date.now(), message: describeError(error) });
        throw error;
      }
      record({ name: 'lock-acquired', at: Date.now(), ...(lock.fence !== undefined && { fence: lock.fence }) });
      return {
        ...(lock.fence !== undefined && { fence: lock.fence }),
        release: async () => {
          await lock.release();
          record({ name: 'lock-released', at: Date.now() });
        },
      };
    };
  }
  return wrapped;
}

async function main(): Promise<void> {
  const config = readConfig();
  const closers: Array<() => Promise<unknown>> = [];
  let store: FileTokenStore | RedisTokenStore;
  let subscriber: Redis | undefined;
  const timings = config.lock ?? {};
  if (config.store.kind === 'file') {
    store = new FileTokenStore(config.store.path, {
      ...timings,
      ...(config.store.watch !== undefined && { watch: config.store.watch }),
    });
  } else {
    // No retries of commands across a reconnect: a test wants to see a store failure, not a hidden delay.
    const redis = new Redis(config.store.url, { lazyConnect: true, maxRetriesPerRequest: 1 });
    await redis.connect();
    closers.push(() => redis.quit());
    if (config.store.pubsub) {
      const connection = redis.duplicate({ lazyConnect: true });
      await connection.connect();
      closers.push(() => connection.quit());
      subscriber = connection;
    }
    const redisStore = new RedisTokenStore(redis, {
      prefix: config.store.prefix,
      ...timings,
      ...(subscriber && { subscriber }),
    });
    // Closed before the connections: it unsubscribes on the subscriber.
    closers.unshift(() => redisStore.close());
    store = redisStore;
  }

  const api = axios.create({ baseURL: config.emulatorUrl });
  const auth = attachTokenAuth(api, {
    credentials: { username: E2E_USER, password: E2E_PASSWORD },
    store: reporting(store),
    tokenRetryDelayMs: config.tokenRetryDelayMs ?? 5,
    ...(config.tokenTimeoutMs !== undefined && { tokenTimeoutMs: config.tokenTimeoutMs }),
  });
  auth.on('login', ({ reason, durationMs }) => record({ name: 'login', at: Date.now(), reason, durationMs }));
  auth.on('refresh', ({ reason, durationMs }) => record({ name: 'refresh', at: Date.now(), reason, durationMs }));
  auth.on('adopt', () => record({ name: 'adopt', at: Date.now() }));
  auth.on('failure', ({ operation, code, error }) =>
    record({ name: 'failure', at: Date.now(), operation, code, message: describeError(error) }),
  );

  // The store subscribed when the plugin attached; a PING on the same connection is answered after that SUBSCRIBE,
  // so once it is, this process hears every pair written from now on.
  await subscriber?.ping();

  const burst = async (id: number, n: number, path: string): Promise<void> => {
    const before = auth.stats().replays;
    const startedAt = Date.now();
    const latenciesMs: number[] = new Array<number>(n).fill(0);
    const errors: string[] = [];
    const outcomes = await Promise.all(
      Array.from({ length: n }, async (_, i) => {
        const started = performance.now();
        try {
          await api.get(`${path}/${i}`);
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
    send({
      type: 'burst-done',
      id,
      ok,
      failed: n - ok,
      latenciesMs,
      replays: stats.replays - before,
      stats,
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
    auth.eject();
    for (const close of closers) await close().catch(() => undefined);
    process.disconnect?.();
    process.exit(0);
  };

  process.on('message', (message: ParentMessage) => {
    if (message.type === 'burst') void burst(message.id, message.n, message.path ?? '/api/things');
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
