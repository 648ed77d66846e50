import { BrowserTokenStore } from '../lib/stores/browser.js';
import type { BrowserTokenStoreOptions } from '../lib/stores/browser.js';
import type { TokenPair } from '../lib/types.js';

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
      new RegExp(`\`storage: '${storage}'\` needs ${storage}Storage.*pass \`storage: 'none'\``),
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

  expect(writer.set(PAIR)).toBe(true);
  await new Promise((resolve) => setTimeout(resolve, 50));
  expect(heard).toEqual([PAIR]);
  expect(await reader.get()).toEqual(PAIR);
  expect(await store({ key: 'orders', storage: 'none' }).get()).toEqual(PAIR);
  expect(await stranger.get()).toBeNull();

  writer.clear();
  await new Promise((resolve) => setTimeout(resolve, 50));
  expect(heard).toEqual([PAIR, null]);
  expect(await reader.get()).toBeNull();
});

it('refuses to be used once closed', async () => {
  const closed = store({ key: 'orders', storage: 'none' });
  closed.close();
  await expect(closed.get()).rejects.toThrow('BrowserTokenStore "orders" is closed; create a new one.');
  expect(() => closed.set(PAIR)).toThrow(/is closed/);
});
