// The serverless row of `npm run bench:fleet` (alone: `npm run bench:fleet -- --serverless`): function instances
// cold-started as real processes (harness/cold-start.ts), each with its own @upstash/redis client to a REST Redis (the
// bridge of Upstash's protocol, harness/upstash-rest.ts, over a real redis-server), and what they cost it:
//   cold starts per second   instances started one after another, each making its first request (the first logs in;
//                            every later one uses the stored pair), and --cold instances (20) started at once;
//   REST per cold start      the commands and HTTP requests an instance's first request costs the REST Redis, with a
//                            pair stored;
//   REST per request         the commands a request with a good token costs (none: the pair is in memory);
//   REST per expiry          the commands and requests of the whole fleet of 5 instances for one expiry (each makes a
//                            request after it), and of one instance on average;
// the emulator's logins and refreshes, and failures. Results go to bench/results/fleet-serverless.json. The machine's
// process start-up is most of a cold start here: the figure compares runs of this benchmark, not platforms.
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { startEmulator } from '../lib/emulator/index.js';
import { E2E_PASSWORD, E2E_USER } from '../harness/account.js';
import { bundleColdStartWorker, startInstance } from '../harness/cold-start.js';
import type { ColdStartConfig, Instance, InstanceAnswer } from '../harness/cold-start.js';
import { startRedisServer } from '../harness/redis-server.js';
import { startUpstashBridge } from '../harness/upstash-rest.js';
import type { UpstashBridge } from '../harness/upstash-rest.js';
import { markdownTable } from './report.js';
import { round } from './stats.js';

/** Instances started one after another, and at once. */
const SEQUENTIAL = 20;
const AT_ONCE = 20;
/** The fleet that goes through the expiries, and how many. */
const FLEET = 5;
const EXPIRIES = 5;
/** Requests with a good token, per instance, to count what they cost. */
const WARM_REQUESTS = 20;

export interface ServerlessResult {
  coldStartsPerSecond: { sequential: number; atOnce: number };
  perColdStart: { commands: number; httpRequests: number };
  perRequest: { commands: number };
  perExpiry: { commands: number; httpRequests: number; commandsPerInstance: number };
  logins: number;
  refreshes: number;
  rejected: number;
  failed: number;
}

const failures = (answers: readonly InstanceAnswer[]) => answers.filter((answer) => 'error' in answer).length;

/** Runs the serverless measurements, prints their table and writes their results. */
export async function serverless(machine: string): Promise<ServerlessResult> {
  console.log(`Serverless: cold-started instances on @upstash/redis through a REST bridge; ${machine}`);
  const redis = await startRedisServer();
  const bridge = await startUpstashBridge({ redisUrl: redis.url });
  const worker = await bundleColdStartWorker();
  const instances: Instance[] = [];
  try {
    const result = await measure(bridge, worker, instances);
    console.log(`\n${serverlessTable(result)}\n`);
    await mkdir(join(__dirname, 'results'), { recursive: true });
    await writeFile(
      join(__dirname, 'results', 'fleet-serverless.json'),
      `${JSON.stringify({ machine, date: new Date().toISOString(), result }, null, 2)}\n`,
    );
    if (result.failed > 0 || result.logins !== 2 || result.rejected > 0 || result.refreshes !== EXPIRIES) {
      console.error('Serverless: not one login per fleet and one token call per expiry.');
      process.exitCode = 1;
    }
    return result;
  } finally {
    await Promise.all(instances.map((instance) => instance.stop()));
    await bridge.stop();
    await redis.stop();
  }
}

async function measure(bridge: UpstashBridge, worker: string, instances: Instance[]): Promise<ServerlessResult> {
  const emulator = await startEmulator({ users: { [E2E_USER]: E2E_PASSWORD }, log: false });
  try {
    const config = (prefix: string): ColdStartConfig => ({
      restUrl: bridge.url,
      restToken: bridge.token,
      serviceUrl: emulator.url,
      prefix,
    });
    let failed = 0;

    // One after another, each reclaimed before the next starts; the first logs in.
    let started = performance.now();
    for (let index = 0; index < SEQUENTIAL; index += 1) {
      if (index === 1) bridge.resetCounts();
      const instance = await startInstance(worker, config('bench:serverless'));
      failed += failures([await instance.request('/first')]);
      await instance.stop();
    }
    const sequential = SEQUENTIAL / ((performance.now() - started) / 1000);
    const cold = bridge.counts();
    const perColdStart = {
      commands: round(cold.commands / (SEQUENTIAL - 1), 2),
      httpRequests: round(cold.requests / (SEQUENTIAL - 1), 2),
    };

    // At once, on the stored pair.
    started = performance.now();
    const together = await Promise.all(
      Array.from({ length: AT_ONCE }, async () => {
        const instance = await startInstance(worker, config('bench:serverless'));
        instances.push(instance);
        return instance.request('/first');
      }),
    );
    failed += failures(together);
    const atOnce = AT_ONCE / ((performance.now() - started) / 1000);
    await Promise.all(instances.splice(0).map((instance) => instance.stop()));

    // A fleet on a pair of its own: its login, then requests with a good token, then the expiries.
    const fleet = await Promise.all(
      Array.from({ length: FLEET }, () => startInstance(worker, config('bench:serverless-fleet'))),
    );
    instances.push(...fleet);
    for (const instance of fleet) failed += failures([await instance.request('/warm')]);
    bridge.resetCounts();
    for (let request = 0; request < WARM_REQUESTS; request += 1)
      failed += failures(await Promise.all(fleet.map((instance) => instance.request(`/orders/${request}`))));
    const perRequest = { commands: round(bridge.counts().commands / (WARM_REQUESTS * FLEET), 2) };

    bridge.resetCounts();
    for (let expiry = 0; expiry < EXPIRIES; expiry += 1) {
      emulator.expireAccessTokens();
      failed += failures(await Promise.all(fleet.map((instance) => instance.request(`/expiry/${expiry}`))));
    }
    const expiries = bridge.counts();
    const { logins, refreshes, rejected } = emulator.counters;
    return {
      coldStartsPerSecond: { sequential: round(sequential, 1), atOnce: round(atOnce, 1) },
      perColdStart,
      perRequest,
      perExpiry: {
        commands: round(expiries.commands / EXPIRIES, 1),
        httpRequests: round(expiries.requests / EXPIRIES, 1),
        commandsPerInstance: round(expiries.commands / EXPIRIES / FLEET, 1),
      },
      logins,
      refreshes,
      rejected,
      failed,
    };
  } finally {
    await emulator.close();
  }
}

function serverlessTable(result: ServerlessResult): string {
  return markdownTable(
    [
      'Store',
      `Cold starts/s, ${SEQUENTIAL} one after another`,
      `Cold starts/s, ${AT_ONCE} at once`,
      'REST commands (HTTP requests) per cold start',
      'REST commands per request',
      `REST commands (HTTP requests) per expiry, ${FLEET} instances`,
      'Logins, token calls per expiry',
    ],
    [
      [
        '@upstash/redis, REST',
        String(result.coldStartsPerSecond.sequential),
        String(result.coldStartsPerSecond.atOnce),
        `${result.perColdStart.commands} (${result.perColdStart.httpRequests})`,
        String(result.perRequest.commands),
        `${result.perExpiry.commands} (${result.perExpiry.httpRequests}); ${result.perExpiry.commandsPerInstance} per instance`,
        `${result.logins} (2 fleets), ${round(result.refreshes / EXPIRIES, 2)}`,
      ],
    ],
  );
}
