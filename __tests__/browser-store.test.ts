import { BrowserTokenStore } from '../lib/stores/browser/index.js';
import type { BrowserTokenStoreOptions } from '../lib/stores/browser/index.js';
import type { TokenPair } from '../lib/contract/store.js';
import { until } from './helpers/flow.js';

// What of the browser store runs in Node: its option checks, and tabs sharing over Node's own BroadcastChannel with
// `storage: 'none'`. Storage, Web Locks and the lease run in real Chromium (browser.test.ts).
const PAIR: TokenPair = { access: 'access-1', refresh: 'refresh-1', expiresAt: 4_102_444_800_000 };
const opened: BrowserTokenStore[] = [];

function store(options: BrowserTokenStoreOptions): BrowserTokenStore {
  const created = new BrowserTokenStore(options);
  opened.push(created);
  return created;
}

afterEach(() => {
  for (const each of opened.splice(0)) each.close();
});

it.each([
  [undefined, /the options must be an object/],
  [{}, /`key` must name the account's tokens, such as \{ key: 'orders-api' \}; got undefined/],
  [{ key: '' }, /`key` must name the account's tokens/],
  [{ key: 'a', storage: 'cookie' }, /`storage` must be 'local', 'session' or 'none'; got "cookie"/],
  [{ key: 'a', keepAccessInMemory: 'yes' }, /`keepAccessInMemory` must be true or false; got "yes"/],
  [{ key: 'a', lockTimeoutMs: -1 }, /`lockTimeoutMs` must be a positive number of milliseconds; got -1/],
  [{ key: 'a', lockTTL: 5 }, /unknown option `lockTTL`/],
])('refuses %p with a message that names the fix', (options, message) => {
  expect(() => new BrowserTokenStore(options as BrowserTokenStoreOptions)).toThrow(message);
});

it.each(['local', 'session'] as const)(
  'says what to do when %sStorage is missing (a server render), instead of failing later',
  (storage) => {
    expect(() => new BrowserTokenStore({ key: 'a', storage })).toThrow(
      new RegExp(`\`storage: '${storage}'\` needs ${storage}Storage.*create the store in the browser only`),
    );
  },
);

it("with storage 'none', stores of one key share the pair over the BroadcastChannel, and a new one asks for it", async () => {
  const writer = store({ key: 'orders', storage: 'none' });
  const reader = store({ key: 'orders', storage: 'none' });
  const stranger = store({ key: 'stock', storage: 'none' });
  const heard: Array<TokenPair | null> = [];
  reader.subscribe((pair) => heard.push(pair));
  stranger.subscribe((pair) => heard.push(pair));

  expect(await writer.set(PAIR)).toBe(true);
  await until(() => heard.length === 1);
  expect(heard).toEqual([PAIR]);
  expect(await reader.get()).toEqual(PAIR);
  expect(await store({ key: 'orders', storage: 'none' }).get()).toEqual(PAIR);
  expect(await stranger.get()).toBeNull();

  expect(await writer.clear()).toBe(true);
  await until(() => heard.length === 2);
  expect(heard).toEqual([PAIR, null]);
  expect(await reader.get()).toBeNull();
});

it('keeps the newest pair when an older one arrives late (a slow message, an answer to another tab)', async () => {
  const writer = store({ key: 'orders', storage: 'none' });
  const reader = store({ key: 'orders', storage: 'none' });
  const newer: TokenPair = { ...PAIR, access: 'access-2', refresh: 'refresh-2' };
  const heard: Array<string | undefined> = [];
  reader.subscribe((pair) => heard.push(pair?.access));
  expect(await writer.set(PAIR)).toBe(true);
  expect(await writer.set(newer)).toBe(true);
  await until(async () => (await reader.get())?.access === 'access-2');

  // What a tab that knew only the first pair would say, arriving after the second.
  const late = new BroadcastChannel('axios-token-keeper:orders');
  late.postMessage({ type: 'pair', fence: 1, pair: PAIR });
  const marker = { ...PAIR, access: 'access-3', refresh: 'refresh-3' };
  expect(await writer.set(marker)).toBe(true);
  await until(async () => (await reader.get())?.access === 'access-3');
  late.close();
  expect(heard).toEqual(['access-1', 'access-2', 'access-3']);
  expect(await writer.get()).toEqual(marker);
  // A write with the fence of a lock older than the last write is refused, and changes nothing.
  expect(await writer.set(newer, 2)).toBe(false);
  expect(await reader.get()).toEqual(marker);
});

it('refuses to be used once closed', async () => {
  const closed = store({ key: 'orders', storage: 'none' });
  closed.close();
  await expect(closed.get()).rejects.toThrow('BrowserTokenStore "orders" is closed; create a new one.');
  await expect(closed.set(PAIR)).rejects.toThrow(/is closed/);
});

describe('named accounts (forAccount)', () => {
  it("share each account's pair between tabs over a channel of its own, which no other account hears", async () => {
    const writer = store({ key: 'orders', storage: 'none' });
    const reader = store({ key: 'orders', storage: 'none' });
    const heard: Record<string, Array<TokenPair | null>> = {};
    for (const name of ['a:b', 'a%3Ab', 'default']) {
      heard[name] = [];
      const listener = (pair: TokenPair | null) => heard[name]!.push(pair);
      (name === 'default' ? reader : reader.forAccount(name)).subscribe(listener);
    }

    expect(await writer.forAccount('a:b').set(PAIR)).toBe(true);
    await until(() => heard['a:b']!.length === 1);
    // A write of another account afterwards, heard by its own listener: by then a stray message would have come.
    await writer.forAccount('a%3Ab').set({ access: 'other' });
    await until(() => heard['a%3Ab']!.length === 1);

    expect(heard).toEqual({ 'a:b': [PAIR], 'a%3Ab': [{ access: 'other' }], default: [] });
    expect(await reader.forAccount('a:b').get()).toEqual(PAIR);
    expect(await reader.get()).toBeNull();
  });

  it('gives the keepers of one account in a tab one store while it is listened to, and lets it go with its last listener', async () => {
    const tab = store({ key: 'orders', storage: 'none' });
    const alice = tab.forAccount('alice');
    const stop = [alice.subscribe(() => undefined), tab.forAccount('alice').subscribe(() => undefined)];
    expect(tab.forAccount('alice')).toBe(alice);
    expect(await alice.set(PAIR)).toBe(true);
    // Another tab asks for Alice's pair, which only this tab knows: it answers. (That tab closes, knowing it too.)
    const asking = store({ key: 'orders', storage: 'none' });
    expect(await asking.forAccount('alice').get()).toEqual(PAIR);
    asking.close();

    for (const each of stop) each();

    // Let go: it answers no more, and the tab makes a new store for Alice.
    expect(await store({ key: 'orders', storage: 'none' }).forAccount('alice').get()).toBeNull();
    expect(tab.forAccount('alice')).not.toBe(alice);
  });

  it('are closed with the store they came from', async () => {
    const tab = store({ key: 'orders', storage: 'none' });
    const alice = tab.forAccount('alice');
    tab.close();
    await expect(alice.get()).rejects.toThrow(/is closed/);
  });

  it('refuse a key holding `#`, naming `key` and the fix, and a name that is no string', () => {
    expect(() => store({ key: 'orders#eu', storage: 'none' }).forAccount('alice')).toThrow(
      'BrowserTokenStore: `key` "orders#eu" holds `#`, which separates an account\'s name in its entries, so that two ' +
        'accounts could share entries: give the store a key without `#` to keep named accounts in it.',
    );
    expect(() => store({ key: 'orders', storage: 'none' }).forAccount('')).toThrow(
      /^BrowserTokenStore\.forAccount: the account's name must be a non-empty string/,
    );
  });
});
