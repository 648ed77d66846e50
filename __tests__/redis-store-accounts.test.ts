// The RedisTokenStore's named accounts against a real redis-server: the contracts per account
// (helpers/store-accounts-contract.ts), the keys of each account under its escaped name, and one subscriber connection
// for every account, each on a channel of its own that goes with its last listener. Then the plugin holding a few
// accounts of many on it, against the emulator.
import axios from 'axios';
import { attachTokenAuth } from '../lib/index.js';
import { RedisTokenStore } from '../lib/stores/redis/index.js';
import { closeEmulatorsAfterEach, emulator } from './helpers/emulator.js';
import { until } from './helpers/flow.js';
import { eventually, redisStoreForFile } from './helpers/redis-store.js';
import {
  accountRecord as accountRecordOf,
  HOSTILE_NAMES,
  PAIR_A,
  PAIR_B,
  testStoreAccounts,
} from './helpers/store-contract.js';

closeEmulatorsAfterEach();
const { redis, prefix, serial, undo, key, accountKey, connection, store, listen, scanned, subscriptions, leaseAt } =
  redisStoreForFile();

testStoreAccounts('RedisTokenStore', {
  open: (timings) => store({ ...timings, pubsub: true }),
  fences: 'every grant',
  record: true,
  lease: (name) => leaseAt(() => accountKey(name, 'lock')),
  listening: (count) => eventually(async () => (await subscriptions()) === count),
});

describe('RedisTokenStore: named accounts', () => {
  /** The connections' lines of CLIENT LIST whose name is `name`. */
  const connectionsNamed = async (name: string): Promise<string[]> =>
    ((await redis().client('LIST')) as string).split('\n').filter((line) => line.includes(` name=${name} `));
  /** How many channels the connection of that line is subscribed to. */
  const channelsOf = (line: string | undefined) => Number(/ sub=(\d+) /.exec(line ?? '')?.[1] ?? NaN);

  it('keeps exactly the keys {prefix#name}#pair, #fence, #lock and #account, the name escaped, and none of the default account', async () => {
    const name = 'tenant:{42}/../a.lock';
    const escaped = 'tenant%3A%7B42%7D%2F%2E%2E%2Fa%2Elock';
    const tenant = store().forAccount(name);
    const lock = await tenant.lock();
    await tenant.set(PAIR_A, lock.fence);
    await tenant.setAccount(accountRecordOf());

    expect(await scanned()).toEqual(
      ['account', 'fence', 'lock', 'pair'].map((what) => `{${prefix()}#${escaped}}#${what}`),
    );
    await lock.release();
    expect(await scanned()).toEqual(['account', 'fence', 'pair'].map((what) => `{${prefix()}#${escaped}}#${what}`));
    expect(await store().get()).toBeNull();
  });

  it('writes every hostile name’s keys under its own escaped name, and each reads its own', async () => {
    for (const name of HOSTILE_NAMES) await store().forAccount(name).set({ access: name });

    const written = await scanned();
    expect(written).toEqual(HOSTILE_NAMES.map((name) => accountKey(name, 'pair')).sort());
    expect(written.every((each) => /^\{[^#{}]+#([A-Za-z0-9_-]|%[0-9A-F]{2})+\}#pair$/.test(each))).toBe(true);
    for (const name of HOSTILE_NAMES) expect(await store().forAccount(name).get()).toEqual({ access: name });
  });

  it('never shares a key with a default account, whatever its prefix: `a` with account `b`, and the prefix `a#b`', async () => {
    const named = new RedisTokenStore(connection(), { prefix: `${prefix()}:a` }).forAccount('b');
    const lookalike = new RedisTokenStore(connection(), { prefix: `${prefix()}:a#b` });
    await named.set(PAIR_A);
    await lookalike.set(PAIR_B);

    expect(await named.get()).toEqual(PAIR_A);
    expect(await lookalike.get()).toEqual(PAIR_B);
  });

  it('refuses at forAccount a prefix holding `#`, naming `prefix` and the fix, and a name that is no string', () => {
    const hashed = new RedisTokenStore(connection(), { prefix: 'tokens#orders' });
    expect(() => hashed.forAccount('alice')).toThrow(TypeError);
    expect(() => hashed.forAccount('alice')).toThrow(
      'RedisTokenStore: `prefix` "tokens#orders" holds `#`, which separates an account\'s name in its keys, so that two ' +
        'accounts could share keys: give the store a prefix without `#` to keep named accounts in it.',
    );
    expect(() => store().forAccount('')).toThrow(
      /^RedisTokenStore\.forAccount: the account's name must be a non-empty string/,
    );
  });

  it('serves the default account and several named ones on one subscriber connection, one channel each', async () => {
    const subscriberName = `accounts-subscriber-${serial()}`;
    const client = connection();
    const subscriber = connection(subscriberName);
    const parent = new RedisTokenStore(client, { prefix: prefix(), subscriber });
    undo.push(() => parent.close());
    const names = ['alice', 'bob', 'a:b', '{c}'];
    const heard = [listen(parent).heard, ...names.map((name) => listen(parent.forAccount(name)).heard)];
    await eventually(async () => channelsOf((await connectionsNamed(subscriberName))[0]) === 5);

    expect(await connectionsNamed(subscriberName)).toHaveLength(1);
    const channels = (await redis().call('PUBSUB', 'CHANNELS', `{${prefix()}*`)) as string[];
    expect(channels.sort()).toEqual([key('changed'), ...names.map((name) => accountKey(name, 'changed'))].sort());

    // Another process writes each account: each hears its own.
    const writer = new RedisTokenStore(connection(), { prefix: prefix() });
    for (const [index, name] of names.entries()) await writer.forAccount(name).set({ access: `access-${index}` });
    await writer.set(PAIR_A);
    await until(() => heard.every((each) => each.length === 1), 5_000);
    expect(heard).toEqual([[PAIR_A], ...names.map((_, index) => [{ access: `access-${index}` }])]);
  });

  it('lets an account’s channel go with its last listener, and with a lock wait that has ended', async () => {
    const subscriberName = `accounts-subscriber-${serial()}`;
    const parent = new RedisTokenStore(connection(), { prefix: prefix(), subscriber: connection(subscriberName) });
    undo.push(() => parent.close());
    const channels = async () => channelsOf((await connectionsNamed(subscriberName))[0]);
    const first = listen(parent.forAccount('alice'));
    const second = listen(parent.forAccount('alice'));
    const other = listen(parent.forAccount('bob'));
    await eventually(async () => (await channels()) === 2);

    first.stop();
    // Alice is still heard: a listener of hers is left.
    await store().forAccount('alice').set(PAIR_A);
    await until(() => second.heard.length === 1, 5_000);
    second.stop();
    other.stop();
    await eventually(async () => (await channels()) === 0);

    // A lock of an account nobody listens to listens while it waits, and not after.
    const lock = await parent.forAccount('carol').lock();
    await lock.release();
    await eventually(async () => (await channels()) === 0);
  });

  it('stops every account listening when the store is closed', async () => {
    const subscriberName = `accounts-subscriber-${serial()}`;
    const parent = new RedisTokenStore(connection(), { prefix: prefix(), subscriber: connection(subscriberName) });
    listen(parent);
    listen(parent.forAccount('alice'));
    await eventually(async () => channelsOf((await connectionsNamed(subscriberName))[0]) === 2);

    await parent.close();

    expect(channelsOf((await connectionsNamed(subscriberName))[0])).toBe(0);
  });

  it('with the plugin, keeps the channels of the accounts it holds alone: a dropped account’s goes', async () => {
    const users = { ops: 'ops-password', a: 'pw-a', b: 'pw-b', c: 'pw-c', d: 'pw-d' };
    const service = await emulator({ users });
    const subscriberName = `accounts-subscriber-${serial()}`;
    const shared = new RedisTokenStore(connection(), { prefix: prefix(), subscriber: connection(subscriberName) });
    undo.push(() => shared.close());
    const api = axios.create({ baseURL: service.url });
    const auth = attachTokenAuth(api, {
      credentials: (account) => {
        const user = (account ?? 'ops') as keyof typeof users;
        return { username: user, password: users[user] };
      },
      store: shared,
      maxAccounts: 2,
    });
    undo.push(() => auth.eject());

    for (const account of ['a', 'b', 'c', 'd', 'a']) {
      const { data } = await api.get<{ user: string }>('/orders', { account });
      expect(data.user).toBe(account);
    }

    // The default account's channel, and those of the two accounts held (d and a); b's and c's went with them.
    const subscribed = async () => ((await redis().call('PUBSUB', 'CHANNELS', `{${prefix()}*`)) as string[]).sort();
    await eventually(async () => (await subscribed()).length === 3);
    expect(await subscribed()).toEqual([key('changed'), accountKey('a', 'changed'), accountKey('d', 'changed')].sort());
    // Account a came back after it was dropped, and found its pair in Redis: one login per account.
    expect(service.counters.logins).toBe(4);
  });
});
