// The PostgresTokenStore's own behaviour against a real PostgreSQL server, beyond the contracts
// (postgres-store-locks.test.ts): what it refuses at construction and what it warns of, the table's error and schema,
// its news by LISTEN and by polling, sealing, rows that expire, and a lock that holds no pooled connection.
import { Client, Pool } from 'pg';
import axios from 'axios';
import { attachTokenAuth } from '../lib/index.js';
import { PostgresTokenStore } from '../lib/stores/postgres/index.js';
import type { TokenPair } from '../lib/index.js';
import { closeEmulatorsAfterEach, E2E_PASSWORD, E2E_USER, emulator } from './helpers/emulator.js';
import { until } from './helpers/flow.js';
import { poolOf, postgresStoreForFile } from './helpers/postgres-store.js';
import { KEY_1, PAIR, SEALED } from './helpers/sealing.js';
import { PAIR_A, PAIR_B } from './helpers/store-contract.js';

const { server, pg, pool, store, row, key, undo, warnings, listen, locked } = postgresStoreForFile();

const credentials = { username: E2E_USER, password: E2E_PASSWORD };
closeEmulatorsAfterEach();

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
/** The sessions of the server that are listening on a channel: LISTEN was their last statement. */
const listeners = async (): Promise<number> =>
  Number(
    (await pg().query<{ n: string }>("SELECT count(*) AS n FROM pg_stat_activity WHERE query LIKE 'LISTEN %'")).rows[0]!
      .n,
  );

describe('PostgresTokenStore: what it refuses at construction, naming the fix', () => {
  it.each([
    ['no pool', undefined, /the first argument must be a pool of pg's, such as new Pool\(\{ connectionString \}\)/],
    ['an object without query()', {}, /got an object without query\(\)/],
  ])('%s', (_, given, message) => {
    expect(() => new PostgresTokenStore(given as never, { key: 'k' })).toThrow(message);
  });

  it('one connection (a pg Client) instead of a pool', () => {
    const client = new Client({ connectionString: server().url });
    expect(() => new PostgresTokenStore(client as never, { key: 'k' })).toThrow(
      /give it a pool \(new Pool\(\) from pg\), not one connection \(new Client\(\)\)/,
    );
  });

  it('a pool that was ended', async () => {
    const ended = new Pool({ connectionString: server().url });
    await ended.end();
    expect(() => new PostgresTokenStore(ended, { key: 'k' })).toThrow(/the pool was ended \(pool.end\(\)\)/);
  });

  it.each([
    ['a missing key', {}, /`key` is required: one string per account, such as "orders-api"; got undefined/],
    ['a key over 1,000 characters', { key: 'k'.repeat(1_001) }, /at most 1000 characters .* this one has 1001/],
    [
      'a table that is no plain name',
      { key: 'k', table: 'tokens; DROP TABLE x' },
      /`table` must be a table's name or `schema.name`/,
    ],
    ['an unknown option', { key: 'k', prefix: 'p' }, /unknown option `prefix`; the options are `key`, `table`/],
    [
      'a keyTtlMs no longer than lockTtlMs',
      { key: 'k', keyTtlMs: 5_000, lockTtlMs: 5_000 },
      /`keyTtlMs` must be longer than `lockTtlMs`/,
    ],
    [
      'a news that is neither listen nor poll',
      { key: 'k', news: 'push' },
      /`news` must be 'listen' or 'poll'; got "push"/,
    ],
  ])('%s', (_, options, message) => {
    expect(() => new PostgresTokenStore(pool(), options as never)).toThrow(message);
  });

  it("warns of a pool without an 'error' listener, whose idle connections would end the process at a restart", () => {
    const bare = new Pool({ connectionString: server().url });
    undo.push(() => bare.end());
    const said: string[] = [];
    new PostgresTokenStore(bare, { key: key(), onWarning: (message) => said.push(message) });
    bare.on('error', () => undefined);
    new PostgresTokenStore(bare, { key: key(), onWarning: (message) => said.push(message) });

    expect(said).toEqual([
      "PostgresTokenStore: the pool has no 'error' listener: when the server restarts, pg emits 'error' for each idle " +
        "connection, which ends the process. Add one: pool.on('error', (error) => logger.warn(error)).",
    ]);
  });
});

describe('PostgresTokenStore: the table', () => {
  it('names the statement to run when the table is missing, and loses nothing', async () => {
    const missing = store({ table: 'tokens_not_made' });

    const error = (await missing.get().catch((reason: unknown) => reason)) as Error;

    expect(error.message).toContain('PostgresTokenStore: the table tokens_not_made does not exist');
    expect(error.message).toContain("`await PostgresTokenStore.createSchema(pool, { table: 'tokens_not_made' })`");
    expect(error.message).toContain('CREATE TABLE IF NOT EXISTS "tokens_not_made" (');
    await expect(missing.set(PAIR_A)).rejects.toThrow(/does not exist/);
  });

  it('createSchema() makes a table in a schema of the app, may run again, and the store works on it', async () => {
    await pg().query('CREATE SCHEMA IF NOT EXISTS auth');
    await PostgresTokenStore.createSchema(pg(), { table: 'auth.tokens' });
    await PostgresTokenStore.createSchema(pg(), { table: 'auth.tokens' });
    const tokens = store({ table: 'auth.tokens' });

    expect(await tokens.set(PAIR_A, (await locked(tokens)).fence)).toBe(true);

    const { rows } = await pg().query<{ key: string }>('SELECT key FROM auth.tokens');
    expect(rows.map((each) => each.key)).toEqual([key()]);
  });

  it('reads a row nobody wrote for keyTtlMs as no pair, and deleteExpired() removes it alone', async () => {
    const short = store({ keyTtlMs: 1_500, lockTtlMs: 1_000 });
    const other = store({ key: `${key()}-live` });
    await short.set(PAIR_A);
    await other.set(PAIR_B);
    await sleep(1_600);

    expect(await short.get()).toBeNull();
    expect(await other.get()).toEqual(PAIR_B);
    expect(await PostgresTokenStore.deleteExpired(pg())).toBeGreaterThanOrEqual(1);
    expect(await row()).toBeUndefined();
    expect(await other.get()).toEqual(PAIR_B);
  });
});

describe('PostgresTokenStore: news', () => {
  it('by LISTEN: another process’s write and drop are heard long before a poll, on one connection of the store’s own', async () => {
    const reader = store({ newsPollMs: 60_000 });
    const writer = store();
    const { heard } = listen(reader);
    await until(async () => (await listeners()) >= 1, 5_000);
    // The store's check that LISTEN hears its own notification.
    await sleep(300);

    await writer.set(PAIR_A);
    await until(() => heard.length === 1, 3_000);
    await writer.clear();
    await until(() => heard.length === 2, 3_000);

    expect(heard).toEqual([PAIR_A, null]);
    expect(warnings).toEqual([]);
  });

  it('by polling (`news: poll`): heard within newsPollMs, with no listening connection', async () => {
    const before = await listeners();
    const reader = store({ news: 'poll', newsPollMs: 100 });
    const writer = store();
    const { heard } = listen(reader);
    await sleep(250);

    await writer.set(PAIR_A);
    await until(() => heard.length === 1, 2_000);

    expect(heard).toEqual([PAIR_A]);
    expect(await listeners()).toBe(before);
  });

  it('closes its listening connection with close(), and its accounts’ stores share it', async () => {
    const before = await listeners();
    const parent = store({ newsPollMs: 60_000 });
    listen(parent);
    listen(parent.forAccount('alice'));
    listen(parent.forAccount('bob'));
    await until(async () => (await listeners()) === before + 1, 5_000);

    await parent.close();

    await until(async () => (await listeners()) === before, 5_000);
  });
});

describe('PostgresTokenStore: sealing', () => {
  it('keeps no token in clear in the row with `encryption`, reads the pair back, and keeps DPoP keys sealed', async () => {
    const sealed = store({ encryption: { keys: [KEY_1] } });

    expect(await sealed.set(PAIR)).toBe(true);

    const text = String((await row())?.['pair']);
    expect(text).not.toContain(PAIR.access);
    expect(text).not.toContain(PAIR.refresh!);
    expect((JSON.parse(text) as { pair: { sealed: string } }).pair.sealed).toMatch(SEALED);
    expect(await store({ encryption: { keys: [KEY_1] } }).get()).toEqual(PAIR);
    expect(sealed.dpopKeys).toBe('sealed');
    expect(store().dpopKeys).toBeUndefined();
  });
});

describe('PostgresTokenStore: DPoP', () => {
  it('refuses dpop without `encryption`, naming it', () => {
    const instance = axios.create({ baseURL: 'https://api.test' });
    expect(() => attachTokenAuth(instance, { credentials, dpop: true, store: store() })).toThrow(
      /this store keeps no key .*give the store `encryption` \(without `writeClear`\)/,
    );
  });

  it('shares the key through the sealed row: a second holder proves the pair the first obtained, and the row holds no private member in clear', async () => {
    const service = await emulator({ dpop: true });
    const holder = () => {
      const instance = axios.create({ baseURL: service.url });
      const sealed = store({ encryption: { keys: [KEY_1] } });
      return { instance, auth: attachTokenAuth(instance, { credentials, dpop: true, store: sealed }) };
    };
    const first = holder();
    await first.instance.get('/orders');
    await first.auth.flush();
    const second = holder();
    await second.instance.get('/orders');
    service.expireAccessTokens();
    await Promise.all([first.instance.get('/orders'), second.instance.get('/orders')]);
    await Promise.all([first.auth.flush(), second.auth.flush()]);
    first.auth.eject();
    second.auth.eject();

    expect(service.counters).toMatchObject({ logins: 1, refreshes: 1, rejected: 0 });
    expect(service.dpopCounters).toMatchObject({ invalid: 0, wrongKey: 0 });
    const key = (await first.auth.getTokens())!.dpopKey!;
    expect((await second.auth.getTokens())!.dpopKey!.thumbprint).toBe(key.thumbprint);
    const { d } = await globalThis.crypto.subtle.exportKey('jwk', key.privateKey);
    const text = String((await row())?.['pair']);
    expect(text).not.toContain(d!);
    expect(text).not.toMatch(/"d"|privateKey|dpopKey/);
  });
});

describe('PostgresTokenStore: a lock that holds no connection', () => {
  it('on a pool of one connection, a held lock lets every read and write through', async () => {
    const { pool: single } = poolOf(server().url, 1);
    undo.push(() => single.end());
    const holder = store({}, single);
    const other = store({}, single);

    const lock = await locked(holder);
    const pair: TokenPair = { access: 'written-under-the-lock' };
    expect(await other.get()).toBeNull();
    expect(await holder.set(pair, lock.fence)).toBe(true);
    expect(await other.get()).toEqual(pair);
    expect(lock.leaseLeftMs!()).toBeGreaterThan(0);
  });
});
