import type { Browser, BrowserContext, Page } from 'playwright-core';
import { closeEmulatorsAfterEach, E2E_PASSWORD, E2E_USER, emulator } from './helpers/emulator.js';
import { until } from './helpers/flow.js';
import { bundlePage, launchChromium, requireChromium, serve } from './helpers/browser.js';
import type { Site } from './helpers/browser.js';
import type { BurstResult } from './browser/page.js';
import type { View } from './browser/react-app.js';
import type { EmulatorRoute, TokenServiceEmulator } from '../lib/emulator/index.js';

// examples/react-app.tsx as a user ships it: React from npm, bundled by esbuild, in real Chromium, on the emulator
// with CORS and the refresh token in an HttpOnly cookie, on another port of 127.0.0.1 than the page. Every number
// is the emulator's: what reached it, by route, and whether the browser sent the cookie along.
requireChromium();
jest.setTimeout(60_000);
closeEmulatorsAfterEach();

/** The example's BrowserTokenStore key, as localStorage names the account's record. */
const ACCOUNT_RECORD = 'axios-token-keeper:orders-api:account';

let browser: Browser;
let site: Site;
let context: BrowserContext;

beforeAll(async () => {
  const escapeAttribute = (text: string) => text.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;');
  // The page gives the example its API address, as a deployment's page would.
  site = await serve(
    await bundlePage('react-app.ts'),
    (query) => `<div id="root" data-api="${escapeAttribute(query.get('api') ?? '')}"></div>`,
  );
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  await site?.close();
});

// One context is one browser profile: its tabs share the cookies, localStorage, BroadcastChannel and Web Locks.
beforeEach(async () => {
  context = await browser.newContext();
});

afterEach(async () => {
  await context?.close();
});

/** The app in one tab. */
class AppTab {
  private constructor(readonly page: Page) {}

  static async open(on: TokenServiceEmulator): Promise<AppTab> {
    const page = await context.newPage();
    await page.goto(`${site.url}?api=${encodeURIComponent(on.url)}`);
    return new AppTab(page);
  }

  views(): Promise<View[]> {
    return this.page.evaluate(() => window.reactApp.views());
  }

  /** Waits until the app shows `view`; resolves to every view it showed, in order. */
  async shows(view: View): Promise<View[]> {
    await until(async () => (await this.views()).at(-1) === view);
    return this.views();
  }

  async signIn(password = E2E_PASSWORD): Promise<void> {
    await this.page.locator('input[name="username"]').fill(E2E_USER);
    await this.page.locator('input[name="password"]').fill(password);
    await this.page.getByRole('button', { name: 'Sign in' }).click();
  }

  async signOut(): Promise<void> {
    await this.page.getByRole('button', { name: 'Sign out' }).click();
  }

  burst(requests: number): Promise<BurstResult> {
    return this.page.evaluate((n) => window.reactApp.burst(n), requests);
  }

  async reload(): Promise<void> {
    await this.page.reload();
  }

  /** The texts of the alerts the app shows now. */
  alerts(): Promise<string[]> {
    return this.page.getByRole('alert').allTextContents();
  }

  storage(): Promise<{ local: string[]; session: string[] }> {
    return this.page.evaluate(() => ({ local: Object.keys(localStorage), session: Object.keys(sessionStorage) }));
  }
}

async function service(): Promise<TokenServiceEmulator> {
  return emulator({ cors: true, refreshCookie: true });
}

/** What reached the emulator from call `from` on, in order: each call's route and the names of the cookies it carried. */
function callsFrom(on: TokenServiceEmulator, from: number): { route: EmulatorRoute; cookies: string[] }[] {
  return on.calls.slice(from).map(({ route, cookie }) => ({
    route,
    cookies: (cookie ?? '')
      .split(';')
      .map((pair) => pair.split('=')[0]!.trim())
      .filter((name) => name !== ''),
  }));
}

/** The calls from `from` on, but the data calls. */
function accountCallsFrom(on: TokenServiceEmulator, from: number): ReturnType<typeof callsFrom> {
  return callsFrom(on, from).filter((call) => call.route !== 'data');
}

/** The refresh cookie as the browser would send it to the emulator's token call, if it keeps one. */
async function refreshCookie(on: TokenServiceEmulator): Promise<{ httpOnly: boolean; path: string } | undefined> {
  // By address: the cookie's Path keeps it from the emulator's other paths.
  const cookies = await context.cookies(`${on.url}/auth/api/v1/accounts/token`);
  const cookie = cookies.find((each) => each.name === 'refresh_token');
  return cookie && { httpOnly: cookie.httpOnly, path: cookie.path };
}

/** Requests the pages of the context send to the emulator, counted as the browser sends them, answered or not. */
function countRequestsTo(on: TokenServiceEmulator): () => number {
  let sent = 0;
  context.on('request', (request) => {
    if (request.url().startsWith(on.url)) sent += 1;
  });
  return () => sent;
}

/** A tab signed in through the form, on a first visit (the restore refused: no cookie yet). */
async function signedInTab(on: TokenServiceEmulator): Promise<AppTab> {
  const tab = await AppTab.open(on);
  await tab.shows('signed-out');
  await tab.signIn();
  await tab.shows('signed-in');
  return tab;
}

const CALL_WITH_COOKIE = { cookies: ['refresh_token'] };
const CALL_WITHOUT_COOKIE = { cookies: [] };

it('a first visit shows "signing in", then the form: one token call, refused, with no cookie to send', async () => {
  const on = await service();
  const tab = await AppTab.open(on);

  expect(await tab.shows('signed-out')).toEqual(['signing-in', 'signed-out']);
  expect(callsFrom(on, 0)).toEqual([{ route: 'token', ...CALL_WITHOUT_COOKIE }]);
  expect(on.counters).toMatchObject({ tokenCalls: 1, rejected: 1, refreshes: 0, logins: 0 });
  // The visitor without a session is shown no error.
  expect(await tab.alerts()).toEqual([]);
});

it('signs in through the form: one login, and the browser keeps the refresh token in an HttpOnly cookie', async () => {
  const on = await service();
  const tab = await AppTab.open(on);
  await tab.shows('signed-out');
  const mark = on.calls.length;

  await tab.signIn();

  expect(await tab.shows('signed-in')).toEqual(['signing-in', 'signed-out', 'signing-in', 'signed-in']);
  expect(callsFrom(on, mark)).toEqual([{ route: 'login', ...CALL_WITHOUT_COOKIE }]);
  expect(on.counters).toMatchObject({ logins: 1, refreshes: 0 });
  expect(await refreshCookie(on)).toEqual({ httpOnly: true, path: '/auth/api/v1/accounts' });
  // No token in storage: the account's record alone, which holds none.
  expect(await tab.storage()).toEqual({ local: [ACCOUNT_RECORD], session: [] });
});

it('a wrong password shows the rejection; the right one then signs in at once, with no lockout', async () => {
  const on = await service();
  const tab = await AppTab.open(on);
  await tab.shows('signed-out');
  const mark = on.calls.length;

  await tab.signIn('not-the-password-3f9a');
  await tab.page.getByRole('alert').waitFor();
  expect(await tab.alerts()).toEqual(['Wrong username or password.']);
  expect(on.counters).toMatchObject({ logins: 0, rejected: 2 });

  await tab.signIn();

  expect(await tab.shows('signed-in')).toEqual([
    'signing-in',
    'signed-out',
    'signing-in',
    'signed-out',
    'signing-in',
    'signed-in',
  ]);
  expect(accountCallsFrom(on, mark)).toEqual([
    { route: 'login', ...CALL_WITHOUT_COOKIE },
    { route: 'login', ...CALL_WITHOUT_COOKIE },
  ]);
  expect(on.counters).toMatchObject({ logins: 1, rejected: 2 });
});

it('a burst of 20, an expiry, a burst of 20: all 40 answered, one token call for the expiry, carrying the cookie', async () => {
  const on = await service();
  const tab = await signedInTab(on);
  const mark = on.calls.length;

  expect(await tab.burst(20)).toEqual({ ok: 20, failed: 0, errors: [] });
  on.expireAccessTokens();
  expect(await tab.burst(20)).toEqual({ ok: 20, failed: 0, errors: [] });

  expect(accountCallsFrom(on, mark)).toEqual([{ route: 'token', ...CALL_WITH_COOKIE }]);
  expect(on.counters).toMatchObject({ logins: 1, refreshes: 1 });
  expect(await tab.views()).toEqual(['signing-in', 'signed-out', 'signing-in', 'signed-in']);
});

it('a reload restores the session: "signing in", then signed in, through one token call with the cookie', async () => {
  const on = await service();
  const tab = await signedInTab(on);
  const mark = on.calls.length;

  await tab.reload();

  expect(await tab.shows('signed-in')).toEqual(['signing-in', 'signed-in']);
  expect(callsFrom(on, mark)).toEqual([{ route: 'token', ...CALL_WITH_COOKIE }]);
  expect(on.counters).toMatchObject({ logins: 1, refreshes: 1 });
  expect(await tab.burst(5)).toEqual({ ok: 5, failed: 0, errors: [] });
});

describe('two tabs', () => {
  it('a second tab restores signed in; after an expiry, a burst in each tab costs one token call for both', async () => {
    const on = await service();
    const first = await signedInTab(on);
    let mark = on.calls.length;

    const second = await AppTab.open(on);

    expect(await second.shows('signed-in')).toEqual(['signing-in', 'signed-in']);
    // The example's restore at start-up renews whatever the other tab holds.
    expect(callsFrom(on, mark)).toEqual([{ route: 'token', ...CALL_WITH_COOKIE }]);
    mark = on.calls.length;

    on.expireAccessTokens();
    const [one, two] = await Promise.all([first.burst(10), second.burst(10)]);

    expect([one, two]).toEqual([
      { ok: 10, failed: 0, errors: [] },
      { ok: 10, failed: 0, errors: [] },
    ]);
    expect(accountCallsFrom(on, mark)).toEqual([{ route: 'token', ...CALL_WITH_COOKIE }]);
    expect(on.counters).toMatchObject({ logins: 1, refreshes: 2, rejected: 1 });
  });

  it('signing out in one tab tells the server once, and the other tab shows the form; then no request leaves either', async () => {
    const on = await service();
    const first = await signedInTab(on);
    const second = await AppTab.open(on);
    await second.shows('signed-in');
    const mark = on.calls.length;
    const sent = countRequestsTo(on);

    await second.signOut();

    expect(await first.shows('signed-out')).toEqual([
      'signing-in',
      'signed-out',
      'signing-in',
      'signed-in',
      'signed-out',
    ]);
    expect(await second.shows('signed-out')).toEqual(['signing-in', 'signed-in', 'signed-out']);
    await until(() => on.counters.logouts === 1);
    expect(callsFrom(on, mark)).toEqual([{ route: 'logout', ...CALL_WITH_COOKIE }]);
    expect(await refreshCookie(on)).toBeUndefined();

    // The browser's own count: the logout call, and from now on nothing, not even a request the emulator would refuse.
    expect(sent()).toBe(1);
    const after = on.calls.length;
    const loggedOut = { ok: 0, failed: 10, errors: Array.from({ length: 10 }, () => 'LOGGED_OUT') };
    expect(await Promise.all([first.burst(10), second.burst(10)])).toEqual([loggedOut, loggedOut]);
    expect(callsFrom(on, after)).toEqual([]);
    expect(sent()).toBe(1);
    expect(on.counters).toMatchObject({ logins: 1, logouts: 1 });
    // Both tabs show the form throughout: the one that signed out knows it, and the other read the account's record
    // (which the logout wrote and told it over the channel) as soon as it heard the pair was dropped, so its burst
    // fails at once, without a turn at the lock and without a flash of "signing in".
    expect(await second.views()).toEqual(['signing-in', 'signed-in', 'signed-out']);
    expect((await first.shows('signed-out')).slice(5)).toEqual([]);
  });

  it('a reload after signing out shows "signing in", then the form: the restore is refused, with no cookie left', async () => {
    const on = await service();
    const first = await signedInTab(on);
    const second = await AppTab.open(on);
    await second.shows('signed-in');
    await second.signOut();
    await first.shows('signed-out');
    await until(() => on.counters.logouts === 1);
    const mark = on.calls.length;
    const { rejected } = on.counters;

    await first.reload();

    expect(await first.shows('signed-out')).toEqual(['signing-in', 'signed-out']);
    expect(callsFrom(on, mark)).toEqual([{ route: 'token', ...CALL_WITHOUT_COOKIE }]);
    expect(on.counters).toMatchObject({ logins: 1, rejected: rejected + 1 });
    expect(await first.alerts()).toEqual([]);
  });
});
