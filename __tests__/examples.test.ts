import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import axios from 'axios';
import type { AxiosResponse } from 'axios';
import { closeEmulatorsAfterEach, emulator } from './helpers/emulator.js';
import { burst, fulfilled } from './helpers/flow.js';
import { startRedisServer } from '../harness/redis-server.js';
import type { RedisServer } from '../harness/redis-server.js';

// The examples run for real against the emulator: they are documentation that cannot rot.
closeEmulatorsAfterEach();

const root = join(__dirname, '..');
const tsx = join(root, 'node_modules', '.bin', 'tsx');
const demoUser = { users: { demo: 'demo-password' } };

/** Counts an answer other than 200 as a failed request, with an Error that says what came back. */
function refuseUnlessOk(response: AxiosResponse): AxiosResponse | Promise<never> {
  return response.status === 200
    ? response
    : Promise.reject(new Error(`${response.config.url} answered ${response.status}`));
}

function runExample(file: string, env: NodeJS.ProcessEnv = {}): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(
      tsx,
      [join(root, 'examples', file)],
      { cwd: root, env: { ...process.env, ...env } },
      (error, stdout, stderr) =>
        error ? reject(new Error(`${file} failed: ${error.message}\n${stderr}`)) : resolve(stdout),
    );
  });
}

it('node-script.ts runs on its own emulator, one login for ten pages', async () => {
  const output = await runExample('node-script.ts', { API_URL: '' });
  expect(output).toContain('exported 10 pages');
  expect(output).toMatch(/logins: 1/);
});

it('quick-start.ts runs against a running emulator', async () => {
  const service = await emulator(demoUser);
  const output = await runExample('quick-start.ts', {
    API_URL: service.url,
    API_USERNAME: 'demo',
    API_PASSWORD: 'demo-password',
  });
  expect(output).toContain("path: '/allocation/api/v1/tracking/order-list'");
  expect(service.counters.logins).toBe(1);
});

describe('express-backend.ts', () => {
  let server: Server;
  afterEach(async () => {
    await new Promise((resolve) => server?.close(resolve));
  });

  it('shares one login and one renewal per expiry among concurrent routes, and answers 503 with the code on token trouble', async () => {
    const service = await emulator(demoUser);
    Object.assign(process.env, { API_URL: service.url, API_USERNAME: 'demo', API_PASSWORD: 'demo-password' });
    const { app, auth } = await import('../examples/express-backend.js');
    server = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    const backend = axios.create({
      baseURL: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
      validateStatus: () => true,
    });

    expect(
      fulfilled(await burst(50, (i) => backend.get('/orders', { params: { page: i } }).then(refuseUnlessOk))),
    ).toBe(50);
    service.expireAccessTokens();
    expect(fulfilled(await burst(50, () => backend.get('/orders').then(refuseUnlessOk)))).toBe(50);
    expect(service.counters).toMatchObject({ logins: 1, refreshes: 1 });
    // Requests refused before the renewal started are replayed; those arriving later wait for it instead.
    const health = (await backend.get('/health/tokens')).data as { replays: number };
    expect(health).toEqual({ logins: 1, refreshes: 1, replays: service.counters.unauthorized, failures: 0 });
    expect(health.replays).toBeGreaterThanOrEqual(1);

    process.env.API_PASSWORD = 'changed';
    await auth.logout();
    const refused = await backend.get('/orders');
    expect([refused.status, refused.data]).toEqual([503, { error: 'LOGIN_REJECTED' }]);
  });
});

it('with-axios-retry.ts: the user’s retries and the plugin’s renewal compose', async () => {
  const service = await emulator(demoUser);
  Object.assign(process.env, { API_URL: service.url, API_USERNAME: 'demo', API_PASSWORD: 'demo-password' });
  const { api, auth } = await import('../examples/with-axios-retry.js');
  await api.get('/orders');

  // A 503 on a data call is the user's retry's to handle; the 401 after the expiry is the plugin's.
  service.expireAccessTokens();
  service.inject('data', { status: 503 });
  const response = await api.get('/orders');

  expect(response.status).toBe(200);
  expect(service.counters).toMatchObject({ logins: 1, refreshes: 1 });
  expect(service.calls.filter((call) => call.route === 'data').map((call) => call.path)).toEqual([
    '/orders',
    '/orders',
    '/orders',
    '/orders',
  ]);
  expect(auth.stats().replays).toBe(1);
});

describe('fleet recipes', () => {
  let dir: string;
  let redis: RedisServer | undefined;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'token-keeper-fleet-example-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true, maxRetries: 3 });
    await redis?.stop();
    redis = undefined;
  });

  // Each run starts five processes through tsx, which a cold cache and a busy CI machine make slow.
  it('cluster-workers.ts: four workers log in once between them; restarted after an expiry, they renew once and log in no more', async () => {
    const service = await emulator(demoUser);
    const env = {
      API_URL: service.url,
      API_USERNAME: 'demo',
      API_PASSWORD: 'demo-password',
      TOKEN_FILE: join(dir, 'tokens.json'),
    };

    expect(await runExample('cluster-workers.ts', env)).toContain('4 workers done');
    expect(service.counters).toMatchObject({ logins: 1, refreshes: 0 });
    service.expireAccessTokens();
    expect(await runExample('cluster-workers.ts', env)).toContain('4 workers done');
    expect(service.counters).toMatchObject({ logins: 1, refreshes: 1 });
  }, 60_000);

  it('redis-fleet.ts: three replicas started together log in once; after an expiry, three more renew once', async () => {
    redis = await startRedisServer();
    const service = await emulator(demoUser);
    const env = { API_URL: service.url, API_USERNAME: 'demo', API_PASSWORD: 'demo-password', REDIS_URL: redis.url };
    const replicas = () => Promise.all([1, 2, 3].map(() => runExample('redis-fleet.ts', env)));

    expect((await replicas()).every((output) => output.includes('25 pages'))).toBe(true);
    expect(service.counters).toMatchObject({ logins: 1, refreshes: 0 });
    service.expireAccessTokens();
    expect((await replicas()).every((output) => output.includes('25 pages'))).toBe(true);
    expect(service.counters).toMatchObject({ logins: 1, refreshes: 1 });
  }, 60_000);
});
