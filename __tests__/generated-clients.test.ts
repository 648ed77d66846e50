// The recipes for API clients generated from an OpenAPI spec (examples/openapi-typescript-codegen*.ts,
// swagger-typescript-api.ts, hey-api.ts, orval.ts), each with its generator's real output (examples/generated/, from
// fixtures/orders-api.yaml), on the emulator over real HTTP.
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join, relative } from 'node:path';
import axios from 'axios';
import { attachTokenAuth } from '../lib/index.js';
import type { TokenAuth } from '../lib/index.js';
import type { TokenServiceEmulator } from '../lib/emulator/index.js';
import { closeEmulatorsAfterEach, E2E_PASSWORD, E2E_USER, emulator } from './helpers/emulator.js';
import { burst, fulfilled } from './helpers/flow.js';
import { root, runScript } from './helpers/scripts.js';
import { failureOf } from './helpers/settled.js';
import * as codegen from '../examples/openapi-typescript-codegen.js';
import * as codegenClient from '../examples/openapi-typescript-codegen-client.js';
import * as swagger from '../examples/swagger-typescript-api.js';
import * as heyApi from '../examples/hey-api.js';
import { client as heyApiClient } from '../examples/generated/hey-api/client.gen.js';
import * as orval from '../examples/orval.js';
import * as orvalClient from '../examples/generated/orval/orders.js';

closeEmulatorsAfterEach();

const credentials = { username: E2E_USER, password: E2E_PASSWORD };

interface Order {
  item: string;
  quantity: number;
}

/** One recipe's client, as the tests drive it; each call returns what the generated function typed it as. */
interface Orders {
  list(status: 'open' | 'shipped'): Promise<{ method: string; path: string; user: string }>;
  create(order: Order): Promise<{ method: string; body: Order }>;
  /** Asks for an order the service answers 404 for; checks the app gets the generator's own error, and reads it. */
  missing(): Promise<{ status: number; body: unknown }>;
}

interface Recipe {
  name: string;
  connect(apiURL: string): { orders: Orders; auth: TokenAuth };
}

/** A type guard for `instanceof type`, named for failureOf's message. */
function instanceOf<T>(type: abstract new (...args: never[]) => T): (reason: unknown) => reason is T {
  const guard = (reason: unknown): reason is T => reason instanceof type;
  return Object.defineProperty(guard, 'name', { value: `instanceof ${type.name}` });
}

const RECIPES: Recipe[] = [
  {
    name: 'openapi-typescript-codegen on the global axios',
    connect: (apiURL) => ({
      auth: codegen.connectOrders(apiURL, credentials),
      orders: codegenOrders(codegen.OrdersService, codegen.ApiError),
    }),
  },
  {
    name: 'openapi-typescript-codegen client class on its own instance',
    connect: (apiURL) => {
      const { orders, auth } = codegenClient.connectOrders(apiURL, credentials);
      return { auth, orders: codegenOrders(orders.orders, codegenClient.ApiError) };
    },
  },
  {
    name: 'swagger-typescript-api on api.instance',
    connect: (apiURL) => {
      const { api, auth } = swagger.connectOrders(apiURL, credentials);
      return {
        auth,
        orders: {
          list: async (status) => (await api.orders.listOrders({ status })).data,
          create: async (order) => (await api.orders.createOrder(order)).data,
          missing: async () => {
            const { response } = await failureOf(api.orders.getOrder('missing'), axios.isAxiosError);
            return { status: response!.status, body: response!.data };
          },
        },
      };
    },
  },
  {
    name: '@hey-api/openapi-ts with your instance in setConfig',
    connect: (apiURL) => ({ auth: heyApi.connectOwnInstance(apiURL, credentials), orders: heyApiOrders() }),
  },
  {
    name: '@hey-api/openapi-ts on client.instance',
    connect: (apiURL) => ({ auth: heyApi.connectClientInstance(apiURL, credentials), orders: heyApiOrders() }),
  },
  {
    name: 'orval with its custom instance',
    connect: (apiURL) => ({
      auth: orval.connectOrders(apiURL, credentials),
      orders: {
        list: (status) => orvalClient.listOrders({ status }),
        create: (order) => orvalClient.createOrder(order),
        missing: async () => {
          const { response } = await failureOf(orvalClient.getOrder('missing'), axios.isAxiosError);
          return { status: response!.status, body: response!.data };
        },
      },
    }),
  },
];

/**
 * openapi-typescript-codegen's OrdersService, static on the global axios or a member of the client class: the same
 * three calls, each generation with its own CancelablePromise and ApiError.
 */
interface CodegenOrdersService {
  listOrders(query: { status?: 'open' | 'shipped' }): Promise<{ method: string; path: string; user: string }>;
  createOrder(request: { requestBody: Order }): Promise<{ method: string; body: Order }>;
  getOrder(path: { orderId: string }): Promise<unknown>;
}

function codegenOrders(
  service: CodegenOrdersService,
  ApiError: abstract new (...args: never[]) => { status: number; body: unknown },
): Orders {
  return {
    list: (status) => service.listOrders({ status }),
    create: (order) => service.createOrder({ requestBody: order }),
    missing: async () => {
      const { status, body } = await failureOf(service.getOrder({ orderId: 'missing' }), instanceOf(ApiError));
      return { status, body };
    },
  };
}

/** hey-api's functions as its docs use them: `throwOnError` where the app wants data, the default `{ error }` result for the 404. */
function heyApiOrders(): Orders {
  return {
    list: async (status) => (await heyApi.listOrders({ query: { status }, throwOnError: true })).data,
    create: async (order) => (await heyApi.createOrder({ body: order, throwOnError: true })).data,
    missing: async () => {
      const result = await heyApi.getOrder({ path: { orderId: 'missing' } });
      if (result.error === undefined)
        throw new Error(`expected the { error } result, got ${JSON.stringify(result.data)}`);
      return { status: result.response!.status, body: result.error };
    },
  };
}

/** The login and token calls the emulator received, faults and refusals included. */
function tokenCalls(service: TokenServiceEmulator): { login: number; token: number } {
  const count = (route: string) => service.calls.filter((call) => call.route === route).length;
  return { login: count('login'), token: count('token') };
}

const attached: TokenAuth[] = [];
afterEach(() => {
  // The global axios, orval's instance and hey-api's client are the modules' own: each test leaves them as it found them.
  for (const auth of attached.splice(0)) auth.eject();
  heyApiClient.setConfig({ axios: undefined, baseURL: 'https://api.example.com' });
});

describe.each(RECIPES)('$name', (recipe) => {
  let service: TokenServiceEmulator;
  let orders: Orders;
  beforeEach(async () => {
    service = await emulator();
    const connected = recipe.connect(service.url);
    attached.push(connected.auth);
    orders = connected.orders;
  });

  it('first use: one login, and the typed result', async () => {
    await expect(orders.list('open')).resolves.toMatchObject({
      method: 'GET',
      path: '/api/v1/orders?status=open',
      user: E2E_USER,
    });
    expect(tokenCalls(service)).toEqual({ login: 1, token: 0 });
  });

  it('an expiry under 20 concurrent POSTs: one token call, 20 successes, every body intact', async () => {
    await orders.list('open');
    service.expireAccessTokens();
    const sent = Array.from({ length: 20 }, (_, i) => ({ item: `item-${i}`, quantity: i + 1 }));

    const results = await burst(20, (i) => orders.create(sent[i]!));

    expect(
      results.map((result) => (result.status === 'fulfilled' ? result.value.body : (result.reason as unknown))),
    ).toEqual(sent);
    expect(tokenCalls(service)).toEqual({ login: 1, token: 1 });
    expect(service.counters).toMatchObject({ logins: 1, refreshes: 1 });
    // At least the first POST went out with the expired token and was replayed, its body with it.
    expect(service.counters.unauthorized).toBeGreaterThanOrEqual(1);
  });

  it('a refused refresh token: one refused refresh, one login, and the requests succeed', async () => {
    await orders.list('open');
    service.expireAccessTokens();
    service.revokeRefreshTokens();

    const results = await burst(10, (i) => orders.list(i % 2 === 0 ? 'open' : 'shipped'));

    expect(fulfilled(results)).toBe(10);
    expect(tokenCalls(service)).toEqual({ login: 2, token: 1 });
    expect(service.counters).toMatchObject({ logins: 2, refreshes: 0, rejected: 1 });
  });

  it("a 404 reaches the app as the generator's own error, and costs no token call", async () => {
    await orders.list('open');
    service.inject('data', { status: 404, body: { detail: 'No such order.' } });

    await expect(orders.missing()).resolves.toEqual({ status: 404, body: { detail: 'No such order.' } });
    expect(tokenCalls(service)).toEqual({ login: 1, token: 0 });
    expect(service.calls.filter((call) => call.route === 'data')).toHaveLength(2);
  });
});

describe('@hey-api/openapi-ts: the baseURL given to setConfig() after attaching', () => {
  it('the API on another origin than the token service: its requests carry the token', async () => {
    const service = await emulator();
    // Attached when the client still points at the spec's server; the app's config then moves it. The same
    // emulator answers as the API on http://localhost:port, an origin other than the token service's.
    attached.push(attachTokenAuth(heyApiClient.instance, { credentials, authBaseURL: service.url }));
    heyApiClient.setConfig({ baseURL: service.url.replace('127.0.0.1', 'localhost') });

    const { data } = await heyApi.listOrders({ query: { status: 'open' }, throwOnError: true });

    expect(data).toMatchObject({ method: 'GET', user: E2E_USER });
    expect(tokenCalls(service)).toEqual({ login: 1, token: 0 });
  });
});

describe('examples/generated/', () => {
  /** Every file under `dir`, by its path from there, with its text. */
  function files(dir: string): Record<string, string> {
    return Object.fromEntries(
      readdirSync(dir, { recursive: true, withFileTypes: true })
        .filter((entry) => entry.isFile())
        .map((entry) => {
          const path = join(entry.parentPath, entry.name);
          return [relative(dir, path), readFileSync(path, 'utf8')];
        }),
    );
  }

  it('is what `npm run generate:clients` makes from fixtures/orders-api.yaml', async () => {
    mkdirSync(join(root, '.tmp'), { recursive: true });
    const target = mkdtempSync(join(root, '.tmp', 'generated-'));
    try {
      const { code, stderr } = await runScript(join(root, 'scripts', 'generate-clients.mjs'), [target]);
      expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
      expect(files(join(target, 'examples', 'generated'))).toEqual(files(join(root, 'examples', 'generated')));
    } finally {
      rmSync(target, { recursive: true, force: true });
    }
  }, 60_000);
});
