// Tokens sealed at rest across real processes (harness/fleet-worker.ts) sharing a real redis-server, a real Redis
// Cluster or one token file, against the emulator over real HTTP: nothing of a token in any key's value or any byte of
// the store's folder after logins and refreshes, the sealed pair still shared, the keys rotated by a rolling deploy
// without a login, a holder without the key failing closed, a tampered pair costing the fleet one login, and the
// switch from clear. The cipher's own checks are in the sealing-*.test.ts files.
import { randomBytes, randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import Redis from 'ioredis';
import { closeEmulatorsAfterEach, emulator } from './helpers/emulator.js';
import { fleetsForFile } from './helpers/fleets.js';
import { filesUnder, secretsAtRest } from './helpers/scan-secrets.js';
import type { PlaceAtRest, Secret } from './helpers/scan-secrets.js';
import { FleetPool, sumBursts } from '../harness/fleet.js';
import type { BurstReply, Fleet, FleetEncryption, FleetEvent, FleetStoreConfig } from '../harness/fleet.js';
import { requireRedisCluster, startRedisCluster } from '../harness/redis-cluster.js';
import type { RedisCluster } from '../harness/redis-cluster.js';
import { withConnection } from '../harness/redis-server.js';
import type { TokenServiceEmulator } from '../lib/emulator/index.js';
import { FileTokenStore } from '../lib/stores/file/index.js';
import { RedisTokenStore } from '../lib/stores/redis/index.js';
import type { TokenPair } from '../lib/index.js';

requireRedisCluster();
closeEmulatorsAfterEach();
const { start, redisStore, fileStore } = fleetsForFile('sealed-fleet');

/** Fresh keys for every run: 32 random bytes each, in Base64, as `openssl rand -base64 32` prints. */
const K1 = { id: 'k1', secret: randomBytes(32).toString('base64') };
const K2 = { id: 'k2', secret: randomBytes(32).toString('base64') };
const SEALED_WITH = /^v1\.([A-Za-z0-9_-]+)\./;

/** Every key's value on the Redis server at `port`, whatever its type, and the key's name: what a `GET` would show. */
async function redisAtRest(port: number): Promise<PlaceAtRest[]> {
  return withConnection(port, async (client) => {
    const places: PlaceAtRest[] = [];
    for (const key of await client.keys('*')) {
      const type = await client.type(key);
      let value: string[];
      if (type === 'string') value = [(await client.getBuffer(key))?.toString('latin1') ?? ''];
      else if (type === 'hash') value = Object.entries(await client.hgetall(key)).flat();
      else if (type === 'list') value = await client.lrange(key, 0, -1);
      else if (type === 'set') value = await client.smembers(key);
      else if (type === 'zset') value = await client.zrange(key, 0, -1);
      else throw new Error(`The scan does not read a ${type} (key ${key}); teach it.`);
      places.push({ where: `redis :${port} ${key}`, bytes: [key, ...value].join('\n') });
    }
    return places;
  });
}

/**
 * Every token the service issued in the test: the access tokens its data calls carried, the refresh tokens its token
 * calls were sent, and the pair the store holds now (opened with the keys), which no call carried yet.
 */
function tokensIssued(service: TokenServiceEmulator, current: TokenPair | null): Secret[] {
  const tokens = new Set<string>();
  for (const call of service.calls) {
    if (call.route === 'token') tokens.add((JSON.parse(call.body) as { refresh_token: string }).refresh_token);
    else if (call.authorization?.startsWith('Bearer ')) tokens.add(call.authorization.slice('Bearer '.length));
  }
  if (current) for (const token of [current.access, current.refresh]) if (token) tokens.add(token);
  for (const token of tokens) if (!service.issued(token)) throw new Error('a token the service did not issue');
  return [...tokens].map((value, index) => ({ name: `token #${index + 1}`, value }));
}

/** The test's own store on the fleet's store, to open what the fleet keeps, with `keys`. */
function storeOf(
  config: FleetStoreConfig,
  keys: FleetEncryption['keys'],
  clients: Redis[],
): FileTokenStore | RedisTokenStore {
  if (config.kind === 'file') return new FileTokenStore(config.path, { encryption: { keys } });
  if (config.kind !== 'redis') throw new Error('a store of a single redis-server or a file');
  const client = new Redis(config.url);
  clients.push(client);
  return new RedisTokenStore(client, { prefix: config.prefix, encryption: { keys } });
}

/** The key id the fleet's pair is sealed with now; undefined for a pair in clear. */
async function sealedWith(config: FleetStoreConfig): Promise<string | undefined> {
  if (config.kind === 'postgres') throw new Error('This file runs its fleets on files and Redis.');
  const text =
    config.kind === 'file'
      ? await readFile(config.path, 'utf8')
      : await withConnection(portOf(config), (client) => client.get(`{${config.prefix}}:pair`));
  const { pair } = JSON.parse(text ?? 'null') as { pair: { sealed?: string } };
  return pair.sealed === undefined ? undefined : SEALED_WITH.exec(pair.sealed)?.[1];
}

function portOf(config: FleetStoreConfig): number {
  if (config.kind !== 'redis') throw new Error('a store of a single redis-server');
  return Number(new URL(config.url).port);
}

function failures(replies: readonly BurstReply[]): Array<Extract<FleetEvent, { name: 'failure' }>> {
  return sumBursts(replies).events.filter((event) => event.name === 'failure');
}

/**
 * A fleet of single processes that a test replaces one at a time, as a rolling deploy does: each with the store's
 * `encryption` of its release, numbered apart so that their output says which one spoke.
 */
function rollingFleet(emulatorUrl: string, store: FleetStoreConfig) {
  const slots: Fleet[] = [];
  let started = 0;
  const launch = (encryption: FleetEncryption | undefined) =>
    start({ count: 1, firstIndex: started++, emulatorUrl, store, ...(encryption && { encryption }) });
  return {
    async start(count: number, encryption: FleetEncryption | undefined) {
      for (let slot = 0; slot < count; slot += 1) slots.push(await launch(encryption));
    },
    /** Stops the process in `slot`, then starts its successor with `encryption`. */
    async replace(slot: number, encryption: FleetEncryption | undefined) {
      await slots[slot]!.stop();
      slots[slot] = await launch(encryption);
    },
    /** A burst of `n` from every process at once. */
    async burst(n: number): Promise<BurstReply[]> {
      return (await Promise.all(slots.map((fleet) => fleet.burst(n)))).flat();
    },
    size: () => slots.length,
  };
}

const clients: Redis[] = [];
afterEach(async () => {
  await Promise.all(clients.splice(0).map((client) => client.quit()));
});

describe.each([
  ['Redis', () => redisStore(true)],
  ['one token file', fileStore],
] as const)('3 processes sealing the pair in %s', (_name, makeStore) => {
  it('log in once and refresh once per expiry between them, and no token sits in any key or byte of the store, in any spelling', async () => {
    const service = await emulator();
    const store = await makeStore();
    const fleet = await start({ count: 3, emulatorUrl: service.url, store, encryption: { keys: [K1] } });

    const rounds = [await fleet.burst(20)];
    for (let expiry = 0; expiry < 2; expiry += 1) {
      service.expireAccessTokens();
      rounds.push(await fleet.burst(20));
    }

    const total = sumBursts(rounds.flat());
    expect(total.errors).toEqual([]);
    expect(total).toMatchObject({ ok: 180, failed: 0 });
    expect(service.counters).toMatchObject({ logins: 1, refreshes: 2, rejected: 0 });
    expect(failures(rounds.flat())).toEqual([]);
    // Two that did not log in took the sealed pair from the store, and opened it.
    expect(rounds[0]!.filter((reply) => reply.events.some((event) => event.name === 'load'))).toHaveLength(2);

    const current = await storeOf(store, [K1], clients).get();
    const tokens = tokensIssued(service, current);
    // 3 access tokens and 3 refresh tokens: one pair per login or refresh, every one of them looked for.
    expect(tokens).toHaveLength(6);
    expect(await sealedWith(store)).toBe('k1');
    const places = store.kind === 'file' ? await filesUnder(dirname(store.path)) : await redisAtRest(portOf(store));
    expect(places.length).toBeGreaterThan(1);
    expect(secretsAtRest(places, tokens)).toEqual([]);
  }, 60_000);
});

describe('keys rotate without a login', () => {
  it('a rolling deploy of 4 processes [k1] → [k1, k2] → [k2, k1] → [k2], a renewal after every process replaced: 1 login in all, no request failed, the pair sealed with k2 at the end', async () => {
    const service = await emulator();
    const store = await redisStore(true);
    const fleet = rollingFleet(service.url, store);
    await fleet.start(4, { keys: [K1] });
    const replies = await fleet.burst(10);
    expect(await sealedWith(store)).toBe('k1');

    const releases = [[K1, K2], [K2, K1], [K2]];
    const sealedAfterRelease: Array<string | undefined> = [];
    for (const keys of releases) {
      for (let slot = 0; slot < fleet.size(); slot += 1) {
        await fleet.replace(slot, { keys });
        // Every holder, old release and new, renews or takes the pair the other wrote.
        service.expireAccessTokens();
        replies.push(...(await fleet.burst(10)));
      }
      sealedAfterRelease.push(await sealedWith(store));
    }

    const total = sumBursts(replies);
    expect(total.errors).toEqual([]);
    expect(failures(replies)).toEqual([]);
    expect(total).toMatchObject({ ok: 40 * 13, failed: 0 });
    expect(service.counters).toMatchObject({ logins: 1, refreshes: 12, rejected: 0 });
    // k2 seals from the release that puts it first; the pair k1 sealed was sealed again at its next write.
    expect(sealedAfterRelease).toEqual(['k1', 'k2', 'k2']);
    const error = await storeOf(store, [K1], clients)
      .get()
      .catch((reason: unknown) => reason);
    expect(error).toMatchObject({ code: 'STORE_KEY_MISSING' });
  }, 180_000);
});

describe('a holder without the sealing key (a mis-deploy)', () => {
  it('fails its requests at once with STORE_KEY_MISSING naming `encryption.keys` and the key, said once in a failure event, and never logs in; the others go on', async () => {
    const service = await emulator();
    const store = await redisStore(true);
    const fleet = rollingFleet(service.url, store);
    await fleet.start(2, { keys: [K1] });
    await fleet.burst(5);
    expect(service.counters.logins).toBe(1);

    const stray = await start({ count: 1, firstIndex: 9, emulatorUrl: service.url, store, encryption: { keys: [K2] } });
    const [refused] = await stray.burst(5);
    const [again] = await stray.burst(5);
    service.expireAccessTokens();
    const others = await fleet.burst(5);

    expect(refused).toMatchObject({ ok: 0, failed: 5 });
    expect(again).toMatchObject({ ok: 0, failed: 5 });
    for (const error of [...refused!.errors, ...again!.errors])
      expect(error).toMatch(
        /^STORE_KEY_MISSING: .* holds a pair sealed with key "k1", and `encryption\.keys` lacks key "k1" here \(it has "k2"\): add it\./,
      );
    const said = failures([refused!, again!]);
    expect(said).toHaveLength(1);
    expect(said[0]).toMatchObject({ code: 'STORE_KEY_MISSING' });
    expect(refused!.stats.logins + again!.stats.logins).toBe(0);
    expect(service.counters).toMatchObject({ logins: 1, refreshes: 1 });
    expect(sumBursts(others)).toMatchObject({ ok: 10, failed: 0 });
    expect(await sealedWith(store)).toBe('k1');
  }, 60_000);
});

describe('a sealed pair with a byte flipped (tampered or corrupt)', () => {
  it('is read as no pair and said in a failure event: the fleet logs in once, with no refresh and no request failed', async () => {
    const service = await emulator();
    const store = await redisStore(true);
    const fleet = await start({ count: 3, emulatorUrl: service.url, store, encryption: { keys: [K1] } });
    const first = await fleet.burst(5);
    const key = `{${store.kind === 'redis' ? store.prefix : ''}}:pair`;
    await withConnection(portOf(store), async (client) => {
      const record = JSON.parse((await client.get(key))!) as { pair: { sealed: string } };
      const parts = record.pair.sealed.split('.');
      const bytes = Buffer.from(parts[3]!, 'base64url');
      bytes[0]! ^= 0x01;
      parts[3] = bytes.toString('base64url');
      record.pair.sealed = parts.join('.');
      await client.set(key, JSON.stringify(record), 'KEEPTTL');
    });

    service.expireAccessTokens();
    const after = await fleet.burst(5);

    expect(sumBursts([...first, ...after])).toMatchObject({ ok: 30, failed: 0 });
    expect(service.counters).toMatchObject({ logins: 2, refreshes: 0, rejected: 0 });
    const said = failures(after);
    expect(said.length).toBeGreaterThanOrEqual(1);
    for (const failure of said) {
      expect(failure.code).toBe('STORE_FAILED');
      expect(failure.message).toMatch(/holds a sealed pair that failed authentication with `encryption\.keys`/);
    }
    expect(await sealedWith(store)).toBe('k1');
    expect(await storeOf(store, [K1], clients).get()).not.toBeNull();
  }, 60_000);
});

describe('the switch from clear to sealed', () => {
  it('a rolling deploy of 2 processes: none → [k1] with acceptClear and writeClear → [k1] with acceptClear → [k1]: 1 login in all; then a pair in clear is refused (read as no pair, said, 1 login)', async () => {
    const service = await emulator();
    const store = await redisStore(true);
    const fleet = rollingFleet(service.url, store);
    await fleet.start(2, undefined);
    const replies = await fleet.burst(10);
    const sealedAfterRelease: Array<string | undefined> = [];
    for (const encryption of [
      { keys: [K1], acceptClear: true, writeClear: true },
      { keys: [K1], acceptClear: true },
      { keys: [K1] },
    ]) {
      for (let slot = 0; slot < fleet.size(); slot += 1) {
        await fleet.replace(slot, encryption);
        service.expireAccessTokens();
        replies.push(...(await fleet.burst(10)));
      }
      sealedAfterRelease.push(await sealedWith(store));
    }

    expect(sumBursts(replies)).toMatchObject({ ok: 20 * 7, failed: 0 });
    expect(service.counters).toMatchObject({ logins: 1, refreshes: 6, rejected: 0 });
    expect(failures(replies)).toEqual([]);
    expect(sealedAfterRelease).toEqual([undefined, 'k1', 'k1']);

    // The switch is done: a pair in clear (planted, as a holder left behind would write it) is no longer taken.
    const client = new Redis(store.kind === 'redis' ? store.url : '');
    clients.push(client);
    const current = (await storeOf(store, [K1], clients).get())!;
    await new RedisTokenStore(client, { prefix: store.kind === 'redis' ? store.prefix : '' }).set(current);
    service.expireAccessTokens();
    const after = await fleet.burst(10);

    expect(sumBursts(after)).toMatchObject({ ok: 20, failed: 0 });
    expect(service.counters).toMatchObject({ logins: 2, refreshes: 6 });
    const said = failures(after);
    expect(said.length).toBeGreaterThanOrEqual(1);
    for (const failure of said)
      expect(failure.message).toMatch(/holds a pair in clear, which `encryption` takes only with `acceptClear`/);
    expect(await sealedWith(store)).toBe('k1');
  }, 180_000);
});

describe('a Redis Cluster of 3 masters', () => {
  let cluster: RedisCluster | undefined;
  beforeAll(async () => {
    cluster = await startRedisCluster({ masters: 3 });
  }, 60_000);
  afterAll(async () => {
    await cluster?.stop();
  });
  const fleets = new FleetPool();
  afterEach(() => fleets.stopAll());

  it('3 processes sealing the pair: 1 login and 1 refresh per expiry, and no token in any key of any node, in any spelling', async () => {
    const service = await emulator();
    const prefix = `sealed-cluster:${randomUUID()}`;
    const store: FleetStoreConfig = { kind: 'redis-cluster', nodes: cluster!.nodes, prefix, pubsub: true };
    const fleet = await fleets.start({ count: 3, emulatorUrl: service.url, store, encryption: { keys: [K1] } });
    const rounds = [await fleet.burst(20)];
    for (let expiry = 0; expiry < 2; expiry += 1) {
      service.expireAccessTokens();
      rounds.push(await fleet.burst(20));
    }

    expect(sumBursts(rounds.flat())).toMatchObject({ ok: 180, failed: 0 });
    expect(service.counters).toMatchObject({ logins: 1, refreshes: 2, rejected: 0 });
    expect(failures(rounds.flat())).toEqual([]);
    const places = (await Promise.all(cluster!.livePorts().map((port) => redisAtRest(port)))).flat();
    const keysOfPrefix = places.filter((place) => place.where.includes(prefix));
    expect(keysOfPrefix.length).toBeGreaterThan(1);
    // The pair now, opened on the node that serves its slot with a store of the test's own, for the scan.
    const { port } = await cluster!.masterOf(`{${prefix}}:pair`);
    const client = new Redis(port, '127.0.0.1');
    clients.push(client);
    const current = await new RedisTokenStore(client, { prefix, encryption: { keys: [K1] } }).get();
    const tokens = tokensIssued(service, current);
    expect(tokens).toHaveLength(6);
    expect(secretsAtRest(places, tokens)).toEqual([]);
  }, 90_000);
});
