// Serverless cold starts: real processes, each a fresh function instance with empty memory (harness/cold-start.ts),
// sharing one pair through the real @upstash/redis client, the bridge of Upstash's REST protocol and a real
// redis-server; the emulator in this process counts the token calls. A cold start that finds a pair in the store uses
// it: a fleet logs in once, however its instances start, and renews once per expiry without sending a spent refresh
// token.
import { bundleColdStartWorker, startInstance } from '../harness/cold-start.js';
import type { ColdStartConfig, Instance, InstanceAnswer } from '../harness/cold-start.js';
import { closeEmulatorsAfterEach, emulator } from './helpers/emulator.js';
import { until } from './helpers/flow.js';
import { upstashBridgeForFile } from './helpers/redis.js';

const { redis, bridge } = upstashBridgeForFile();
closeEmulatorsAfterEach();
let worker: string;
beforeAll(async () => {
  worker = await bundleColdStartWorker();
}, 60_000);

let serial = 0;
let instances: Instance[] = [];
beforeEach(() => {
  serial += 1;
  instances = [];
});
afterEach(async () => {
  await Promise.all(instances.map((instance) => instance.stop()));
});

/** The test's token service, whose counters are asserted. */
let service: Awaited<ReturnType<typeof emulator>>;

/** What every instance of the test is started with, on a new emulator. */
async function fleetConfig(): Promise<ColdStartConfig> {
  service = await emulator();
  return { restUrl: bridge().url, restToken: bridge().token, serviceUrl: service.url, prefix: `cold-start:${serial}` };
}

async function start(settings: ColdStartConfig): Promise<Instance> {
  const instance = await startInstance(worker, settings);
  instances.push(instance);
  return instance;
}

const ok = (answers: InstanceAnswer[]) => answers.filter((answer) => 'status' in answer && answer.status === 200);

it('20 instances cold-started at once make 1 login, and every first request succeeds', async () => {
  const settings = await fleetConfig();
  const fleet = await Promise.all(Array.from({ length: 20 }, () => start(settings)));
  const answers = await Promise.all(fleet.map((instance, index) => instance.request(`/orders/${index}`)));

  expect(answers.filter((answer) => 'error' in answer)).toEqual([]);
  expect(ok(answers)).toHaveLength(20);
  expect(service.counters).toMatchObject({ logins: 1, refreshes: 0, rejected: 0 });
}, 120_000);

it('30 instances cold-started one after another make 1 login: each later one uses the pair in the store', async () => {
  const settings = await fleetConfig();
  const answers: InstanceAnswer[] = [];
  for (let index = 0; index < 30; index += 1) {
    const instance = await start(settings);
    answers.push(await instance.request(`/orders/${index}`));
    // Reclaimed by the platform before the next one starts: nothing but the store carries the pair over.
    await instance.stop();
  }

  expect(ok(answers)).toHaveLength(30);
  expect(service.counters).toMatchObject({ logins: 1, refreshes: 0, rejected: 0 });
}, 180_000);

it('5 instances over 3 expiries make 1 token call per expiry and send no spent refresh token', async () => {
  const settings = await fleetConfig();
  const fleet = await Promise.all(Array.from({ length: 5 }, () => start(settings)));
  expect(ok(await Promise.all(fleet.map((instance) => instance.request('/warm'))))).toHaveLength(5);
  expect(service.counters).toMatchObject({ logins: 1, refreshes: 0 });

  for (let expiry = 1; expiry <= 3; expiry += 1) {
    service.expireAccessTokens();
    const answers = await Promise.all(fleet.map((instance, index) => instance.request(`/orders/${expiry}/${index}`)));
    expect(ok(answers)).toHaveLength(5);
    expect(service.counters).toMatchObject({ logins: 1, refreshes: expiry, rejected: 0 });
  }
}, 120_000);

it('an instance frozen with the lock (SIGSTOP past its lease, then SIGCONT) leaves the pair another renewed as it is, and takes it with one read', async () => {
  const settings = { ...(await fleetConfig()), lockTtlMs: 1_000 };
  const [frozen, other] = [await start(settings), await start(settings)];
  expect(ok([await frozen.request('/warm'), await other.request('/warm')])).toHaveLength(2);
  const keys = { pair: `{${settings.prefix}}:pair`, lock: `{${settings.prefix}}:lock` };

  // The frozen instance's next request is refused; it takes the lock, and freezes before it hears that it has it.
  service.expireAccessTokens();
  const isLockTry = (command: readonly string[]) =>
    /^eval(sha)?$/i.test(command[0]!) && String(command[2]) === '3' && command[5] === keys.lock;
  const hold = bridge().holdNext(isLockTry);
  const refused = frozen.request('/orders/frozen');
  await hold.held;
  frozen.freeze();
  hold.release();
  // Its lease lapses, as nobody extends it; the other instance renews under a later lock and stores its pair.
  await until(async () => (await redis().exists(keys.lock)) === 0, 10_000);
  expect(ok([await other.request('/orders/other')])).toHaveLength(1);
  expect(service.counters).toMatchObject({ logins: 1, refreshes: 1, rejected: 0 });
  const stored = await redis().get(keys.pair);

  bridge().resetCounts();
  frozen.thaw();
  expect(ok([await refused])).toHaveLength(1);
  // It found under its lapsed lock the pair the other stored, and took it: no token call, nothing written over it;
  // one read of the store (the pair and the account's record), besides its lease's extension and release.
  expect(service.counters).toMatchObject({ logins: 1, refreshes: 1, rejected: 0 });
  expect(await redis().get(keys.pair)).toBe(stored);
  expect(bridge().counts().byCommand.get('get')).toBe(2);
}, 120_000);
