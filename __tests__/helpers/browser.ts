import { statSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { build } from 'esbuild';
import { chromium } from 'playwright-core';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import type { BrowserLocking } from '../../lib/stores/browser/index.js';
import type { PageStart, TokenKeeperPage } from '../browser/page.js';

/** Debian's Chromium (`npm test` installs it), or the one at CHROMIUM_PATH; nothing is downloaded. */
export const CHROMIUM = process.env.CHROMIUM_PATH || '/usr/bin/chromium';

/**
 * Fails, rather than skips, when there is no Chromium at CHROMIUM. Synchronous, so that a test file can call it while
 * it loads: jest then fails that file once ("Test suite failed to run"), with the install command, instead of every
 * test with playwright's launch error and every hook with what the browser that never started left undefined.
 */
export function requireChromium(): void {
  const file = statSync(CHROMIUM, { throwIfNoEntry: false });
  if (file?.isFile()) return;
  const setBy = process.env.CHROMIUM_PATH ? ' (CHROMIUM_PATH)' : '';
  const error = new Error(
    `Chromium was not found at ${CHROMIUM}${setBy}. Install it with \`apt-get install chromium\` (\`npm test\` does), ` +
      'or set CHROMIUM_PATH to a Chromium executable; the browser tests fail without it, they never skip.',
  );
  // The message says what to do; a stack through jest's module loader would only bury it.
  error.stack = `${error.name}: ${error.message}`;
  throw error;
}

const root = join(__dirname, '..', '..');

/**
 * Bundles a test page of `__tests__/browser/` with esbuild for the browser, taking the package from lib/ as its import
 * names say, and the rest (React) from node_modules.
 */
export async function bundlePage(page = 'page.ts'): Promise<string> {
  const result = await build({
    entryPoints: [join(root, '__tests__', 'browser', page)],
    bundle: true,
    write: false,
    format: 'iife',
    platform: 'browser',
    target: 'es2020',
    alias: {
      'axios-token-keeper/browser-store': join(root, 'lib', 'stores', 'browser', 'index.ts'),
      'axios-token-keeper/sealing': join(root, 'lib', 'stores', 'sealing', 'index.ts'),
      'axios-token-keeper': join(root, 'lib', 'index.ts'),
    },
    logLevel: 'silent',
  });
  return result.outputFiles[0]!.text;
}

export interface Site {
  url: string;
  close(): Promise<void>;
}

/**
 * Serves the page on a free loopback port: an origin of its own, so that calls to the emulator are cross-origin.
 * `markup` is what the page holds before its script, made from the query of the page's address, which a reload keeps.
 */
export async function serve(script: string, markup: (query: URLSearchParams) => string = () => ''): Promise<Site> {
  const html = (query: URLSearchParams) =>
    `<!doctype html><meta charset="utf-8"><title>token keeper</title>${markup(query)}<script src="/page.js"></script>`;
  const server = createServer((request, response) => {
    const url = new URL(request.url ?? '/', 'http://page');
    const [type, body] =
      url.pathname === '/page.js' ? ['text/javascript', script] : ['text/html; charset=utf-8', html(url.searchParams)];
    response.writeHead(200, { 'content-type': type, 'cache-control': 'no-store' }).end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Headless Chromium with the flags this closed network needs (no background calls to Google's hosts). */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}

/** One tab of the app: the page loaded and the plugin started in it. */
export class Tab {
  private constructor(
    readonly page: Page,
    /** How the store in this tab takes turns with the other tabs. */
    readonly locking: BrowserLocking,
  ) {}

  static async open(context: BrowserContext, site: Site, start: PageStart): Promise<Tab> {
    const page = await context.newPage();
    await page.goto(site.url);
    return Tab.start(page, start);
  }

  /** Reloads the page, which starts with nothing but what storage kept, and starts the plugin again. */
  async reload(start: PageStart): Promise<Tab> {
    await this.page.reload();
    return Tab.start(this.page, start);
  }

  private static async start(page: Page, start: PageStart): Promise<Tab> {
    if (start.sealingKeyId !== undefined)
      await page.evaluate((id) => window.tokenKeeperPage.loadSealingKey(id), start.sealingKeyId);
    return new Tab(page, await page.evaluate((options) => window.tokenKeeperPage.start(options), start));
  }

  burst(requests: number, path?: string): ReturnType<TokenKeeperPage['burst']> {
    return this.page.evaluate(([n, p]) => window.tokenKeeperPage.burst(n, p), [requests, path] as const);
  }

  /** A burst of requests that name `account`, and the users the emulator served them as. */
  accountBurst(account: string, requests: number): ReturnType<TokenKeeperPage['accountBurst']> {
    return this.page.evaluate(([a, n]) => window.tokenKeeperPage.accountBurst(a, n), [account, requests] as const);
  }

  stats(): Promise<ReturnType<TokenKeeperPage['stats']>> {
    return this.page.evaluate(() => window.tokenKeeperPage.stats());
  }

  events(): Promise<string[]> {
    return this.page.evaluate(() => window.tokenKeeperPage.events());
  }

  access(): Promise<string | undefined> {
    return this.page.evaluate(() => window.tokenKeeperPage.access());
  }

  storage(): Promise<ReturnType<TokenKeeperPage['storage']>> {
    return this.page.evaluate(() => window.tokenKeeperPage.storage());
  }

  /** The pair the plugin holds now. */
  pair(): ReturnType<TokenKeeperPage['pair']> {
    return this.page.evaluate(() => window.tokenKeeperPage.pair());
  }

  /** What the page can do with its sealing key of `id` in IndexedDB (read, or made the first time). */
  sealingKey(id: string): ReturnType<TokenKeeperPage['loadSealingKey']> {
    return this.page.evaluate((keyId) => window.tokenKeeperPage.loadSealingKey(keyId), id);
  }

  logout(): Promise<void> {
    return this.page.evaluate(() => window.tokenKeeperPage.logout());
  }

  close(): Promise<void> {
    return this.page.close();
  }
}
