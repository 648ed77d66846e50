// The page of the browser DPoP tests, bundled by esbuild: the plugin attached with `dpop: true` and a BrowserTokenStore,
// driven through `window.tokenKeeperPage` (as page.ts is, so that helpers/browser.ts's Tab drives it), and what the
// tests look at besides through `window.dpopPage`: the keys IndexedDB keeps, read by the page's own code, and a store
// used directly. Nothing here decides an outcome; the tests read the emulator's counters and the keys.
import axios from 'axios';
import { attachTokenAuth, isTokenAuthError } from 'axios-token-keeper';
import type { TokenAuth, TokenAuthEvents, TokenPair } from 'axios-token-keeper';
import { BrowserTokenStore } from 'axios-token-keeper/browser-store';
import type { BrowserTokenStoreOptions } from 'axios-token-keeper/browser-store';
import { sealing } from 'axios-token-keeper/sealing';
import type { SealingCryptoKey, SealingSecret, StoreEncryption } from 'axios-token-keeper/sealing';
import { createDpopKey } from '../../lib/dpop/index.js';
import type { DpopKey } from '../../lib/dpop/index.js';
import type { TokenKeeperPage } from './page.js';

/** A key as the page's own look into IndexedDB finds it, and what the page can do with it. */
export interface KeptKeyView {
  store: string;
  thumbprint: string;
  fence: number;
  isCryptoKey: boolean;
  type: string;
  extractable: boolean;
  algorithm: string;
  usages: string[];
  /** `crypto.subtle.exportKey('jwk', …)` rejected. */
  exportRefused: boolean;
  /** The private key signs, so the tab that read it can prove with it. */
  signs: boolean;
}

/** A pair as the page shows it to the test: its key by its thumbprint and what it is. */
export interface PairView {
  access?: string | undefined;
  refresh?: string | undefined;
  expiresAt?: number | undefined;
  /** The key's thumbprint, if the pair has a key. */
  key?: string | undefined;
  /** The key is one of this page's keys (`makeKey`), the very object, as a store in this tab holds it. */
  keyIsMade?: string | undefined;
  extractable?: boolean | undefined;
}

/**
 * A store's options as the test sends them (a copy, as `page.evaluate` makes it): `encryption` as the app writes it
 * in `sealing()`, which the page calls, as an app does.
 */
export type PageStoreOptions = Omit<BrowserTokenStoreOptions, 'encryption'> & {
  encryption?: StoreEncryption<SealingSecret | SealingCryptoKey>;
};

export interface DpopPage {
  /** The thumbprint of the key of the pair the plugin holds, if any. */
  thumbprint(): Promise<string | undefined>;
  /** Waits for the plugin's writes to the store. */
  flush(): Promise<void>;
  /** Signs in again after a logout. */
  login(): Promise<void>;
  /** The keys IndexedDB keeps, ordered by store (by code unit) and fence. */
  keptKeys(): Promise<KeptKeyView[]>;
  /** Empties IndexedDB's keys, as a user who clears some site data would. */
  dropKeptKeys(): Promise<void>;
  /** What a store with `options` says of DPoP keys, and what attaching with `dpop` says of it. */
  capability(options: BrowserTokenStoreOptions): { dpopKeys: string | undefined; attach: string };
  /** A store used directly: made once per page, with `options`. */
  open(options: PageStoreOptions): void;
  /** Makes a key, kept by the page under `name`; its thumbprint. */
  makeKey(name: string): Promise<string>;
  /** Writes `pair` with the page's key `key` (if named) to the store, or to its account's store. */
  set(pair: Omit<TokenPair, 'dpopKey'>, key?: string, account?: string): Promise<boolean>;
  get(account?: string): Promise<PairView | null>;
  clear(account?: string): Promise<boolean>;
}

declare global {
  interface Window {
    dpopPage: DpopPage;
  }
}

let auth: TokenAuth | undefined;
let api = axios.create();
let direct: BrowserTokenStore | undefined;
const seen: string[] = [];
const keys = new Map<string, DpopKey>();

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

function failures(results: PromiseSettledResult<unknown>[]): string[] {
  return results.flatMap((result) =>
    result.status === 'rejected'
      ? [isTokenAuthError(result.reason) ? result.reason.code : String((result.reason as Error).message)]
      : [],
  );
}

function notHere(): never {
  throw new Error('not in the DPoP page');
}

window.tokenKeeperPage = {
  start({ baseURL, username, password, store: storeOptions }) {
    api = axios.create({ baseURL });
    const store = new BrowserTokenStore(storeOptions);
    auth = attachTokenAuth(api, { credentials: { username, password }, store, dpop: true });
    for (const event of ['login', 'refresh', 'load', 'replay', 'failure'] as const) {
      auth.on(event, (payload: TokenAuthEvents[typeof event]) => {
        seen.push('code' in payload ? `${event}:${payload.code}` : event);
      });
    }
    return store.locking;
  },
  async burst(requests, path = '/allocation/api/v1/tracking/order-list') {
    const errors = failures(await Promise.allSettled(Array.from({ length: requests }, () => api.get(path))));
    return { ok: requests - errors.length, failed: errors.length, errors };
  },
  accountBurst: notHere,
  stats: () => started().stats(),
  events: () => [...seen],
  access: async () => (await started().getTokens())?.access,
  logout: () => started().logout(),
  storage: () => ({ local: entries(localStorage), session: entries(sessionStorage) }),
  pair: () => started().getTokens(),
  loadSealingKey: notHere,
  raw: { open: notHere, lock: notHere, leaseLeft: notHere, write: notHere },
} satisfies TokenKeeperPage;

window.dpopPage = {
  thumbprint: async () => (await started().getTokens())?.dpopKey?.thumbprint,
  flush: () => started().flush(),
  login: () => started().login(),
  async keptKeys() {
    const kept = await inKeys('readonly', (store) => store.getAll());
    const views = await Promise.all((kept as Array<Record<string, unknown>>).map(viewOf));
    return views.sort((a, b) => (a.store === b.store ? a.fence - b.fence : a.store < b.store ? -1 : 1));
  },
  async dropKeptKeys() {
    await inKeys('readwrite', (store) => store.clear());
  },
  capability(options) {
    const store = new BrowserTokenStore(options);
    try {
      attachTokenAuth(axios.create({ baseURL: 'https://api.test' }), {
        credentials: { username: 'u', password: 'p' },
        store,
        dpop: true,
      }).eject();
      return { dpopKeys: store.dpopKeys, attach: 'attached' };
    } catch (error) {
      return { dpopKeys: store.dpopKeys, attach: (error as Error).message };
    } finally {
      store.close();
    }
  },
  open({ encryption, ...options }) {
    direct = new BrowserTokenStore({ ...options, ...(encryption && { encryption: sealing(encryption) }) });
  },
  async makeKey(name) {
    const key = await createDpopKey();
    keys.set(name, key);
    return key.thumbprint;
  },
  set(pair, key, account) {
    const dpopKey = key === undefined ? undefined : keys.get(key);
    return storeOf(account).set(dpopKey ? { ...pair, dpopKey } : pair);
  },
  async get(account) {
    const pair = await storeOf(account).get();
    if (!pair) return null;
    const { dpopKey, ...tokens } = pair;
    if (!dpopKey) return tokens;
    const made = [...keys.entries()].find(([, key]) => key === dpopKey)?.[0];
    return { ...tokens, key: dpopKey.thumbprint, keyIsMade: made, extractable: dpopKey.privateKey.extractable };
  },
  clear: (account) => storeOf(account).clear(),
};

function storeOf(account: string | undefined): BrowserTokenStore {
  if (!direct) throw new Error('call dpopPage.open() first');
  return account === undefined ? direct : direct.forAccount(account);
}

async function viewOf(kept: Record<string, unknown>): Promise<KeptKeyView> {
  const key = kept.key as DpopKey;
  const privateKey = key.privateKey;
  const exportRefused = await crypto.subtle.exportKey('jwk', privateKey).then(
    () => false,
    () => true,
  );
  const signs = await crypto.subtle
    .sign({ name: 'ECDSA', hash: 'SHA-256' }, privateKey, new TextEncoder().encode('proof'))
    .then(
      () => true,
      () => false,
    );
  return {
    store: String(kept.store),
    thumbprint: String(kept.thumbprint),
    fence: Number(kept.fence),
    isCryptoKey: privateKey instanceof CryptoKey,
    type: privateKey.type,
    extractable: privateKey.extractable,
    algorithm: privateKey.algorithm.name,
    usages: [...privateKey.usages],
    exportRefused,
    signs,
  };
}

/** The page's own look into the store's IndexedDB: the database and object store the store's keys live in. */
async function inKeys<T>(mode: IDBTransactionMode, work: (store: IDBObjectStore) => IDBRequest<T>): Promise<T> {
  // A database the store has not made yet is not made here: it would lack the store's object store.
  const db = await new Promise<IDBDatabase | undefined>((resolve, reject) => {
    const request = indexedDB.open('axios-token-keeper');
    request.onupgradeneeded = () => request.transaction!.abort();
    request.onsuccess = () => resolve(request.result);
    request.onerror = () =>
      request.error?.name === 'AbortError' ? resolve(undefined) : reject(request.error ?? new Error('open failed'));
  });
  if (!db) return [] as T;
  try {
    if (!db.objectStoreNames.contains('dpop-keys')) return [] as T;
    const transaction = db.transaction('dpop-keys', mode);
    const request = work(transaction.objectStore('dpop-keys'));
    await new Promise<void>((resolve, reject) => {
      transaction.oncomplete = () => resolve();
      transaction.onerror = () => reject(transaction.error ?? new Error('IndexedDB failed'));
    });
    return request.result;
  } finally {
    db.close();
  }
}
