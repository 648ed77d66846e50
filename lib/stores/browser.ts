/**
 * {@link BrowserTokenStore}: one token pair shared by the tabs of a browser app, renewed by one tab at a time.
 * Browser only; it loads nothing from Node.
 *
 * @module axios-token-keeper/browser-store
 */
import type { AccountRecord, TokenPair, TokenStore, TokenStoreLock } from '../store-contract.js';
import { parseAccountRecord } from '../account-record.js';
import { webLocks, webStorage } from './browser/environment.js';
import { RecordView } from './browser/record-view.js';
import { StorageLease } from './browser/storage-lease.js';
import { TabChannel } from './browser/tab-channel.js';
import { WebLock } from './browser/web-lock.js';
import { copyPair, isPair } from './record.js';
import type { FencedPair } from './record.js';
import { Announcer } from './announcer.js';
import { LEASE_DEFAULTS } from './lease.js';
import { Mutex } from './mutex.js';
import { checkStoreOptions, shown } from './options.js';
import type { OptionNames } from './options.js';

/** Where {@link BrowserTokenStore} writes the pair. */
export type BrowserStorageKind = 'local' | 'session' | 'none';

/**
 * How the tabs of one origin take turns renewing: the Web Locks API where the browser has it; otherwise a lease
 * kept in `localStorage`; otherwise within this tab only.
 */
export type BrowserLocking = 'web-locks' | 'storage-lease' | 'tab';

/** Options of {@link BrowserTokenStore}. Only `key` is required. */
export interface BrowserTokenStoreOptions {
  /**
   * Names the storage entry, the lock and the BroadcastChannel of one account: tabs with the same key share one
   * pair. Use one key per account (and per service).
   */
  key: string;
  /**
   * `'local'`: `localStorage`, shared by the tabs of the origin and kept across browser restarts, so a reopened app
   * makes no login. `'session'`: `sessionStorage`, kept per tab until it closes; tabs still share through the
   * channel. `'none'`: in memory only; a reload logs in again unless another tab of the app is open.
   * Anything in storage can be read by a script injected into the page (XSS): see `keepAccessInMemory`.
   * @default 'local'
   */
  storage?: BrowserStorageKind;
  /**
   * Write only the refresh token to storage and keep the access token in memory, where tabs hand it to each other
   * over the BroadcastChannel. A tab that opens when no other tab is open renews once, through the refresh token.
   * @default false
   */
  keepAccessInMemory?: boolean;
  /**
   * How long a tab waits for another tab's renewal before it gives up and renews without the lock (reported as
   * `STORE_FAILED`). Longer than the longest renewal, so that a tab that is merely slow is waited for; the browser
   * frees a closed tab's Web Lock at once.
   * @default 120_000
   */
  lockTimeoutMs?: number;
  /**
   * Without Web Locks only: the length of the lease kept in `localStorage`. The holder extends it while it renews;
   * a tab that was closed mid-renewal blocks the others this long at most.
   * @default 10_000
   */
  lockTtlMs?: number;
  /**
   * Without Web Locks only: how often a waiting tab looks at the lease again; it also looks when the lease changes.
   * @default 50
   */
  pollMs?: number;
}

const BROWSER_DEFAULTS = {
  storage: 'local' as BrowserStorageKind,
  keepAccessInMemory: false,
  ...LEASE_DEFAULTS,
} satisfies Required<Omit<BrowserTokenStoreOptions, 'key'>>;

const BROWSER_OPTIONS: OptionNames<BrowserTokenStoreOptions> = {
  key: true,
  storage: true,
  keepAccessInMemory: true,
  lockTimeoutMs: true,
  lockTtlMs: true,
  pollMs: true,
};

/**
 * Keeps the pair for the tabs of a browser app: one tab renews at a time, and the others take its pair without
 * calling the service. Tabs take turns through the Web Locks API (which the browser frees when a tab closes) and tell
 * each other of new pairs over a BroadcastChannel; where Web Locks are missing, a lease in `localStorage` stands in.
 *
 * @example
 * import { BrowserTokenStore } from 'axios-token-keeper/browser-store';
 * const store = new BrowserTokenStore({ key: 'orders-api' });
 * attachTokenAuth(api, { credentials: askTheUser, store });
 */
export class BrowserTokenStore implements TokenStore {
  /** How the tabs take turns in this browser. */
  readonly locking: BrowserLocking;
  private readonly options: Required<BrowserTokenStoreOptions>;
  private readonly view: RecordView;
  private readonly channel: TabChannel;
  private readonly webLock: WebLock | undefined;
  private readonly lease: StorageLease | undefined;
  /** Keepers attached with this store in this tab take turns here before they take the lease. */
  private readonly tabMutex = new Mutex();
  private readonly announcer = new Announcer();
  private closed = false;
  /** Where the tabs keep the account's record: `localStorage`, or this tab's memory where the browser blocks it. */
  private readonly accountStorage: Storage | undefined;
  private readonly accountKey: string;
  private accountInTab: string | null = null;
  private readonly onStorage = (event: StorageEvent): void => this.storageChanged(event);

  /**
   * Checks the options and opens the channel to the other tabs. Throws a `TypeError` naming the option for a bad one,
   * and for a `storage` the environment does not offer (a server render), instead of failing at the first request.
   */
  constructor(options: BrowserTokenStoreOptions) {
    this.options = checkOptions(options);
    // One name for the storage entry, the lock and the channel of this account.
    const name = `axios-token-keeper:${this.options.key}`;
    const kind = this.options.storage;
    const storage = pairStorage(kind);
    this.view = new RecordView(storage, name, `The ${kind}Storage entry "${name}"`, this.options.keepAccessInMemory);
    this.channel = new TabChannel(name, {
      known: () => this.view.known,
      told: (record) => this.told(record),
      stirred: () => this.lease?.wake(),
    });
    const locks = webLocks();
    const leaseStorage = locks ? undefined : webStorage('local');
    this.webLock = locks && new WebLock(locks, name, this.options.lockTimeoutMs, this.view, this.channel);
    this.lease =
      leaseStorage &&
      new StorageLease(
        leaseStorage,
        name,
        this.options,
        () => this.view.newestFence(),
        () => this.channel.tellReleased(),
      );
    this.locking = this.webLock ? 'web-locks' : this.lease ? 'storage-lease' : 'tab';
    // The tabs share the account's record in `localStorage` whatever `storage` says: it holds no secret, and a logout in
    // one tab must stop the others from signing back in by themselves (an HttpOnly cookie would let them).
    this.accountStorage = webStorage('local');
    this.accountKey = `${name}:account`;
    globalThis.addEventListener?.('storage', this.onStorage);
  }

  /**
   * The pair, or null. With `keepAccessInMemory` (or `storage` other than `'local'`) a tab that does not know the
   * access token asks the other tabs for it; when none answers, it gets the refresh token with an access token that
   * counts as expired, so the plugin renews before sending anything.
   */
  async get(): Promise<TokenPair | null> {
    this.checkOpen();
    const newest = this.view.newest();
    if (!newest) {
      // Nothing anywhere: with `'local'` no tab has a pair; per tab or in memory only, another tab may.
      if (this.options.storage === 'local') return null;
      return copyPair((await this.channel.ask(() => true))?.pair ?? null);
    }
    const { fence, pair } = newest;
    if (!pair) return null;
    if (isPair(pair)) return copyPair(pair);
    // The access token is kept in memory: the tab that wrote this record, or one it told, has it.
    const known = this.view.known;
    if (known?.pair && known.fence >= fence && known.pair.refresh === pair.refresh) return copyPair(known.pair);
    const answer = await this.channel.ask((record) => record.fence >= fence && record.pair?.refresh === pair.refresh);
    if (answer) return copyPair(answer.pair);
    const expired: TokenPair = { access: '', expiresAt: 0 };
    if (pair.refresh !== undefined) expired.refresh = pair.refresh;
    return expired;
  }

  /**
   * Writes the pair and tells the other tabs. Returns false, without writing, when `fence` is older than a later
   * holder's: a lease granted since (without Web Locks), or a pair written since.
   */
  set(pair: TokenPair, fence?: number): Promise<boolean> {
    return this.write({ ...pair }, fence);
  }

  /** Drops the pair, in this tab and the others; false as for `set`. */
  clear(fence?: number): Promise<boolean> {
    return this.write(null, fence);
  }

  /**
   * The account's record, which the tabs share (a logout in one tab signs out the others, a refused refresh token is
   * sent by none): in `localStorage` under the store's name with `:account`, whatever `storage` says, since it holds no
   * secret; in this tab alone where the browser blocks `localStorage`. Null when none.
   */
  getAccount(): AccountRecord | null {
    this.checkOpen();
    const text = this.accountStorage ? this.accountStorage.getItem(this.accountKey) : this.accountInTab;
    return parseAccountRecord(text) ?? null;
  }

  /** Writes the account's record; false, without writing, when `fence` is older than a later holder's. */
  setAccount(record: AccountRecord, fence?: number): boolean {
    this.checkOpen();
    if (fence !== undefined && fence < this.view.newestFence()) return false;
    const text = JSON.stringify(record);
    if (this.accountStorage) this.accountStorage.setItem(this.accountKey, text);
    else this.accountInTab = text;
    return true;
  }

  /**
   * Resolves once this tab may renew, and holds the lock until `release()`. Rejects after `lockTimeoutMs`; the plugin
   * then renews without it.
   */
  async lock(): Promise<TokenStoreLock> {
    this.checkOpen();
    if (this.webLock) return this.webLock.lock();
    const releaseTab = await this.tabMutex.acquire();
    // With neither Web Locks nor localStorage, the turn within this tab is all there is.
    if (!this.lease) return { fence: this.view.newestFence() + 1, release: releaseTab };
    try {
      const held = await this.lease.take();
      return {
        fence: held.fence,
        release: () => {
          held.release();
          releaseTab();
        },
      };
    } catch (error) {
      releaseTab();
      throw error;
    }
  }

  /** Calls `listener` when another tab (or another keeper in this tab) writes or clears the pair. */
  subscribe(listener: (pair: TokenPair | null) => void): () => void {
    return this.announcer.add(listener);
  }

  /** Stops listening to the other tabs. The store cannot be used afterwards. */
  close(): void {
    this.closed = true;
    this.webLock?.close();
    this.channel.close();
    globalThis.removeEventListener?.('storage', this.onStorage);
    this.lease?.wake();
  }

  private checkOpen(): void {
    if (this.closed) throw new Error(`BrowserTokenStore "${this.options.key}" is closed; create a new one.`);
  }

  private async write(pair: TokenPair | null, fence: number | undefined): Promise<boolean> {
    this.checkOpen();
    // An entry that is not ours is reported (by the read), never overwritten.
    const newest = this.view.newest();
    if (fence !== undefined && (newest?.fence ?? 0) > fence) return false;
    // Without Web Locks, a lease granted since may not have written yet: its fence is the lease's.
    if (fence !== undefined && this.lease && this.lease.lastFence() > fence) return false;
    // A write without the lock (it timed out, or a store used directly) comes after everything this tab has seen.
    const written: FencedPair = { fence: fence ?? (newest?.fence ?? 0) + 1, pair };
    this.view.persist(written);
    this.learn(written);
    this.channel.tell(written);
    await this.webLock?.mark(written.fence);
    return true;
  }

  /** Takes `record` as this tab's view and tells this tab's keepers, once per record; false for an older record. */
  private learn(record: FencedPair): boolean {
    if (!this.view.take(record)) return false;
    this.webLock?.learnt(record.fence);
    this.channel.recheck();
    this.announcer.announce(JSON.stringify(record), copyPair(record.pair));
    return true;
  }

  private told(record: FencedPair): void {
    // Per tab, each tab keeps its own copy, so that a reload of this tab finds it; shared storage has it already.
    if (this.learn(record) && this.options.storage === 'session') this.view.persistOverOurs(record);
  }

  /** Without BroadcastChannel, `localStorage` events carry the pair; with or without it, they wake lease waiters. */
  private storageChanged(event: StorageEvent): void {
    if (this.closed) return;
    this.lease?.heard(event.key);
    if (event.key === this.view.entry) this.channel.recheck();
    const record = this.view.carriedBy(event);
    if (record) this.learn(record);
  }
}

function checkOptions(options: BrowserTokenStoreOptions): Required<BrowserTokenStoreOptions> {
  const given = checkStoreOptions('BrowserTokenStore', options, BROWSER_OPTIONS) as Partial<BrowserTokenStoreOptions>;
  if (typeof given.key !== 'string' || given.key === '') {
    throw new TypeError(
      `BrowserTokenStore: \`key\` must name the account's tokens, such as { key: 'orders-api' }; got ${shown(given.key)}.`,
    );
  }
  if (given.storage !== undefined && !['local', 'session', 'none'].includes(given.storage)) {
    throw new TypeError(
      `BrowserTokenStore: \`storage\` must be 'local', 'session' or 'none'; got ${shown(given.storage)}.`,
    );
  }
  if (given.keepAccessInMemory !== undefined && typeof given.keepAccessInMemory !== 'boolean') {
    throw new TypeError(
      `BrowserTokenStore: \`keepAccessInMemory\` must be true or false; got ${shown(given.keepAccessInMemory)}.`,
    );
  }
  return { ...BROWSER_DEFAULTS, ...given } as Required<BrowserTokenStoreOptions>;
}

/**
 * Where the pair is kept: none for `'none'`. A storage the environment does not offer fails here, at creation, rather
 * than at the first request.
 */
function pairStorage(kind: BrowserStorageKind): Storage | undefined {
  if (kind === 'none') return undefined;
  const storage = webStorage(kind);
  if (!storage) {
    throw new TypeError(
      `BrowserTokenStore: \`storage: '${kind}'\` needs ${kind}Storage, which this environment does not offer ` +
        `(a server render, or site data blocked by the browser's settings); create the store in the browser only, ` +
        `or pass \`storage: 'none'\` where the browser blocks storage.`,
    );
  }
  return storage;
}
