import type { Browser, BrowserContext } from 'playwright-core';
import type { BrowserTokenStoreOptions } from '../lib/stores/browser/index.js';
import type { TokenServiceEmulator } from '../lib/emulator/index.js';
import { closeEmulatorsAfterEach, E2E_PASSWORD, E2E_USER, emulator } from './helpers/emulator.js';
import { until } from './helpers/flow.js';
import { bundlePage, launchChromium, requireChromium, serve, Tab } from './helpers/browser.js';
import type { Site } from './helpers/browser.js';
import { tokenShapedIn } from './helpers/scan-secrets.js';
import type { KeptKeyView } from './browser/dpop-page.js';
import type { PageStart } from './browser/page.js';

// DPoP (RFC 9449) in real Chromium: tabs of one browser context (one profile: localStorage, IndexedDB, BroadcastChannel
// and Web Locks shared) with `attachTokenAuth(api, { dpop: true, store: new BrowserTokenStore(...) })`, against the
// emulator in DPoP mode on another origin, which verifies every proof and binds the tokens to the key's thumbprint.
// The key is a non-extractable CryptoKey in IndexedDB; the storage entry names it by its thumbprint alone.
requireChromium();
jest.setTimeout(60_000);
closeEmulatorsAfterEach();

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

const ENTRY = 'axios-token-keeper:orders';
const OK = (n: number) => ({ ok: n, failed: 0, errors: [] });

function start(on: TokenServiceEmulator, store: BrowserTokenStoreOptions): PageStart {
  return { baseURL: on.url, username: E2E_USER, password: E2E_PASSWORD, store };
}

function openTab(on: TokenServiceEmulator, store: BrowserTokenStoreOptions): Promise<Tab> {
  return Tab.open(context, site, start(on, store));
}

function thumbprint(tab: Tab): Promise<string | undefined> {
  return tab.page.evaluate(() => window.dpopPage.thumbprint());
}

function flush(tab: Tab): Promise<void> {
  return tab.page.evaluate(() => window.dpopPage.flush());
}

function keptKeys(tab: Tab): Promise<KeptKeyView[]> {
  return tab.page.evaluate(() => window.dpopPage.keptKeys());
}

/** The key IndexedDB keeps for `thumbprint`, as the page finds it: a private CryptoKey no script can export. */
function keptKey(thumbprint: string, store = ENTRY): KeptKeyView {
  return {
    store,
    thumbprint,
    fence: expect.any(Number) as number,
    isCryptoKey: true,
    type: 'private',
    extractable: false,
    algorithm: 'ECDSA',
    usages: ['sign'],
    exportRefused: true,
    signs: true,
  };
}

/** The thumbprints of the keys the emulator's calls were proved with, each once, in order. */
function provedWith(on: TokenServiceEmulator): Array<string | undefined> {
  return [...new Set(on.calls.map((call) => call.dpop?.jkt))];
}

/** The pair as the storage entry keeps it, in `localStorage` or `sessionStorage`. */
async function storedPair(tab: Tab, where: 'local' | 'session' = 'local'): Promise<Record<string, unknown> | null> {
  const text = (await tab.storage())[where][ENTRY];
  return text === undefined ? null : (JSON.parse(text) as { pair: Record<string, unknown> | null }).pair;
}

describe('two tabs, one pair, one key in IndexedDB', () => {
  it('tab 1 logs in; tab 2 proves with the same key from IndexedDB (no login); an expiry is one refresh between them', async () => {
    const on = await emulator({ cors: true, dpop: true });
    const first = await openTab(on, { key: 'orders' });
    expect(await first.burst(5)).toEqual(OK(5));
    await flush(first);
    const jkt = (await thumbprint(first))!;
    expect(jkt).toMatch(/^[A-Za-z0-9_-]{43}$/);

    const second = await openTab(on, { key: 'orders' });
    expect(await second.burst(5)).toEqual(OK(5));
    expect(await thumbprint(second)).toBe(jkt);
    expect(await second.events()).not.toContain('login');
    expect(on.counters).toMatchObject({ logins: 1, refreshes: 0, tokenCalls: 1, dataCalls: 10, unauthorized: 0 });

    // The expiry: tab 1 meets it (4 refused, 1 refresh by the same key, 4 replays); tab 2 is told the new pair, with
    // its key, over the tabs' channel, and sends with it at once.
    on.expireAccessTokens();
    expect(await first.burst(4)).toEqual(OK(4));
    await flush(first);
    const renewed = await first.access();
    await until(async () => (await second.access()) === renewed);
    expect(await second.burst(4)).toEqual(OK(4));
    expect(await thumbprint(second)).toBe(jkt);

    expect(on.counters).toMatchObject({
      logins: 1,
      refreshes: 1,
      rejected: 0,
      tokenCalls: 2,
      dataCalls: 22,
      unauthorized: 4,
    });
    // Every call proved, all by the one key: the login, the refresh, 22 data calls (the 4 refused for the expiry too).
    expect(on.dpopCounters).toEqual({ accepted: 24, nonce: 0, invalid: 0, wrongKey: 0 });
    expect(provedWith(on)).toEqual([jkt]);
    expect(await first.stats()).toMatchObject({ logins: 1, refreshes: 1 });
    expect(await second.stats()).toMatchObject({ logins: 0, refreshes: 0 });

    // IndexedDB keeps the key, once, a private CryptoKey that signs and that no script can export.
    expect(await keptKeys(second)).toEqual([keptKey(jkt)]);
    // The entry names it by its thumbprint, and holds no private JWK member in any form.
    const pair = (await storedPair(second))!;
    expect(Object.keys(pair).sort()).toEqual(['access', 'dpopJkt', 'expiresAt', 'refresh']);
    expect(pair.dpopJkt).toBe(jkt);
    const everything = JSON.stringify(await second.storage());
    expect(tokenShapedIn(everything).filter((found) => found.name.startsWith('private JWK'))).toEqual([]);
    expect(everything).not.toMatch(/\\"(d|p|q|dp|dq|qi|privateKey)\\"/);
  });

  it('a tab opened after the others closed takes the pair and the key from storage and IndexedDB: no call', async () => {
    const on = await emulator({ cors: true, dpop: true });
    const first = await openTab(on, { key: 'orders' });
    expect(await first.burst(3)).toEqual(OK(3));
    await flush(first);
    const jkt = (await thumbprint(first))!;
    await first.close();

    const reopened = await openTab(on, { key: 'orders' });
    expect(await reopened.burst(3)).toEqual(OK(3));
    expect(await thumbprint(reopened)).toBe(jkt);
    expect(await reopened.events()).toEqual(['load']);
    expect(on.counters).toMatchObject({ logins: 1, refreshes: 0, tokenCalls: 1, dataCalls: 6, unauthorized: 0 });
    expect(on.dpopCounters).toEqual({ accepted: 7, nonce: 0, invalid: 0, wrongKey: 0 });
  });
});

describe('a key lost or dropped', () => {
  it('a record whose key IndexedDB lost costs one login with a new key, never a refresh with the wrong key; the open tab takes the new pair', async () => {
    const on = await emulator({ cors: true, dpop: true });
    const first = await openTab(on, { key: 'orders' });
    expect(await first.burst(3)).toEqual(OK(3));
    await flush(first);
    const lost = (await thumbprint(first))!;
    await first.page.evaluate(() => window.dpopPage.dropKeptKeys());

    const second = await openTab(on, { key: 'orders' });
    expect(await second.burst(3)).toEqual(OK(3));
    await flush(second);
    const jkt = (await thumbprint(second))!;
    expect(jkt).not.toBe(lost);
    expect(on.counters).toMatchObject({ logins: 2, refreshes: 0, rejected: 0, tokenCalls: 2 });
    await until(async () => (await thumbprint(first)) === jkt);

    on.expireAccessTokens();
    expect(await first.burst(3)).toEqual(OK(3));
    expect(on.counters).toMatchObject({ logins: 2, refreshes: 1, rejected: 0, tokenCalls: 3 });
    expect(on.dpopCounters).toMatchObject({ nonce: 0, invalid: 0, wrongKey: 0 });
    expect(provedWith(on)).toEqual([lost, jkt]);
    await flush(first);
    expect(await keptKeys(first)).toEqual([keptKey(jkt)]);
  });

  it('a logout drops the key from IndexedDB in every tab; the next login makes a new one', async () => {
    const on = await emulator({ cors: true, dpop: true });
    const tabs = [await openTab(on, { key: 'orders' }), await openTab(on, { key: 'orders' })];
    expect(await tabs[0]!.burst(3)).toEqual(OK(3));
    expect(await tabs[1]!.burst(3)).toEqual(OK(3));
    await flush(tabs[0]!);
    const before = (await thumbprint(tabs[0]!))!;
    expect(await keptKeys(tabs[1]!)).toEqual([keptKey(before)]);

    await tabs[1]!.logout();
    await until(async () => (await tabs[0]!.access()) === undefined);
    expect(await keptKeys(tabs[0]!)).toEqual([]);
    expect(await storedPair(tabs[0]!)).toBeNull();

    await tabs[0]!.page.evaluate(() => window.dpopPage.login());
    expect(await tabs[0]!.burst(3)).toEqual(OK(3));
    const after = (await thumbprint(tabs[0]!))!;
    expect(after).not.toBe(before);
    expect(on.counters).toMatchObject({ logins: 2, rejected: 0 });
    expect(on.dpopCounters).toMatchObject({ nonce: 0, invalid: 0, wrongKey: 0 });
    expect(await keptKeys(tabs[1]!)).toEqual([keptKey(after)]);
  });
});

it("storage: 'none' keeps the key in the tabs' memory alone: a new tab is handed the pair and the key by an open one", async () => {
  const on = await emulator({ cors: true, dpop: true });
  const store = { key: 'orders', storage: 'none' } as const;
  const first = await openTab(on, store);
  expect(await first.burst(3)).toEqual(OK(3));
  await flush(first);
  const jkt = (await thumbprint(first))!;

  const second = await openTab(on, store);
  expect(await second.burst(3)).toEqual(OK(3));
  expect(await thumbprint(second)).toBe(jkt);
  expect(on.counters).toMatchObject({ logins: 1, refreshes: 0, tokenCalls: 1, dataCalls: 6, unauthorized: 0 });
  expect(on.dpopCounters).toEqual({ accepted: 7, nonce: 0, invalid: 0, wrongKey: 0 });
  // Nothing of the pair in storage, no key in IndexedDB: a reload with no other tab open logs in again.
  expect(Object.keys((await second.storage()).local)).toEqual([`${ENTRY}:account`]);
  expect(await keptKeys(second)).toEqual([]);
});

it('sessionStorage: a tab handed the pair keeps its own copy, which names the key; alone, a reload finds the key in IndexedDB', async () => {
  const on = await emulator({ cors: true, dpop: true });
  const store = { key: 'orders', storage: 'session' } as const;
  const first = await openTab(on, store);
  expect(await first.burst(3)).toEqual(OK(3));
  await flush(first);
  const jkt = (await thumbprint(first))!;

  const second = await openTab(on, store);
  expect(await second.burst(3)).toEqual(OK(3));
  expect(await thumbprint(second)).toBe(jkt);
  // The pair came over the channel, with its key; the tab writes its own copy, which names the key alone.
  await until(async () => (await storedPair(second, 'session'))?.dpopJkt === jkt);
  expect(Object.keys((await storedPair(second, 'session'))!).sort()).toEqual([
    'access',
    'dpopJkt',
    'expiresAt',
    'refresh',
  ]);

  await first.close();
  const reloaded = await second.reload(start(on, store));
  expect(await reloaded.burst(3)).toEqual(OK(3));
  expect(await thumbprint(reloaded)).toBe(jkt);
  expect(on.counters).toMatchObject({ logins: 1, refreshes: 0, tokenCalls: 1, dataCalls: 9, unauthorized: 0 });
  expect(on.dpopCounters).toEqual({ accepted: 10, nonce: 0, invalid: 0, wrongKey: 0 });
  expect(await keptKeys(reloaded)).toEqual([keptKey(jkt)]);
});
