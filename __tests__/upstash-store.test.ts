// RedisTokenStore with the real @upstash/redis client, as serverless and edge platforms reach Redis: over HTTP, through
// the bridge of Upstash's REST protocol (harness/upstash-rest.ts) to a real redis-server. The store contracts run
// against it, at the client's defaults (Base64 responses, automatic pipelining, JSON parsed back) and without them;
// then what replaces pub/sub and what it costs in REST commands; then the leak of a token through the client's error,
// and the clients and options the store refuses.
import { inspect } from 'node:util';
import { build } from 'esbuild';
import axios from 'axios';
import { Redis } from '@upstash/redis';
import { attachTokenAuth } from '../lib/index.js';
import { RedisTokenStore } from '../lib/stores/redis/index.js';
import type { RedisClientLike, RedisSubscriberLike, RedisTokenStoreOptions } from '../lib/stores/redis/index.js';
import { closeEmulatorsAfterEach, E2E_PASSWORD, E2E_USER, emulator } from './helpers/emulator.js';
import { undoAfterEach, until } from './helpers/flow.js';
import { prefixPerTest, upstashBridgeForFile } from './helpers/redis.js';
import {
  CONTRACT_NAMES,
  expectRoundTrip,
  PAIR_A,
  testAccountRecord,
  testStoreAccounts,
  testStoreLock,
} from './helpers/store-contract.js';
import { escapeAccountName } from '../lib/stores/common/account-key.js';

const { redis, bridge } = upstashBridgeForFile();
closeEmulatorsAfterEach();

const { prefix } = prefixPerTest('upstash-test');
/** Stores and plugin handles the test took: undone after it, even when it fails. */
const undo = undoAfterEach();
beforeEach(() => {
  bridge().resetCounts();
});

/** The client options a test runs with: the defaults, or the three the store must not depend on turned off. */
type ClientOptions = { responseEncoding?: false; enableAutoPipelining?: false; automaticDeserialization?: false };

/** A client as a function instance makes it: its own, no retries to wait on, no telemetry headers. */
const upstash = (options: ClientOptions = {}, token = bridge().token) =>
  new Redis({ url: bridge().url, token, retry: false, enableTelemetry: false, ...options });

const key = (name: 'pair' | 'lock') => `{${prefix()}}:${name}`;

describe.each<[string, ClientOptions]>([
  ['@upstash/redis at its defaults (Base64, automatic pipelining, JSON parsed)', {}],
  [
    '@upstash/redis with plain responses, no pipelining, no JSON parsing',
    { responseEncoding: false, enableAutoPipelining: false, automaticDeserialization: false },
  ],
])('RedisTokenStore on %s', (label, options) => {
  /** Each store its own client, as each function instance has. */
  const store = (timings: Partial<RedisTokenStoreOptions> = {}): RedisTokenStore => {
    const created = new RedisTokenStore(upstash(options), { prefix: prefix(), ...timings });
    undo.push(() => created.close());
    return created;
  };

  it('gives back the pair set, and null before any set and after clear()', async () => {
    expect(await store().get()).toBeNull();
    await expectRoundTrip(() => store());
  });

  const lease = (where: () => string) => ({
    where,
    owner: () => redis().get(where()),
    ttlLeft: () => redis().pttl(where()),
    plant: async (owner: string, holder: 'live' | 'killed') =>
      void (await redis().set(where(), owner, 'PX', holder === 'killed' ? 500 : 10_000)),
    lapse: async () => void (await redis().del(where())),
  });

  testStoreLock(label, { open: (timings) => store(timings), fences: 'every grant', lease: lease(() => key('lock')) });
  testAccountRecord(label, { open: () => store(), fences: 'every grant' });
  const named = CONTRACT_NAMES[0]!;
  testStoreAccounts(label, {
    open: (timings) => store(timings),
    fences: 'every grant',
    record: true,
    names: [named],
    lease: () => lease(() => `{${prefix()}#${escapeAccountName(named)}}#lock`),
    // No pub/sub over REST: a store tells its own listeners of its own writes alone.
    hearsOtherHolders: false,
  });
});

describe('RedisTokenStore on @upstash/redis: what replaces pub/sub, and its cost in REST commands', () => {
  const store = (): RedisTokenStore => {
    const created = new RedisTokenStore(upstash(), { prefix: prefix() });
    undo.push(() => created.close());
    return created;
  };

  it('sends no command for a request whose token is good; at an expiry, the holder that renews and the one that takes its pair send a few each', async () => {
    const service = await emulator();
    const holders = [0, 1].map(() => {
      const api = axios.create({ baseURL: service.url });
      const auth = attachTokenAuth(api, {
        credentials: { username: E2E_USER, password: E2E_PASSWORD },
        store: store(),
      });
      undo.push(() => auth.eject());
      return { api, auth };
    });
    for (const { api } of holders) expect((await api.get('/warm')).status).toBe(200);
    expect(service.counters).toMatchObject({ logins: 1, refreshes: 0 });
    await Promise.all(holders.map(({ auth }) => auth.flush()));
    await until(async () => (await redis().exists(key('lock'))) === 0, 5_000);
    bridge().resetCounts();

    for (let request = 0; request < 10; request += 1)
      expect((await holders[request % 2]!.api.get('/orders')).status).toBe(200);
    expect(bridge().counts()).toMatchObject({ requests: 0, commands: 0 });

    // At an expiry, the holder whose request is refused first renews: it consults the account's record (GET), takes
    // the lock (LOCK), reads the pair and the record under it (2 GET), refreshes, writes the pair and the record
    // (WRITE, WRITE_ACCOUNT) and releases (RELEASE). The other, refused in turn, reads where it would renew: the
    // record (GET), the lock (LOCK), the pair and the record under it (2 GET), which hold the new pair: taken, released
    // (RELEASE), no token call. Scripts by EVALSHA alone, loaded at the warm-up.
    service.expireAccessTokens();
    for (const { api, auth } of holders) {
      expect((await api.get('/orders')).status).toBe(200);
      await auth.flush();
      await until(async () => (await redis().exists(key('lock'))) === 0, 5_000);
    }
    expect(service.counters).toMatchObject({ logins: 1, refreshes: 1 });
    expect(bridge().counts().byCommand).toEqual(
      new Map([
        ['get', 3 + 3],
        ['evalsha', 4 + 2],
      ]),
    );
  });

  it.each([
    ['sent alone', { enableAutoPipelining: false as const }],
    ['pipelined', {}],
  ])('fails a write Redis refuses with its error, without the command %s and its tokens', async (_how, options) => {
    const writer = new RedisTokenStore(upstash(options), { prefix: prefix() });
    // A full Redis refuses every write; @upstash/redis says so with ", command was: [...]" after a command sent alone,
    // which would hold the record written, tokens included.
    await redis().config('SET', 'maxmemory', '1');
    let failure: unknown;
    try {
      failure = await writer.set(PAIR_A).then(
        () => undefined,
        (error: unknown) => error,
      );
    } finally {
      await redis().config('SET', 'maxmemory', '0');
    }
    const reported = inspect(failure, { depth: Infinity, showHidden: true });
    expect(reported).toMatch(/Redis: .*OOM command not allowed/);
    expect(reported).not.toContain(PAIR_A.access);
    expect(reported).not.toContain(PAIR_A.refresh!);
  });
});

describe('RedisTokenStore: the REST clients and options it refuses, saying what to pass instead', () => {
  const make =
    (client: unknown, options: Partial<RedisTokenStoreOptions> = {}) =>
    () =>
      new RedisTokenStore(client as RedisClientLike, { prefix: prefix(), ...options });

  it('refuses a `subscriber` with an @upstash/redis client: REST keeps no connection to listen on', () => {
    const client = upstash();
    expect(make(client, { subscriber: client as unknown as RedisSubscriberLike })).toThrow(
      'RedisTokenStore: `subscriber` cannot be used with an @upstash/redis client: its REST protocol keeps no ' +
        'connection to listen on. Leave `subscriber` out: the store reads the pair where a request would renew, and ' +
        'polls the lock every `pollMs` while another holder renews (docs/stores.md says what that costs).',
    );
  });

  it.each([
    ['a pipeline', () => upstash().pipeline()],
    ['a transaction', () => upstash().multi()],
  ])('refuses %s of an @upstash/redis client, which queues commands until exec()', (_what, create) => {
    expect(make(create())).toThrow(
      'RedisTokenStore: the first argument is an @upstash/redis pipeline or transaction (`redis.pipeline()`, ' +
        '`redis.multi()`), which queues commands until `exec()`: pass the client itself, `new Redis({ url, token })`.',
    );
  });

  it('refuses a REST client without scripts', () => {
    const scriptless = { get: () => Promise.resolve(null), evalsha: () => Promise.resolve(null) };
    expect(make(scriptless)).toThrow(
      'RedisTokenStore: the first argument looks like a REST Redis client, but has no `createScript()` and ' +
        '`pipeline()`, which the store runs its scripts with: pass an @upstash/redis client (1.0 or later), ' +
        '`new Redis({ url, token })`.',
    );
  });

  it('takes the client as users make it, typed: `new RedisTokenStore(new Redis({ url, token }), { prefix })`', async () => {
    const store = new RedisTokenStore(new Redis({ url: bridge().url, token: bridge().token, retry: false }), {
      prefix: prefix(),
    });
    expect(await store.set(PAIR_A)).toBe(true);
    expect(await redis().exists(key('pair'))).toBe(1);
  });
});

describe('the Redis store module on Workers and the edge runtime', () => {
  it('bundles with no Node built-in and no use of Buffer or process: it loads without `nodejs_compat`', async () => {
    // platform 'browser' makes an import of a Node built-in (node:crypto, …) a build error.
    const bundled = await build({
      entryPoints: ['lib/stores/redis/index.ts'],
      bundle: true,
      format: 'esm',
      platform: 'browser',
      write: false,
      metafile: true,
      logLevel: 'silent',
    });
    expect(Object.keys(bundled.metafile.inputs).filter((input) => !input.startsWith('lib/'))).toEqual([]);
    const code = new TextDecoder().decode(bundled.outputFiles[0]!.contents);
    expect(code).not.toMatch(/\bBuffer\b|\bprocess\./);
  });
});
