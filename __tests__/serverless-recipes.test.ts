// The serverless recipes of docs/recipes.md, run as their platforms run them: each cold start a fresh load of the
// example's module (jest.isolateModulesAsync: empty memory, new clients), its handler called with an event or a
// Request, against the emulator over HTTP and a real redis-server (through the bridge of Upstash's REST protocol for
// @upstash/redis). The counts are the emulator's: a fleet of cold starts logs in once, and renews once per expiry.
import type { TokenPair } from '../lib/index.js';
import { closeEmulatorsAfterEach, E2E_PASSWORD, E2E_USER, emulator } from './helpers/emulator.js';
import { upstashBridgeForFile } from './helpers/redis.js';

const { server, redis, bridge } = upstashBridgeForFile();
closeEmulatorsAfterEach();

const saved = { ...process.env };
let service: Awaited<ReturnType<typeof emulator>>;
beforeEach(async () => {
  await redis().flushall();
  service = await emulator();
  Object.assign(process.env, {
    API_URL: service.url,
    API_USERNAME: E2E_USER,
    API_PASSWORD: E2E_PASSWORD,
    UPSTASH_REDIS_REST_URL: bridge().url,
    UPSTASH_REDIS_REST_TOKEN: bridge().token,
    REDIS_URL: server().url,
    UPSTASH_DISABLE_TELEMETRY: '1',
  });
});
afterEach(() => {
  process.env = { ...saved };
});

/** A cold start: the module loaded afresh, as a new instance loads it. */
async function coldStart<T>(path: string): Promise<T> {
  let loaded: T | undefined;
  await jest.isolateModulesAsync(async () => {
    loaded = (await import(path)) as T;
  });
  return loaded!;
}

type LambdaModule = { handler(event: { page?: number }): Promise<{ statusCode: number; body: string }> };

describe.each([
  ['lambda-upstash.ts (@upstash/redis)', '../examples/lambda-upstash.js'],
  ['lambda-elasticache.ts (ioredis)', '../examples/lambda-elasticache.js'],
])('%s', (_label, path) => {
  it('3 cold starts log in once; after an expiry, a token call once', async () => {
    const instances = [await coldStart<LambdaModule>(path), await coldStart<LambdaModule>(path)];
    instances.push(await coldStart<LambdaModule>(path));
    try {
      for (const [index, instance] of instances.entries())
        expect((await instance.handler({ page: index })).statusCode).toBe(200);
      expect(service.counters).toMatchObject({ logins: 1, refreshes: 0 });

      service.expireAccessTokens();
      const answers = await Promise.all(instances.map((instance) => instance.handler({ page: 9 })));
      expect(answers.map((answer) => answer.statusCode)).toEqual([200, 200, 200]);
      expect(service.counters).toMatchObject({ logins: 1, refreshes: 1, rejected: 0 });
    } finally {
      for (const instance of instances) (instance as { close?: () => void }).close?.();
    }
  });
});

it('nextjs-route.ts: GET answers from two cold starts, which log in once, with the fetch adapter', async () => {
  type Route = { GET(request: Request): Promise<Response>; runtime: string };
  const routes = [
    await coldStart<Route>('../examples/nextjs-route.js'),
    await coldStart<Route>('../examples/nextjs-route.js'),
  ];
  for (const route of routes) {
    const response = await route.GET(new Request('https://app.example/api/orders?page=2'));
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ path: '/allocation/api/v1/tracking/order-list?page=2' });
  }
  expect(routes[0]!.runtime).toBe('edge');
  expect(service.counters).toMatchObject({ logins: 1, refreshes: 0 });
});

it('cloudflare-worker.ts: three isolates share one pair: 1 login, and 1 token call after an expiry', async () => {
  type Worker = {
    default: {
      fetch(request: Request, env: object, context: { waitUntil(promise: Promise<unknown>): void }): Promise<Response>;
    };
  };
  const env = {
    API_URL: service.url,
    API_USERNAME: E2E_USER,
    API_PASSWORD: E2E_PASSWORD,
    UPSTASH_REDIS_REST_URL: bridge().url,
    UPSTASH_REDIS_REST_TOKEN: bridge().token,
  };
  const isolates: Worker[] = [];
  for (let isolate = 0; isolate < 3; isolate += 1)
    isolates.push(await coldStart<Worker>('../examples/cloudflare-worker.js'));
  const serve = async (worker: Worker, page: number): Promise<number> => {
    const pending: Array<Promise<unknown>> = [];
    const response = await worker.default.fetch(new Request(`https://worker.example/?page=${page}`), env, {
      waitUntil: (promise) => void pending.push(promise),
    });
    await Promise.all(pending);
    return response.status;
  };
  for (const [index, isolate] of isolates.entries()) expect(await serve(isolate, index)).toBe(200);
  expect(service.counters).toMatchObject({ logins: 1, refreshes: 0 });

  service.expireAccessTokens();
  expect(await Promise.all(isolates.map((isolate, index) => serve(isolate, 10 + index)))).toEqual([200, 200, 200]);
  expect(service.counters).toMatchObject({ logins: 1, refreshes: 1, rejected: 0 });
});

describe('no-shared-store.ts', () => {
  it('costs one login per cold start without a pair, and none with the pair of the secret manager', async () => {
    for (let start = 0; start < 3; start += 1)
      expect((await (await coldStart<LambdaModule>('../examples/no-shared-store.js')).handler({})).statusCode).toBe(
        200,
      );
    expect(service.counters).toMatchObject({ logins: 3 });

    // The scheduled job's pair, as the secret manager holds it.
    const pair: TokenPair = await fetchPair(service.url);
    process.env.TOKEN_PAIR_SECRET = JSON.stringify(pair);
    for (let start = 0; start < 3; start += 1)
      expect((await (await coldStart<LambdaModule>('../examples/no-shared-store.js')).handler({})).statusCode).toBe(
        200,
      );
    expect(service.counters).toMatchObject({ logins: 4, refreshes: 0 });
  });
});

/** A pair from one login, as the job that keeps the secret fresh gets it. */
async function fetchPair(url: string): Promise<TokenPair> {
  const { default: axios } = await import('axios');
  const { attachTokenAuth } = await import('../lib/index.js');
  const auth = attachTokenAuth(axios.create({ baseURL: url }), {
    credentials: { username: E2E_USER, password: E2E_PASSWORD },
  });
  await auth.login();
  const pair = (await auth.getTokens())!;
  auth.eject();
  return pair;
}
