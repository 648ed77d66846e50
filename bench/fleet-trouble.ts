// `npm run bench:fleet -- --trouble [10,50,100]`: what a fleet costs the account when things go wrong, beside what
// it cost before the account's guards were shared. For each N, fleets of N real processes on one Redis with pub/sub,
// against the emulator, go through four troubles, each twice: with the store's account record (the guards shared),
// and without it (`shareAccount: false`, as a store without getAccount/setAccount: each process its own guards).
//   wrong password       every process starts with a wrong password and fires 2 requests: login calls;
//   revoked session      the password changed and the refresh tokens revoked after a first round: refused
//                        refreshes and rejected logins in the round after;
//   budget               `tokenBudget: { logins: 2, refreshes: 3 }`, 6 expiries: login and token calls in all;
//   no permissions       every data call refused for 12 s while token calls succeed: token calls.
// Results go to bench/results/fleet-trouble.json. Measured, never asserted: fleet-account.test.ts asserts the counts.
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { startEmulator } from '../lib/emulator/index.js';
import type { TokenServiceEmulator } from '../lib/emulator/index.js';
import { E2E_PASSWORD, E2E_USER } from '../harness/account.js';
import { startFleet, sumBursts } from '../harness/fleet.js';
import type { Fleet, FleetOptions } from '../harness/fleet.js';
import { startRedisServer } from '../harness/redis-server.js';
import type { RedisServer } from '../harness/redis-server.js';
import { markdownTable } from './report.js';

type Trouble = 'wrong password' | 'revoked session' | 'budget' | 'no permissions';
const TROUBLES: readonly Trouble[] = ['wrong password', 'revoked session', 'budget', 'no permissions'];

interface Cost {
  trouble: Trouble;
  processes: number;
  shared: boolean;
  /** Login calls and token calls the service received during the trouble (the first login of a fleet excluded). */
  loginCalls: number;
  tokenCalls: number;
  failed: number;
  seconds: number;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const calls = (service: TokenServiceEmulator, route: 'login' | 'token') =>
  service.calls.filter((call) => call.route === route).length;

async function withFleet<T>(options: FleetOptions, run: (fleet: Fleet) => Promise<T>): Promise<T> {
  const fleet = await startFleet(options);
  try {
    return await run(fleet);
  } finally {
    await fleet.stop();
  }
}

async function measure(trouble: Trouble, count: number, shared: boolean, redis: RedisServer): Promise<Cost> {
  const service = await startEmulator({ users: { [E2E_USER]: E2E_PASSWORD } });
  const base: FleetOptions = {
    count,
    emulatorUrl: service.url,
    store: {
      kind: 'redis',
      url: redis.url,
      prefix: `bench-trouble:${trouble}:${count}:${shared}:${Date.now()}`,
      pubsub: true,
    },
    shareAccount: shared,
  };
  try {
    return await withFleet(
      {
        ...base,
        ...(trouble === 'wrong password' && { account: { username: E2E_USER, password: 'a-wrong-password' } }),
        ...(trouble === 'budget' && { tokenBudget: { logins: 2, refreshes: 3 } }),
      },
      async (fleet) => {
        // The fleet's first login is the same either way: the trouble's cost is counted from after it.
        if (trouble !== 'wrong password') await fleet.burst(2);
        const [logins, tokens] = [calls(service, 'login'), calls(service, 'token')];
        const started = Date.now();
        let failed = 0;
        if (trouble === 'wrong password') failed = sumBursts(await fleet.burst(2)).failed;
        if (trouble === 'revoked session') {
          service.expireAccessTokens();
          service.revokeRefreshTokens();
          service.inject('login', { status: 401, body: { detail: 'Invalid credentials.' } }, 100_000);
          failed = sumBursts(await fleet.burst(2)).failed;
        }
        if (trouble === 'budget') {
          for (let expiry = 0; expiry < 6; expiry += 1) {
            service.expireAccessTokens();
            failed += sumBursts(await fleet.burst(2)).failed;
          }
        }
        if (trouble === 'no permissions') {
          for (let i = 0; i < 2; i += 1) service.setAlwaysUnauthorized(`/api/things/${i}`);
          while (Date.now() - started < 12_000) {
            failed += sumBursts(await fleet.burst(2)).failed;
            await sleep(200);
          }
        }
        return {
          trouble,
          processes: count,
          shared,
          loginCalls: calls(service, 'login') - logins,
          tokenCalls: calls(service, 'token') - tokens,
          failed,
          seconds: Math.round((Date.now() - started) / 100) / 10,
        };
      },
    );
  } finally {
    await service.close();
  }
}

function table(costs: readonly Cost[]): string {
  const rows: string[][] = [];
  for (const trouble of TROUBLES) {
    for (const processes of [...new Set(costs.map((cost) => cost.processes))]) {
      const of = (shared: boolean) =>
        costs.find((cost) => cost.trouble === trouble && cost.processes === processes && cost.shared === shared);
      const cell = (cost: Cost | undefined) => (cost ? `${cost.loginCalls} / ${cost.tokenCalls}` : '');
      rows.push([trouble, String(processes), cell(of(true)), cell(of(false))]);
    }
  }
  return markdownTable(
    ['trouble', 'processes', 'login / token calls, shared guards', 'login / token calls, per-process guards'],
    rows,
  );
}

/** Runs the troubles at each size, both ways; prints the table and writes bench/results/fleet-trouble.json. */
export async function trouble(sizes: readonly number[], machine: string): Promise<void> {
  console.log(`Fleet benchmark, in trouble: ${sizes.join(', ')} processes on one Redis with pub/sub; ${machine}`);
  const redis = await startRedisServer();
  const costs: Cost[] = [];
  try {
    for (const count of sizes)
      for (const kind of TROUBLES)
        for (const shared of [true, false]) {
          costs.push(await measure(kind, count, shared, redis));
          console.log(`  ${count} processes, ${kind}, ${shared ? 'shared' : 'per process'}: done`);
        }
  } finally {
    await redis.stop();
  }
  console.log(`\n${table(costs)}\n`);
  await mkdir(join(__dirname, 'results'), { recursive: true });
  await writeFile(
    join(__dirname, 'results', 'fleet-trouble.json'),
    `${JSON.stringify({ machine, date: new Date().toISOString(), costs }, null, 2)}\n`,
  );
}
