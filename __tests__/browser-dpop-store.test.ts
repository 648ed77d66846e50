import type { Browser, BrowserContext, Page } from 'playwright-core';
import type { BrowserTokenStoreOptions } from '../lib/stores/browser/index.js';
import { bundlePage, launchChromium, requireChromium, serve } from './helpers/browser.js';
import type { Site } from './helpers/browser.js';
import { tokenShapedIn } from './helpers/scan-secrets.js';
import type { PageStoreOptions, PairView } from './browser/dpop-page.js';

// BrowserTokenStore and a pair's DPoP key in real Chromium, the store used directly by pages of one browser context (the
// tabs of one profile): the key is a non-extractable CryptoKey in IndexedDB, put there before the storage entry that
// names it by its thumbprint; a store key keeps its current and its previous key; clear() drops them; named accounts
// keep their own; a record whose key IndexedDB lacks gives its pair without a key; without IndexedDB `dpopKeys` is
// undefined and `dpop` refuses the store. The plugin over these keys, tab to tab, is browser-dpop.test.ts.
requireChromium();
jest.setTimeout(60_000);

let browser: Browser;
let site: Site;
let context: BrowserContext;

beforeAll(async () => {
  site = await serve(await bundlePage('dpop-page.ts'));
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  await site?.close();
});

beforeEach(async () => {
  context = await browser.newContext();
});

afterEach(async () => {
  await context?.close();
});

const PAIR = { access: 'access-1', refresh: 'refresh-1', expiresAt: 4_102_444_800_000 };
/** 32 bytes, Base64: the sealing secret of the sealed store. */
const SECRET = Buffer.alloc(32, 7).toString('base64');

/** A tab with the store of `options` open in it (`encryption` in `sealing()`, by the page). */
async function tab(options: PageStoreOptions): Promise<Page> {
  const page = await context.newPage();
  await page.goto(site.url);
  await page.evaluate((given) => window.dpopPage.open(given), options);
  return page;
}

function makeKeys(page: Page, ...names: string[]): Promise<string[]> {
  return page.evaluate((all) => Promise.all(all.map((name) => window.dpopPage.makeKey(name))), names);
}

function set(page: Page, pair: typeof PAIR, key?: string, account?: string): Promise<boolean> {
  return page.evaluate(([p, k, a]) => window.dpopPage.set(p, k, a), [pair, key, account] as const);
}

function get(page: Page, account?: string): Promise<PairView | null> {
  return page.evaluate((a) => window.dpopPage.get(a), account);
}

function clear(page: Page, account?: string): Promise<boolean> {
  return page.evaluate((a) => window.dpopPage.clear(a), account);
}

/** The keys IndexedDB keeps, by store key and thumbprint, oldest first. */
async function kept(page: Page): Promise<Array<[string, string]>> {
  const keys = await page.evaluate(() => window.dpopPage.keptKeys());
  for (const key of keys)
    expect(key).toMatchObject({ isCryptoKey: true, extractable: false, exportRefused: true, signs: true });
  return keys.map((key) => [key.store, key.thumbprint]);
}

async function entry(page: Page, name: string): Promise<string> {
  return page.evaluate((key) => localStorage.getItem(key)!, name);
}

it('keeps the current key and the previous one per store key, drops older ones as pairs replace them, and clear() drops them all', async () => {
  const writer = await tab({ key: 'raw' });
  const [k1, k2, k3] = await makeKeys(writer, 'k1', 'k2', 'k3');
  const raw = 'axios-token-keeper:raw';

  expect(await set(writer, PAIR, 'k1')).toBe(true);
  expect(await kept(writer)).toEqual([[raw, k1]]);
  await set(writer, { ...PAIR, access: 'access-2' }, 'k2');
  expect(await kept(writer)).toEqual([
    [raw, k1],
    [raw, k2],
  ]);
  await set(writer, { ...PAIR, access: 'access-3' }, 'k3');
  expect(await kept(writer)).toEqual([
    [raw, k2],
    [raw, k3],
  ]);
  // A refresh keeps the key: the previous one stays the previous one.
  await set(writer, { ...PAIR, access: 'access-4' }, 'k3');
  expect(await kept(writer)).toEqual([
    [raw, k2],
    [raw, k3],
  ]);

  // The storage entry names the key by its thumbprint, and holds nothing private of it.
  const stored = JSON.parse(await entry(writer, raw)) as { pair: Record<string, unknown> };
  expect(stored.pair).toEqual({ ...PAIR, access: 'access-4', dpopJkt: k3 });
  expect(tokenShapedIn(await entry(writer, raw))).toEqual([]);

  // The writing tab holds the very key it wrote; another tab reads it from IndexedDB, a CryptoKey still not extractable.
  expect(await get(writer)).toEqual({ ...PAIR, access: 'access-4', key: k3, keyIsMade: 'k3', extractable: false });
  const reader = await tab({ key: 'raw' });
  expect(await get(reader)).toEqual({ ...PAIR, access: 'access-4', key: k3, extractable: false });

  expect(await clear(reader)).toBe(true);
  expect(await kept(writer)).toEqual([]);
  expect(await get(writer)).toBeNull();
});

it('named accounts keep their own keys: one cleared leaves the other', async () => {
  const page = await tab({ key: 'raw' });
  const [k1, k2] = await makeKeys(page, 'k1', 'k2');
  await set(page, PAIR, 'k1');
  await set(page, PAIR, 'k2', 'jane doe');
  expect(await kept(page)).toEqual([
    ['axios-token-keeper#raw#jane%20doe', k2],
    ['axios-token-keeper:raw', k1],
  ]);

  await clear(page, 'jane doe');
  expect(await kept(page)).toEqual([['axios-token-keeper:raw', k1]]);
  const other = await tab({ key: 'raw' });
  expect(await get(other)).toMatchObject({ key: k1 });
  expect(await get(other, 'jane doe')).toBeNull();
});

it('with `encryption`, the entry is sealed and names no key in clear; a tab with the sealing key opens it and finds the key', async () => {
  const options = { key: 'sealed', encryption: { keys: [{ id: 'page-1', secret: SECRET }] } };
  const writer = await tab(options);
  const [k1] = await makeKeys(writer, 'k1');
  await set(writer, PAIR, 'k1');
  const text = await entry(writer, 'axios-token-keeper:sealed');
  const stored = JSON.parse(text) as { pair: Record<string, unknown> };
  expect(Object.keys(stored.pair).sort()).toEqual(['expiresAt', 'sealed']);
  expect(text).not.toContain(k1);
  expect(tokenShapedIn(text)).toEqual([]);
  expect(await kept(writer)).toEqual([['axios-token-keeper:sealed', k1]]);

  const reader = await tab(options);
  expect(await get(reader)).toEqual({ ...PAIR, key: k1, extractable: false });
});

describe('a record whose key IndexedDB lacks, and a new tab alone', () => {
  it('gives the pair without a key, which the plugin reads as none', async () => {
    const writer = await tab({ key: 'raw' });
    await makeKeys(writer, 'k1');
    await set(writer, PAIR, 'k1');
    await writer.evaluate(() => window.dpopPage.dropKeptKeys());
    const reader = await tab({ key: 'raw' });
    expect(await get(reader)).toEqual(PAIR);
  });

  it('with keepAccessInMemory and no other tab open: the refresh token, with its key, and an access token that counts as expired', async () => {
    const options = { key: 'raw', keepAccessInMemory: true };
    const writer = await tab(options);
    const [k1] = await makeKeys(writer, 'k1');
    await set(writer, PAIR, 'k1');
    const stored = JSON.parse(await entry(writer, 'axios-token-keeper:raw')) as { pair: Record<string, unknown> };
    expect(stored.pair).toEqual({ refresh: PAIR.refresh, expiresAt: PAIR.expiresAt, dpopJkt: k1 });

    // An open tab hands the whole pair and its key over the tabs' channel.
    const asking = await tab(options);
    expect(await get(asking)).toEqual({ ...PAIR, key: k1, extractable: false });
    await writer.close();
    await asking.close();
    const alone = await tab(options);
    expect(await get(alone)).toEqual({ access: '', expiresAt: 0, refresh: PAIR.refresh, key: k1, extractable: false });
  });
});

describe('dpopKeys, and `dpop` at attach', () => {
  it.each([
    ['local', { key: 'x' }],
    ['session', { key: 'x', storage: 'session' }],
    ['none', { key: 'x', storage: 'none' }],
  ] as const)("with IndexedDB, storage '%s' keeps the key as it is", async (_storage, options) => {
    const page = await context.newPage();
    await page.goto(site.url);
    expect(await page.evaluate((given) => window.dpopPage.capability(given), options)).toEqual({
      dpopKeys: 'as-is',
      attach: 'attached',
    });
  });

  it("without IndexedDB, the store keeps no key (dpop refuses it, saying why), but with storage: 'none', in memory", async () => {
    await context.addInitScript(() => Object.defineProperty(window, 'indexedDB', { get: () => undefined }));
    const page = await context.newPage();
    await page.goto(site.url);
    const capability = (options: BrowserTokenStoreOptions) =>
      page.evaluate((given) => window.dpopPage.capability(given), options);
    const local = await capability({ key: 'x' });
    expect(local.dpopKeys).toBeUndefined();
    expect(local.attach).toMatch(/`dpop` binds the tokens .* this store keeps no key \(its `dpopKeys` is undefined\)/);
    expect(await capability({ key: 'x', storage: 'none' })).toEqual({ dpopKeys: 'as-is', attach: 'attached' });
  });
});
