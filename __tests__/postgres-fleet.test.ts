// A fleet that shares one account through PostgreSQL and no Redis (issue 45): real processes (harness/fleet-worker.ts),
// each with holders that share one PostgresTokenStore on one pool, against the emulator over HTTP, on a real server
// started for this file (and a PgBouncer in transaction mode before it). Counts are exact: token calls, failed
// requests, refresh tokens sent twice. Without PostgreSQL or PgBouncer this file fails here, once, with the command
// that installs them.
import { randomUUID } from 'node:crypto';
import { Pool } from 'pg';
import { FleetPool, keepEachBursting, sumBursts } from '../harness/fleet.js';
import type { Fleet, FleetOptions } from '../harness/fleet.js';
import {
  requirePgBouncer,
  startPgBouncer,
  startPostgresServer,
  startPostgresStandby,
} from '../harness/postgres-server.js';
import type { PostgresStandby } from '../harness/postgres-server.js';
import { Relay } from './helpers/proxy.js';
import { PostgresTokenStore } from '../lib/stores/postgres/index.js';
import type { TokenServiceEmulator } from '../lib/emulator/index.js';
import { closeEmulatorsAfterEach, emulator, refreshTokensSent } from './helpers/emulator.js';
import { until } from './helpers/flow.js';
import { lossOf, reportLoss } from './helpers/loss-report.js';
import { spentSent, warningsOf } from './helpers/outage.js';
import { postgresServerForFile } from './helpers/postgres.js';

requirePgBouncer();
closeEmulatorsAfterEach();
const server = postgresServerForFile({ settings: { max_connections: '200' } });
const fleets = new FleetPool();
afterEach(() => fleets.stopAll());

beforeAll(async () => {
  const pool = new Pool({ connectionString: server().url, max: 1 });
  await PostgresTokenStore.createSchema(pool);
  await pool.end();
});

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** `count` processes of `holders` holders each on the server (or `url`), after one burst that logged in once. */
async function warmFleet(
  service: TokenServiceEmulator,
  count: number,
  holders: number,
  {
    url = server().url,
    poolMax,
    ...options
  }: Partial<Omit<FleetOptions, 'store'>> & { url?: string; poolMax?: number } = {},
): Promise<{ fleet: Fleet; warnings: string[][] }> {
  const fleet = await fleets.start({
    count,
    holders,
    emulatorUrl: service.url,
    store: { kind: 'postgres', url, key: `fleet-${randomUUID()}`, ...(poolMax !== undefined && { poolMax }) },
    ...options,
  });
  const replies = await fleet.burst(holders);
  const warm = sumBursts(replies);
  if (warm.failed > 0 || service.counters.logins !== 1)
    throw new Error(`The fleet did not start on one login: ${JSON.stringify(warm.errors)}`);
  return { fleet, warnings: replies.map((reply) => reply.storeWarnings) };
}

describe('a fleet on PostgresTokenStore', () => {
  it('4 processes × 25 holders, after an expiry: one token call for the 100, no request failed, no refresh token sent twice', async () => {
    const service = await emulator();
    const { fleet } = await warmFleet(service, 4, 25);
    const callsBefore = service.counters.tokenCalls;

    service.expireAccessTokens();
    const burst = sumBursts(await fleet.burst(25));

    expect(burst.errors).toEqual([]);
    expect(burst.ok).toBe(100);
    expect(service.counters.tokenCalls - callsBefore).toBe(1);
    expect(service.counters).toMatchObject({ logins: 1, refreshes: 1, rejected: 0 });
    expect(spentSent(service)).toBe(0);
  }, 60_000);

  it('a logout in one process reaches every holder of every process: each is signed out, and its requests fail with LOGGED_OUT without a token call', async () => {
    const service = await emulator();
    const { fleet } = await warmFleet(service, 4, 5);
    const callsBefore = service.counters.tokenCalls;

    await fleet.burst(0, { logout: true, only: [0] });
    await until(async () => {
      const replies = await fleet.burst(0);
      return replies.every((reply) => reply.statuses.every((status) => status === 'signed-out'));
    }, 10_000);
    const after = sumBursts(await fleet.burst(5));

    expect(after.ok).toBe(0);
    expect(after.errors).toHaveLength(20);
    expect(after.errors.every((error) => error.startsWith('LOGGED_OUT: '))).toBe(true);
    expect(service.counters.tokenCalls).toBe(callsBefore);
  }, 60_000);

  it('the server paused 12 s as the tokens expire: no token call during the pause, one after, none spent, no request failed', async () => {
    const service = await emulator();
    const { fleet } = await warmFleet(service, 4, 5);
    const callsBefore = service.counters.tokenCalls;

    server().pause();
    const from = Date.now();
    service.expireAccessTokens();
    const during = keepEachBursting(fleet, 10);
    // Pacing, not waiting for something: the outage's length.
    await sleep(12_000);
    const callsInOutage = service.counters.tokenCalls - callsBefore;
    server().resume();
    const total = sumBursts(await during.stop());
    await fleet.burst(3);
    const loss = reportLoss('Postgres paused 12 s as the tokens expire', lossOf(service, total.failed));

    expect(loss).toEqual({ spent: 0, failed: 0, logins: 0 });
    expect(total.errors).toEqual([]);
    expect(total.ok).toBeGreaterThanOrEqual(40);
    expect(callsInOutage).toBe(0);
    expect(service.counters.tokenCalls - callsBefore).toBe(1);
    expect(service.counters).toMatchObject({ logins: 1, refreshes: 1, rejected: 0 });
    expect(spentSent(service)).toBe(0);
    // Each holder said once that the store was down, and that it waits for it.
    expect(warningsOf(fleet, from)).toEqual(
      Array.from({ length: 4 }, () => Array.from({ length: 5 }, () => 'STORE_UNAVAILABLE')),
    );
  }, 90_000);

  it.each([
    ['fast', 'a fast shutdown'],
    ['kill', 'a crash'],
  ] as const)(
    'a restart of the server (%s) while a holder has the lock and has read the pair: no refresh token spent, no request failed',
    async (shutdown, what) => {
      const service = await emulator();
      const { fleet } = await warmFleet(service, 3, 5);
      const callsBefore = service.counters.tokenCalls;

      service.expireAccessTokens();
      const holder = fleet.workers[0]!;
      const { thawed } = await holder.freezeAfterRead(() => holder.burst(5));
      // The others keep asking meanwhile (the frozen one's bursts wait in its queue until it thaws).
      const others = keepEachBursting(fleet, 5);
      await server().restart({ shutdown });
      process.kill(holder.pid!, 'SIGCONT');
      const first = await thawed;
      await sleep(2_000);
      const total = sumBursts([first, ...(await others.stop())]);
      await fleet.burst(3);
      const loss = reportLoss(`Postgres restarted (${what}), lock held, pair read`, lossOf(service, total.failed));

      expect(loss).toEqual({ spent: 0, failed: 0, logins: 0 });
      expect(total.errors).toEqual([]);
      expect(total.failed).toBe(0);
      expect(spentSent(service)).toBe(0);
      expect(service.counters.rejected).toBe(0);
      // The frozen holder's refresh, or, once its lease lapsed, another's: one token call.
      expect(service.counters.tokenCalls - callsBefore).toBe(1);
    },
    90_000,
  );
});

describe('a holder frozen past its lease (issue 38), on PostgresTokenStore', () => {
  it('frozen (SIGSTOP) with the lock held and the pair read, for longer than the lease, while another renews: after SIGCONT it sends nothing and takes the newer pair', async () => {
    const lockTtlMs = 2_000;
    const service = await emulator();
    const { fleet } = await warmFleet(service, 2, 1, { lock: { lockTtlMs } });
    const [frozen, other] = fleet.workers as [(typeof fleet.workers)[0], (typeof fleet.workers)[0]];

    service.expireAccessTokens();
    const { thawed } = await frozen.freezeAfterRead(() => frozen.burst(5));
    expect(service.counters.tokenCalls).toBe(1);
    // Pacing, not waiting for something: its lease lapses in the row, as it would for a process stopped this long.
    await sleep(lockTtlMs + 500);
    const renewed = await other.burst(5);
    expect(renewed.failed).toBe(0);
    expect(service.counters).toMatchObject({ logins: 1, refreshes: 1 });

    frozen.process.kill('SIGCONT');
    const reply = await thawed;

    expect(sumBursts([renewed, reply]).errors).toEqual([]);
    expect(reply.ok).toBe(5);
    // It sent nothing on the strength of its lapsed lease: no refresh token went twice, none was refused.
    expect(refreshTokensSent(service)).toHaveLength(1);
    expect(spentSent(service)).toBe(0);
    expect(service.counters).toMatchObject({ logins: 1, refreshes: 1, rejected: 0 });
  }, 60_000);
});

describe('a fleet on PostgresTokenStore through a failover', () => {
  it('the primary crashes as the tokens expire, mid-renewal, and its synchronous standby is promoted: one token call, none spent, no request failed', async () => {
    const primary = await startPostgresServer();
    let standby: PostgresStandby | undefined;
    let relay: Relay | undefined;
    try {
      const pool = new Pool({ connectionString: primary.url, max: 1 });
      await PostgresTokenStore.createSchema(pool);
      standby = await startPostgresStandby(primary);
      // From now on each commit waits for the standby: what the fleet was told is written survives the primary.
      await pool.query("ALTER SYSTEM SET synchronous_standby_names = '*'");
      await pool.query('SELECT pg_reload_conf()');
      await pool.end();
      // The address the fleet knows, which the failover moves to the standby (a virtual IP, a DNS name, a proxy).
      relay = await new Relay(new URL(primary.url)).open();
      const url = `postgres://postgres@127.0.0.1:${new URL(relay.url).port}/postgres`;
      const service = await emulator();
      const { fleet } = await warmFleet(service, 3, 5, { url });
      const callsBefore = service.counters.tokenCalls;

      service.expireAccessTokens();
      const during = keepEachBursting(fleet, 5);
      await fleet.waitForEvent((event) => event.name === 'lock-acquired', 10_000);
      await primary.kill();
      // Pacing: the time a failover takes to notice the primary gone.
      await sleep(500);
      await standby.promote();
      relay.retarget(new URL(standby.url));
      await sleep(3_000);
      const total = sumBursts(await during.stop());
      await fleet.burst(3);
      const loss = reportLoss(
        'Postgres failover: the primary crashed mid-renewal, its synchronous standby promoted',
        lossOf(service, total.failed),
      );

      expect(total.errors).toEqual([]);
      expect(loss).toEqual({ spent: 0, failed: 0, logins: 0 });
      expect(service.counters.tokenCalls - callsBefore).toBe(1);
      expect(service.counters.rejected).toBe(0);
    } finally {
      await fleets.stopAll();
      await relay?.close();
      await standby?.stop();
      await primary.stop();
    }
  }, 90_000);
});

describe('a fleet on PostgresTokenStore through PgBouncer in transaction mode', () => {
  it('4 processes × 25 holders: the same burst, one token call, news by polling, said once per process', async () => {
    const bouncer = await startPgBouncer(server(), { poolMode: 'transaction', poolSize: 10 });
    try {
      const service = await emulator();
      const { fleet, warnings } = await warmFleet(service, 4, 25, { url: bouncer.url });
      const callsBefore = service.counters.tokenCalls;

      service.expireAccessTokens();
      const replies = await fleet.burst(25);
      const burst = sumBursts(replies);
      // What each process's store said, over every reply, once its check of LISTEN has ended (3 s at most).
      const said = warnings.map((messages, i) => [...messages, ...replies[i]!.storeWarnings]);
      await until(async () => {
        for (const [i, reply] of (await fleet.burst(0)).entries()) said[i]!.push(...reply.storeWarnings);
        return said.every((messages) => messages.length > 0);
      }, 10_000);

      expect(burst.errors).toEqual([]);
      expect(burst.ok).toBe(100);
      expect(service.counters.tokenCalls - callsBefore).toBe(1);
      expect(service.counters).toMatchObject({ logins: 1, refreshes: 1, rejected: 0 });
      expect(spentSent(service)).toBe(0);
      for (const messages of said) {
        expect(messages).toHaveLength(1);
        expect(messages[0]).toMatch(
          /^PostgresTokenStore: LISTEN hears nothing here: a notification it sent did not come back within 3000 ms .* It polls the table every 1000 ms/,
        );
      }
    } finally {
      await fleets.stopAll();
      await bouncer.stop();
    }
  }, 90_000);
});

describe('one process, 100 holders, a pool of 2 connections', () => {
  it('after an expiry: one token call, every request served within one storeTimeoutMs', async () => {
    const service = await emulator();
    const { fleet } = await warmFleet(service, 1, 100, { poolMax: 2 });
    const callsBefore = service.counters.tokenCalls;

    service.expireAccessTokens();
    const burst = sumBursts(await fleet.burst(100));

    expect(burst.errors).toEqual([]);
    expect(burst.ok).toBe(100);
    expect(service.counters.tokenCalls - callsBefore).toBe(1);
    // The plugin's default storeTimeoutMs: a request that waited longer would have waited on a stalled pool.
    expect(burst.slowestMs).toBeLessThan(5_000);
  }, 60_000);
});
