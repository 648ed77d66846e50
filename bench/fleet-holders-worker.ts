// One process of `npm run bench:fleet -- --holders`: A holders, each an axios instance with the plugin attached to a
// RedisTokenStore of its own on connections of its own (a client and a subscriber, as a process of its own would
// open), and an HTTP agent of its own. Started by fleet-holders.ts with its config, as JSON, in HOLDERS_WORKER; obeys
// IPC messages. It reports counts and times only: never a token, and no error text but the plugin's error codes.
import { readdirSync } from 'node:fs';
import { Agent } from 'node:http';
import axios from 'axios';
import { attachTokenAuth, isTokenAuthError } from '../lib/index.js';
import { RedisTokenStore } from '../lib/stores/redis/index.js';
import { PostgresTokenStore } from '../lib/stores/postgres/index.js';
import pg from 'pg';
import { openRedis } from '../harness/redis-clients.js';
import type { RedisConnections, RedisTarget } from '../harness/redis-clients.js';

/** A PostgreSQL database: the process's holders share one pool of 5 and one PostgresTokenStore on it. */
export interface PostgresTarget {
  postgres: string;
}

export interface HoldersWorkerConfig {
  emulatorUrl: string;
  target: RedisTarget | PostgresTarget;
  prefix: string;
  attachments: number;
  username: string;
  password: string;
  loginCooldownMs?: number;
  whenStoreDown?: 'wait' | 'go-alone';
}

export type HoldersRequest = { type: 'round'; id: number } | { type: 'exit' };

/** What one holder saw in a round: whether its request succeeded, and when it first had a pair in the round. */
export interface HolderRound {
  ok: boolean;
  /** The plugin's error code of a failed request (or the HTTP status), to tell a cooldown from a failure. */
  error?: string;
  /** Date.now() of its first `login`, `refresh` or `load` event since the previous round; null when none. */
  pairAt: number | null;
  /** The request's end, Date.now(). */
  doneAt: number;
}

export type HoldersReply =
  | { type: 'ready'; connections: number }
  | {
      type: 'round-done';
      id: number;
      holders: HolderRound[];
      messages: number;
      openFiles: number;
      /** Statements the process sent through its pool since its last reply (Postgres; 0 on Redis). */
      statements: number;
    };

interface Holder {
  fire(): Promise<HolderRound>;
  close(): Promise<void>;
}

/** Pub/sub messages this process's subscribers received since the last round's reply. */
let messages = 0;
/** Statements sent through the process's pool since the last round's reply (Postgres). */
let statements = 0;

/** The process's one Postgres store, on one pool of 5 whose statements are counted: every holder shares it. */
function postgresStore(url: string, key: string): { store: PostgresTokenStore; close(): Promise<void> } {
  const pool = new pg.Pool({ connectionString: url, max: 5 });
  pool.on('error', () => undefined);
  const query = pool.query.bind(pool) as (...args: unknown[]) => Promise<unknown>;
  (pool as unknown as { query: typeof query }).query = (...args) => {
    statements += 1;
    return query(...args);
  };
  const store = new PostgresTokenStore(pool, { key, onWarning: () => undefined });
  return {
    store,
    close: async () => {
      await store.close();
      await pool.end();
    },
  };
}

async function startHolder(config: HoldersWorkerConfig, shared?: PostgresTokenStore): Promise<Holder> {
  if ('postgres' in config.target) return attachHolder(config, shared!, () => Promise.resolve());
  const connections: RedisConnections = await openRedis(
    { library: 'ioredis' },
    config.target,
    'url' in config.target ? { subscriber: true, ioredis: { maxRetriesPerRequest: 1 } } : { subscriber: true },
  );
  (connections.subscriber as unknown as { on(event: string, listener: () => void): void }).on('message', () => {
    messages += 1;
  });
  const store = new RedisTokenStore(connections.client, { prefix: config.prefix, subscriber: connections.subscriber });
  return attachHolder(config, store, async () => {
    await store.close();
    await connections.close();
  });
}

/** A holder: an axios instance with the plugin on `store`, and an HTTP agent of its own; `closeStore` after it. */
async function attachHolder(
  config: HoldersWorkerConfig,
  store: RedisTokenStore | PostgresTokenStore,
  closeStore: () => Promise<void>,
): Promise<Holder> {
  const agent = new Agent({ keepAlive: true });
  const api = axios.create({ baseURL: config.emulatorUrl, httpAgent: agent });
  const auth = attachTokenAuth(api, {
    credentials: { username: config.username, password: config.password },
    store,
    ...(config.loginCooldownMs !== undefined && { loginCooldownMs: config.loginCooldownMs }),
    ...(config.whenStoreDown !== undefined && { whenStoreDown: config.whenStoreDown }),
  });
  // The outage rows count what the fleet says; one warning each is expected, and none is printed.
  auth.on('warning', () => undefined);
  let pairAt: number | null = null;
  const had = () => {
    pairAt ??= Date.now();
  };
  auth.on('login', had);
  auth.on('refresh', had);
  auth.on('load', had);
  // The store subscribes as the plugin attaches; a holder is ready once it listens.
  await auth.flush();
  return {
    async fire() {
      let ok = true;
      let error: string | undefined;
      try {
        await api.get('/api/things/1');
      } catch (caught) {
        ok = false;
        error = isTokenAuthError(caught)
          ? caught.code
          : axios.isAxiosError(caught)
            ? `HTTP ${caught.response?.status ?? caught.code}`
            : 'ERROR';
      }
      const round: HolderRound = { ok, pairAt, doneAt: Date.now(), ...(error && { error }) };
      pairAt = null;
      return round;
    },
    async close() {
      await auth.flush();
      auth.eject();
      await closeStore();
      agent.destroy();
    },
  };
}

async function main(): Promise<void> {
  const config = JSON.parse(process.env.HOLDERS_WORKER ?? '{}') as HoldersWorkerConfig;
  const holders: Holder[] = [];
  const postgres = 'postgres' in config.target ? postgresStore(config.target.postgres, config.prefix) : undefined;
  // A few at a time: a hundred connects at once on a loaded machine would only queue in Redis' accept backlog.
  for (let i = 0; i < config.attachments; i += 10)
    holders.push(
      ...(await Promise.all(
        Array.from({ length: Math.min(10, config.attachments - i) }, () => startHolder(config, postgres?.store)),
      )),
    );
  // Give the subscriptions a moment to be confirmed by Redis before the parent counts anything.
  await new Promise((resolve) => setTimeout(resolve, 200));
  messages = 0;
  statements = 0;
  process.on('message', (request: HoldersRequest) => {
    if (request.type === 'round') {
      void Promise.all(holders.map((holder) => holder.fire())).then((rounds) => {
        const received = messages;
        const sent = statements;
        messages = 0;
        statements = 0;
        send({
          type: 'round-done',
          id: request.id,
          holders: rounds,
          messages: received,
          openFiles: openFiles(),
          statements: sent,
        });
      });
    } else {
      void Promise.all(holders.map((holder) => holder.close().catch(() => undefined)))
        .then(() => postgres?.close())
        .catch(() => undefined)
        .then(() => process.exit(0));
    }
  });
  // A pool of 5 and the store's listening connection per process on Postgres; a client and a subscriber per holder on Redis.
  send({ type: 'ready', connections: postgres ? 6 : holders.length * 2 });
}

/** The file descriptors this process holds (Linux): its sockets to Redis and to the emulator, and Node's own. */
function openFiles(): number {
  try {
    return readdirSync('/proc/self/fd').length;
  } catch {
    return Number.NaN;
  }
}

function send(message: HoldersReply): void {
  if (process.connected) process.send?.(message);
}

process.on('disconnect', () => process.exit(0));
// Node's own report would print the whole error, an axios config with its Authorization header included.
for (const event of ['unhandledRejection', 'uncaughtException'] as const)
  process.on(event, (reason: unknown) => {
    process.stderr.write(
      `holders worker: ${event}: ${reason instanceof Error ? `${reason.name} ${(reason as { code?: string }).code ?? ''}` : 'error'}\n`,
    );
    process.exit(70);
  });

main().catch((error: unknown) => {
  process.stderr.write(
    `holders worker: failed to start: ${error instanceof Error ? `${error.name}: ${error.message.slice(0, 200)}` : 'error'}\n`,
  );
  process.exit(70);
});
