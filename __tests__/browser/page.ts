// The page the browser tests load, bundled by esbuild: the package as an app uses it, driven from the test through
// `window.tokenKeeperPage`. Nothing here decides an outcome; the test reads the emulator's counters.
import axios from 'axios';
import { attachTokenAuth, isTokenAuthError } from 'axios-token-keeper';
import type { TokenAuth, TokenAuthEvents, TokenPair, TokenStoreLock } from 'axios-token-keeper';
import { BrowserTokenStore } from 'axios-token-keeper/browser-store';
import type { BrowserLocking, BrowserTokenStoreOptions } from 'axios-token-keeper/browser-store';
import { sealing } from 'axios-token-keeper/sealing';

export interface PageStart {
  baseURL: string;
  /** Who the default account logs in as. */
  username: string;
  password: string;
  store: BrowserTokenStoreOptions;
  /** The named accounts, and who each logs in as: their requests name them, and the store keeps them (forAccount). */
  accounts?: Record<string, { username: string; password: string }>;
  /**
   * Seal the pair with the non-extractable AES-GCM key of this id that the page keeps in IndexedDB (made there by the
   * first tab that asks, read back by the others and after a reload): `store.encryption` is then
   * `sealing({ keys: [{ id, key }] })`, as an app writes it.
   */
  sealingKeyId?: string;
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
  /** The pair the plugin holds now, for the test's scan of what storage keeps. */
  pair(): Promise<TokenPair | null>;
  /** Reads (or makes, the first time) the sealing key of `id` in IndexedDB, for `start`; what the page can do with it. */
  loadSealingKey(id: string): Promise<{ extractable: boolean; exportRefused: boolean; algorithm: string }>;
  /** A store used directly, without the plugin: to hold its lock and write with a given fence. */
  raw: {
    open(options: BrowserTokenStoreOptions): BrowserLocking;
    lock(): Promise<number | null>;
    /** The held lock's `leaseLeftMs()`: how long it is surely this tab's (0: lapsed, or another tab's now). */
    leaseLeft(): number | null;
    write(pair: TokenPair, fence: number | null): Promise<boolean>;
  };
}

declare global {
  interface Window {
    tokenKeeperPage: TokenKeeperPage;
  }
}

let auth: TokenAuth | undefined;
const sealingKeys = new Map<string, CryptoKey>();
let raw: BrowserTokenStore | undefined;
let held: TokenStoreLock | undefined;
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
  start({ baseURL, username, password, store: storeOptions, accounts, sealingKeyId: sealingKey }) {
    api = axios.create({ baseURL });
    const key = sealingKey === undefined ? undefined : sealingKeys.get(sealingKey);
    if (sealingKey !== undefined && !key) throw new Error('call tokenKeeperPage.loadSealingKey() first');
    const store = new BrowserTokenStore(
      key ? { ...storeOptions, encryption: sealing({ keys: [{ id: sealingKey!, key }] }) } : storeOptions,
    );
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
  pair: () => started().getTokens(),
  async loadSealingKey(id) {
    const key = await keyFromIndexedDb(id);
    sealingKeys.set(id, key);
    const exportRefused = await crypto.subtle.exportKey('raw', key).then(
      () => false,
      () => true,
    );
    return { extractable: key.extractable, exportRefused, algorithm: `${key.algorithm.name}` };
  },
  raw: {
    open(options) {
      raw = new BrowserTokenStore(options);
      return raw.locking;
    },
    lock: async () => {
      held = await raw!.lock();
      return held.fence ?? null;
    },
    leaseLeft: () => held?.leaseLeftMs?.() ?? null,
    write: (pair, fence) => raw!.set(pair, fence ?? undefined),
  },
};

/** The key of `id` in IndexedDB, as an app keeps it: a non-extractable CryptoKey, made and stored on first use. */
async function keyFromIndexedDb(id: string): Promise<CryptoKey> {
  const db = await new Promise<IDBDatabase>((resolve, reject) => {
    const request = indexedDB.open('token-keeper-keys', 1);
    request.onupgradeneeded = () => request.result.createObjectStore('keys');
    request.onsuccess = () => resolve(request.result);
    request.onerror = () => reject(request.error ?? new Error('indexedDB.open failed'));
  });
  const done = <T>(request: IDBRequest<T>) =>
    new Promise<T>((resolve, reject) => {
      request.onsuccess = () => resolve(request.result);
      request.onerror = () => reject(request.error ?? new Error('IndexedDB request failed'));
    });
  try {
    const kept = (await done(db.transaction('keys').objectStore('keys').get(id))) as CryptoKey | undefined;
    if (kept) return kept;
    const made = await crypto.subtle.generateKey({ name: 'AES-GCM', length: 256 }, false, ['encrypt', 'decrypt']);
    await done(db.transaction('keys', 'readwrite').objectStore('keys').put(made, id));
    return made;
  } finally {
    db.close();
  }
}
