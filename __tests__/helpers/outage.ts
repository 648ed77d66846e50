// What the tests of a fleet whose store goes down share: a warm fleet on one redis-server, the refresh tokens the
// token calls carried, each worker's warnings, a pause of Redis under bursts, and a scenario's own servers when a file
// runs its scenarios at once.
import { randomUUID } from 'node:crypto';
import { FleetPool, keepEachBursting, sumBursts } from '../../harness/fleet.js';
import type { BurstReply, Fleet, FleetEvent, FleetOptions, RedisClientSettings } from '../../harness/fleet.js';
import { startRedisServer, subscriptions } from '../../harness/redis-server.js';
import type { RedisServer } from '../../harness/redis-server.js';
import type { TokenServiceEmulator } from '../../lib/emulator/index.js';
import { accountEmulator, refreshTokensSent } from './emulator.js';
import { until } from './flow.js';

/** How many token calls carried a refresh token that an earlier one had carried: spent refresh tokens sent. */
export function spentSent(service: TokenServiceEmulator): number {
  const sent = refreshTokensSent(service);
  return sent.length - new Set(sent).size;
}

/**
 * A fleet of `count` processes on `server`, with pub/sub, each subscribed, after one burst that logged in once;
 * `options` are the workers' own over that, `client` their ioredis settings.
 */
export async function warmFleet(
  fleets: FleetPool,
  server: RedisServer,
  service: TokenServiceEmulator,
  count: number,
  { client, ...options }: Partial<Omit<FleetOptions, 'store'>> & { client?: RedisClientSettings } = {},
): Promise<{ fleet: Fleet; prefix: string }> {
  const prefix = `outage-test:${randomUUID()}`;
  const fleet = await fleets.start({
    count,
    emulatorUrl: service.url,
    store: { kind: 'redis', url: server.url, prefix, pubsub: true, ...(client && { client }) },
    ...options,
  });
  const warm = sumBursts(await fleet.burst(5));
  if (warm.failed > 0 || service.counters.logins !== 1)
    throw new Error(`The fleet did not start on one login: ${JSON.stringify(warm.errors)}`);
  await until(async () => (await subscriptions(server.port, `{${prefix}}*`)) === count, 10_000);
  return { fleet, prefix };
}

/** The `warning` events of each worker, by code, from `from` on. */
export function warningsOf(fleet: Fleet, from: number): string[][] {
  return fleet.workers.map((worker) =>
    worker.events
      .filter((event: FleetEvent) => event.name === 'warning' && event.at >= from)
      .map((event) => (event as Extract<FleetEvent, { name: 'warning' }>).code),
  );
}

/** What a pause of Redis saw: when it began and ended, the token calls made in it, and every burst's reply. */
export interface PausedOutage {
  pausedAt: number;
  resumedAt: number;
  tokenCallsInOutage: number;
  replies: BurstReply[];
}

/**
 * Pauses `server` (SIGSTOP) as the tokens expire, for `ms`, while each process of `fleet` keeps sending bursts of
 * `burst` requests; then resumes it and waits for the bursts under way. The sleep is pacing, not a wait for
 * something: the outage's length.
 */
export async function pausedWhileBursting(
  { server, service }: Pick<OutageRig, 'server' | 'service'>,
  fleet: Fleet,
  { ms, burst, requestTimeoutMs }: { ms: number; burst: number; requestTimeoutMs?: number },
): Promise<PausedOutage> {
  const before = service.counters.tokenCalls;
  server.pause();
  const pausedAt = Date.now();
  service.expireAccessTokens();
  const during = keepEachBursting(fleet, burst, requestTimeoutMs === undefined ? {} : { requestTimeoutMs });
  await new Promise((resolve) => setTimeout(resolve, ms));
  const tokenCallsInOutage = service.counters.tokenCalls - before;
  const resumedAt = Date.now();
  server.resume();
  return { pausedAt, resumedAt, tokenCallsInOutage, replies: await during.stop() };
}

/** What one outage scenario has to itself: its redis-server, its token service and its fleets. */
export interface OutageRig {
  server: RedisServer;
  service: TokenServiceEmulator;
  fleets: FleetPool;
}

/**
 * Runs one outage scenario on a redis-server, a token service and fleets of its own, and stops them all after it,
 * whether it passed or not. A file's scenarios mostly wait (an outage is paced in seconds), so they run at once
 * (`it.concurrent`): one pauses its server while another's keeps answering. jest runs no `beforeEach` or `afterEach`
 * around a concurrent test, hence this.
 */
export async function inOwnOutageRig<T>(scenario: (rig: OutageRig) => Promise<T>): Promise<T> {
  const server = await startRedisServer();
  const fleets = new FleetPool();
  let service: TokenServiceEmulator | undefined;
  try {
    service = await accountEmulator();
    return await scenario({ server, service, fleets });
  } finally {
    // A worker that ended on its own (a crash) fails the scenario, once the servers are stopped too.
    try {
      await fleets.stopAll();
    } finally {
      await Promise.all([service?.close(), server.stop()]);
    }
  }
}
