// The page the browser tests load, bundled by esbuild: the package as an app uses it, driven from the test through
// `window.tokenKeeperPage`. Nothing here decides an outcome; the test reads the emulator's counters.
import axios from 'axios';
import { attachTokenAuth, isTokenAuthError } from 'axios-token-keeper';
import type { TokenAuth, TokenAuthEvents, TokenPair } from 'axios-token-keeper';
import { BrowserTokenStore } from 'axios-token-keeper/browser-store';
import type { BrowserLocking, BrowserTokenStoreOptions } from 'axios-token-keeper/browser-store';

export interface PageStart {
  baseURL: string;
  /** Who the default account logs in as. */
  username: string;
  password: string;
  store: BrowserTokenStoreOptions;
  /** The named accounts, and who each logs in as: their requests name them, and the store keeps them (forAccount). */
  accounts?: Record<string, { username: string; password: string }>;
}

export interface BurstResult {
  ok: number;
  failed: number;
  /** Codes or statuses of the failures, for a readable assertion message. */
  errors: string[];
}

/** A burst of one account's requests: what it gave, and the users the emulator served its requests as. */
export interface AccountBurstResult extends BurstResult {
  users: Record<string, number>;
}

export interface TokenKeeperPage {
  start(options: PageStart): BrowserLocking;
  burst(requests: number, path?: string): Promise<BurstResult>;
  /** A burst of requests that name `account`. */
  accountBurst(account: string, requests: number): Promise<AccountBurstResult>;
  stats(): ReturnType<TokenAuth['stats']>;
  /** The plugin's events so far: `login`, `failure:CODE`, …; a named account's with `@name` after. */
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
  start({ baseURL, username, password, store: storeOptions, accounts }) {
    api = axios.create({ baseURL });
    const store = new BrowserTokenStore(storeOptions);
    const credentials = accounts
      ? (account: string | undefined) => (account === undefined ? { username, password } : accounts[account])
      : { username, password };
    auth = attachTokenAuth(api, { credentials, store });
    for (const event of ['login', 'refresh', 'load', 'replay', 'failure'] as const) {
      auth.on(event, (payload: TokenAuthEvents[typeof event]) => {
        const name = 'code' in payload ? `${event}:${payload.code}` : event;
        seen.push(payload.account === undefined ? name : `${name}@${payload.account}`);
      });
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
  async accountBurst(account, requests) {
    const users: Record<string, number> = {};
    const results = await Promise.allSettled(
      Array.from({ length: requests }, async () => {
        const { data } = await api.get<{ user?: string }>('/allocation/api/v1/tracking/order-list', { account });
        users[String(data.user)] = (users[String(data.user)] ?? 0) + 1;
      }),
    );
    const errors = results.flatMap((result) =>
      result.status === 'rejected'
        ? [isTokenAuthError(result.reason) ? result.reason.code : String((result.reason as Error).message)]
        : [],
    );
    return { ok: requests - errors.length, failed: errors.length, errors, users };
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
