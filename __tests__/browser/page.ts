// The page the browser tests load, bundled by esbuild: the package as an app uses it, driven from the test through
// `window.tokenKeeperPage`. Nothing here decides an outcome; the test reads the emulator's counters.
import axios from 'axios';
import { attachTokenAuth, isTokenAuthError } from 'axios-token-keeper';
import type { TokenAuth, TokenAuthEvents, TokenPair } from 'axios-token-keeper';
import { BrowserTokenStore } from 'axios-token-keeper/browser-store';
import type { BrowserLocking, BrowserTokenStoreOptions } from 'axios-token-keeper/browser-store';

export interface PageStart {
  baseURL: string;
  username: string;
  password: string;
  store: BrowserTokenStoreOptions;
}

export interface BurstResult {
  ok: number;
  failed: number;
  /** Codes or statuses of the failures, for a readable assertion message. */
  errors: string[];
}

export interface TokenKeeperPage {
  start(options: PageStart): BrowserLocking;
  burst(requests: number, path?: string): Promise<BurstResult>;
  stats(): ReturnType<TokenAuth['stats']>;
  events(): string[];
  access(): Promise<string | undefined>;
  logout(): Promise<void>;
  storage(): { local: Record<string, string>; session: Record<string, string> };
  /** A store used directly, without the plugin: to hold its lock and write with a given fence. */
  raw: {
    open(options: BrowserTokenStoreOptions): BrowserLocking;
    lock(): Promise<number | null>;
    write(pair: TokenPair, fence: number | null): Promise<boolean>;
  };
}

declare global {
  interface Window {
    tokenKeeperPage: TokenKeeperPage;
  }
}

let auth: TokenAuth | undefined;
let raw: BrowserTokenStore | undefined;
let api = axios.create();
const seen: string[] = [];

function started(): TokenAuth {
  if (!auth) throw new Error('call tokenKeeperPage.start() first');
  return auth;
}

function entries(storage: Storage): Record<string, string> {
  const all: Record<string, string> = {};
  for (let i = 0; i < storage.length; i += 1) {
    const key = storage.key(i)!;
    all[key] = storage.getItem(key)!;
  }
  return all;
}

window.tokenKeeperPage = {
  start({ baseURL, username, password, store: storeOptions }) {
    api = axios.create({ baseURL });
    const store = new BrowserTokenStore(storeOptions);
    auth = attachTokenAuth(api, { credentials: { username, password }, store });
    for (const event of ['login', 'refresh', 'load', 'replay', 'failure'] as const) {
      auth.on(event, (payload: TokenAuthEvents[typeof event]) =>
        seen.push('code' in payload ? `${event}:${payload.code}` : event),
      );
    }
    return store.locking;
  },
  async burst(requests, path = '/allocation/api/v1/tracking/order-list') {
    const results = await Promise.allSettled(Array.from({ length: requests }, () => api.get(path)));
    const errors = results.flatMap((result) =>
      result.status === 'rejected'
        ? [isTokenAuthError(result.reason) ? result.reason.code : String((result.reason as Error).message)]
        : [],
    );
    return { ok: requests - errors.length, failed: errors.length, errors };
  },
  stats: () => started().stats(),
  events: () => [...seen],
  access: async () => (await started().getTokens())?.access,
  logout: () => started().logout(),
  storage: () => ({ local: entries(localStorage), session: entries(sessionStorage) }),
  raw: {
    open(options) {
      raw = new BrowserTokenStore(options);
      return raw.locking;
    },
    lock: async () => (await raw!.lock()).fence ?? null,
    write: (pair, fence) => raw!.set(pair, fence ?? undefined),
  },
};
