/**
 * {@link BrowserTokenStore}: one token pair shared by the tabs of a browser app, renewed by one tab at a time.
 * Browser only; it loads nothing from Node.
 *
 * @module axios-token-keeper/browser-store
 */
import { Mutex } from 'async-mutex';
import type { TokenPair, TokenStore, TokenStoreLock } from '../types.js';
import { copyPair as copy, isPair, recordToJson, tryParseRecord } from './record.js';
import type { FencedPair } from './record.js';
import { acquire, Announcer, checkStoreOptions, describe, keepAlive, LEASE_DEFAULTS, Wakeup } from './shared.js';
import type { Attempt, OptionNames } from './shared.js';

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

/** How long a tab that knows no pair waits for another tab to tell it one. */
const ASK_PEERS_MS = 150;
/**
 * With Web Locks, how long a tab that was just granted the lock waits for the pair the previous holder wrote, when the
 * lock manager says there is a newer one than this tab has seen: storage and messages reach a tab a little after the
 * lock can. Past it, the tab asks the others.
 */
const CATCH_UP_MS = 1_000;
/**
 * Without Web Locks, how long a tab waits after writing its claim of the lease before reading it back: tabs that
 * claimed at the same moment see who wrote last. `localStorage` reaches other tabs within milliseconds.
 */
const LEASE_SETTLE_MS = 40;

/**
 * The stored record: `fence` numbers the writes (in every locking mode), so that a tab always keeps the newest of what
 * storage, messages and answers tell it. `pair.access` is absent when the access token is kept in memory.
 */
type StoredRecord = FencedPair<Partial<TokenPair>>;

/** What this tab knows: the last record it wrote, read, or was told by another tab. */
type Known = FencedPair;

type Message = { type: 'ask' } | { type: 'pair'; fence: number; pair: TokenPair | null } | { type: 'released' };

interface Lease {
  owner: string;
  until: number;
  fence: number;
}

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
  private readonly name: string;
  private readonly storage: Storage | undefined;
  /** `localStorage`, for the lease, when Web Locks are missing. */
  private readonly leaseStorage: Storage | undefined;
  private readonly channel: BroadcastChannel | undefined;
  private readonly announcer = new Announcer();
  private readonly wakeup = new Wakeup();
  /** Keepers attached with this store in this tab take turns here before they take the lease. */
  private readonly tabMutex = new Mutex();
  private known: Known | undefined;
  /** Conditions waited for (an answer from another tab, the last writer's record), checked whenever a record arrives. */
  private readonly watchers = new Set<() => void>();
  /** The shared Web Lock `{name}@{fence}` this tab holds to tell the others it wrote that fence; released when it learns a newer one. */
  private marker: { fence: number; release: () => void } | undefined;
  private closed = false;
  private readonly onStorage = (event: StorageEvent): void => this.storageChanged(event);

  /**
   * Checks the options and opens the channel to the other tabs. Throws a `TypeError` naming the option for a bad one,
   * and for a `storage` the environment does not offer (a server render), instead of failing at the first request.
   */
  constructor(options: BrowserTokenStoreOptions) {
    const given = checkStoreOptions('BrowserTokenStore', options, BROWSER_OPTIONS) as Partial<BrowserTokenStoreOptions>;
    if (typeof given.key !== 'string' || given.key === '') {
      throw new TypeError(
        `BrowserTokenStore: \`key\` must name the account's tokens, such as { key: 'orders-api' }; got ${describe(given.key)}.`,
      );
    }
    if (given.storage !== undefined && !['local', 'session', 'none'].includes(given.storage)) {
      throw new TypeError(
        `BrowserTokenStore: \`storage\` must be 'local', 'session' or 'none'; got ${describe(given.storage)}.`,
      );
    }
    if (given.keepAccessInMemory !== undefined && typeof given.keepAccessInMemory !== 'boolean') {
      throw new TypeError(
        `BrowserTokenStore: \`keepAccessInMemory\` must be true or false; got ${describe(given.keepAccessInMemory)}.`,
      );
    }
    this.options = { ...BROWSER_DEFAULTS, ...given } as Required<BrowserTokenStoreOptions>;
    this.name = `axios-token-keeper:${this.options.key}`;

    const kind = this.options.storage;
    if (kind !== 'none') {
      this.storage = webStorage(kind);
      if (!this.storage) {
        throw new TypeError(
          `BrowserTokenStore: \`storage: '${kind}'\` needs ${kind}Storage, which this environment does not offer ` +
            `(a server render, or site data blocked by the browser's settings); create the store in the browser only, ` +
            `or pass \`storage: 'none'\` where the browser blocks storage.`,
        );
      }
    }
    const locks = webLocks();
    this.leaseStorage = locks ? undefined : webStorage('local');
    this.locking = locks ? 'web-locks' : this.leaseStorage ? 'storage-lease' : 'tab';

    if (typeof BroadcastChannel === 'function') {
      this.channel = new BroadcastChannel(this.name);
      this.channel.onmessage = (event: MessageEvent<Message>) => this.received(event.data);
      // Node has BroadcastChannel too (server renders, tests): it must not keep a process alive.
      (this.channel as { unref?: () => void }).unref?.();
    }
    globalThis.addEventListener?.('storage', this.onStorage);
  }

  /**
   * The pair, or null. With `keepAccessInMemory` (or `storage` other than `'local'`) a tab that does not know the
   * access token asks the other tabs for it; when none answers, it gets the refresh token with an access token that
   * counts as expired, so the plugin renews before sending anything.
   */
  async get(): Promise<TokenPair | null> {
    this.checkOpen();
    const newest = this.newest();
    if (!newest) {
      // Nothing anywhere: with `'local'` no tab has a pair; per tab or in memory only, another tab may.
      if (this.options.storage === 'local') return null;
      return copy((await this.askPeers(() => true))?.pair ?? null);
    }
    const { fence, pair } = newest;
    if (!pair) return null;
    if (isPair(pair)) return copy(pair);
    // The access token is kept in memory: the tab that wrote this record, or one it told, has it.
    const known = this.known;
    if (known?.pair && known.fence >= fence && known.pair.refresh === pair.refresh) return copy(known.pair);
    const told = await this.askPeers((known) => known.fence >= fence && known.pair?.refresh === pair.refresh);
    if (told) return copy(told.pair);
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
   * Resolves once this tab may renew, and holds the lock until `release()`. Rejects after `lockTimeoutMs`; the plugin
   * then renews without it.
   */
  async lock(): Promise<TokenStoreLock> {
    this.checkOpen();
    if (this.locking === 'web-locks') return this.webLock();
    const releaseTab = await this.tabMutex.acquire();
    if (this.locking === 'tab') return { fence: this.newestFence() + 1, release: releaseTab };
    try {
      return await this.lease(releaseTab);
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
    this.marker?.release();
    this.channel?.close();
    globalThis.removeEventListener?.('storage', this.onStorage);
    this.wakeup.wake();
  }

  private checkOpen(): void {
    if (this.closed) throw new Error(`BrowserTokenStore "${this.options.key}" is closed; create a new one.`);
  }

  private async write(pair: TokenPair | null, fence: number | undefined): Promise<boolean> {
    this.checkOpen();
    // An entry that is not ours is reported (by the read), never overwritten.
    const newest = this.newest();
    if (fence !== undefined && (newest?.fence ?? 0) > fence) return false;
    if (fence !== undefined && this.leaseStorage && this.lastFence() > fence) return false;
    // A write without the lock (it timed out, or a store used directly) comes after everything this tab has seen.
    const known: Known = { fence: fence ?? (newest?.fence ?? 0) + 1, pair };
    this.persist(known);
    this.learn(known);
    this.post({ type: 'pair', ...known });
    await this.mark(known.fence);
    return true;
  }

  /**
   * With Web Locks, holds the shared lock `{name}@{fence}` until this tab learns of a newer write: the next holder of
   * the lock finds it in `navigator.locks.query()`, as consistent as the lock itself, and knows what to wait for.
   */
  private async mark(fence: number): Promise<void> {
    const locks = this.locking === 'web-locks' ? webLocks() : undefined;
    if (!locks) return;
    // The marker of an older write, if any, went when `learn` took this one.
    await new Promise<void>((marked) => {
      locks
        .request(`${this.name}@${fence}`, { mode: 'shared' }, () => {
          marked();
          return new Promise<void>((release) => {
            this.marker = { fence, release: () => release() };
          });
        })
        .catch(() => marked());
    });
  }

  /** The fence of the newest record this tab can see; an entry not ours counts as none. */
  private newestFence(): number {
    const stored = this.readStoredQuietly();
    return Math.max(stored?.fence ?? 0, this.known?.fence ?? 0);
  }

  /** The newest record this tab can see: in storage, or known from a message. Throws for an entry not ours. */
  private newest(): StoredRecord | Known | undefined {
    const stored = this.readStored();
    const known = this.known;
    if (!stored) return known;
    return known && known.fence > stored.fence ? known : stored;
  }

  /** Writes what storage keeps of `known`: all of it, or all but the access token. */
  private persist(known: Known): void {
    if (!this.storage) return;
    // A dropped pair stays a record, with its fence, so that an older record cannot come back after it.
    const pair: Partial<TokenPair> | null = known.pair && { ...known.pair };
    if (pair && this.options.keepAccessInMemory) delete pair.access;
    this.storage.setItem(this.name, recordToJson(known.fence, pair));
  }

  /**
   * Takes `known` as this tab's view and tells this tab's keepers, once per record. False for a record older than the
   * one held (a late message, an answer to another tab's question): an older record never replaces a newer one.
   */
  private learn(known: Known): boolean {
    if (this.known && known.fence < this.known.fence) return false;
    this.known = { fence: known.fence, pair: copy(known.pair) };
    if (this.marker && this.marker.fence < known.fence) {
      this.marker.release();
      this.marker = undefined;
    }
    for (const watcher of [...this.watchers]) watcher();
    this.announcer.announce(JSON.stringify(known), copy(known.pair));
    return true;
  }

  /** The stored record, undefined when there is none, or null for an entry that is not ours. */
  private readStoredQuietly(): StoredRecord | undefined | null {
    try {
      return this.readStored();
    } catch {
      return null;
    }
  }

  /** The stored record, or undefined when there is none; throws, naming the entry, for one that is not ours. */
  private readStored(): StoredRecord | undefined {
    const text = this.storage?.getItem(this.name);
    if (text === null || text === undefined) return undefined;
    const record = tryParseRecord(text, { accessOptional: true });
    if (!record) {
      throw new Error(
        `The ${this.options.storage}Storage entry "${this.name}" is not a token record of this package; ` +
          'pass another `key`, or remove the entry.',
      );
    }
    return record;
  }

  private received(message: Message): void {
    if (this.closed || typeof message !== 'object' || message === null) return;
    if (message.type === 'ask') {
      if (this.known?.pair) this.post({ type: 'pair', ...this.known });
    } else if (message.type === 'pair') {
      if (typeof message.fence !== 'number' || (message.pair !== null && !isPair(message.pair))) return;
      const known: Known = { fence: message.fence, pair: message.pair };
      // Per tab, each tab keeps its own copy, so that a reload of this tab finds it; shared storage has it already.
      // An entry that is not ours stays as it is.
      if (this.learn(known) && this.options.storage === 'session' && this.readStoredQuietly() !== null) {
        this.persist(known);
      }
    }
    this.wakeup.wake();
  }

  /** Without BroadcastChannel, `localStorage` events carry the pair; with or without it, they wake lease waiters. */
  private storageChanged(event: StorageEvent): void {
    if (this.closed) return;
    if (event.key === `${this.name}:lock`) this.wakeup.wake();
    if (event.key === this.name) for (const watcher of [...this.watchers]) watcher();
    if (event.key !== this.name || event.storageArea !== this.storage || this.options.keepAccessInMemory) return;
    const record = event.newValue === null ? undefined : tryParseRecord(event.newValue);
    if (record) this.learn(record);
  }

  /** Asks the other tabs for the pair they hold; the first answer that `fits` wins, or undefined after a while. */
  private async askPeers(fits: (known: Known) => boolean): Promise<Known | undefined> {
    if (!this.channel) return undefined;
    const answer = (): Known | undefined => (this.known?.pair && fits(this.known) ? this.known : undefined);
    this.post({ type: 'ask' });
    return (await this.until(() => answer() !== undefined, ASK_PEERS_MS)) ? answer() : undefined;
  }

  /** True once `condition` holds (checked now and whenever a record arrives), false after `ms`. */
  private until(condition: () => boolean, ms: number): Promise<boolean> {
    if (condition()) return Promise.resolve(true);
    return new Promise((resolve) => {
      const done = (met: boolean): void => {
        clearTimeout(timer);
        this.watchers.delete(check);
        resolve(met);
      };
      const check = (): void => {
        if (condition()) done(true);
      };
      const timer = setTimeout(() => done(false), ms);
      this.watchers.add(check);
    });
  }

  private post(message: Message): void {
    this.channel?.postMessage(message);
  }

  private async webLock(): Promise<TokenStoreLock> {
    const locks = webLocks()!;
    const release = await new Promise<() => void>((resolve, reject) => {
      const giveUp = new AbortController();
      const timer = setTimeout(() => giveUp.abort(), this.options.lockTimeoutMs);
      locks
        .request(this.name, { signal: giveUp.signal }, () => {
          clearTimeout(timer);
          // The lock is held until this promise settles, or until the tab closes.
          return new Promise<void>((released) => resolve(() => released()));
        })
        .catch((error: unknown) => {
          clearTimeout(timer);
          reject(giveUp.signal.aborted || !(error instanceof Error) ? this.timedOut() : error);
        });
    });
    try {
      // The previous holder's pair may reach this tab a little after the lock does: wait for it, so that the plugin's
      // re-read under the lock sees it and does not spend a refresh token that holder has already spent.
      const written = await this.lastMarked(locks);
      await this.catchUp(written);
      return { fence: Math.max(written, this.newestFence()) + 1, release };
    } catch (error) {
      release();
      throw error;
    }
  }

  /** The newest fence a tab has marked as written, as the lock manager sees it (0 for none). */
  private async lastMarked(locks: LockManager): Promise<number> {
    const { held = [] } = await locks.query();
    const prefix = `${this.name}@`;
    let newest = 0;
    for (const { name } of held) {
      if (name?.startsWith(prefix)) newest = Math.max(newest, Number(name.slice(prefix.length)) || 0);
    }
    return newest;
  }

  /** Resolves once this tab has seen a record of `fence` or newer; after a while it asks the others, then gives up. */
  private async catchUp(fence: number): Promise<void> {
    if (await this.until(() => this.newestFence() >= fence, CATCH_UP_MS)) return;
    await this.askPeers((known) => known.fence >= fence);
  }

  private async lease(releaseTab: () => void): Promise<TokenStoreLock> {
    const owner = `${Date.now().toString(36)}-${Math.random().toString(36).slice(2)}`;
    const fence = await acquire(() => this.tryLease(owner), {
      lockTimeoutMs: this.options.lockTimeoutMs,
      pollMs: this.options.pollMs,
      wakeup: this.wakeup,
      what: `The lease "${this.name}:lock" in localStorage`,
      abandon: () => this.dropLease(owner),
    });
    const beat = keepAlive(() => Promise.resolve(this.extendLease(owner)), this.options.lockTtlMs);
    return {
      fence,
      release: () => {
        beat.stop();
        this.dropLease(owner);
        releaseTab();
      },
    };
  }

  private async tryLease(owner: string): Promise<Attempt<number>> {
    const now = Date.now();
    const held = this.readLease();
    if (held && held.until > now) return { retryInMs: held.until - now };
    const fence = Math.max(this.lastFence(), held?.fence ?? 0, this.newestFence()) + 1;
    this.writeLease({ owner, until: now + this.options.lockTtlMs, fence });
    this.leaseStorage!.setItem(`${this.name}:fence`, String(fence));
    await new Promise((settled) => setTimeout(settled, LEASE_SETTLE_MS));
    return this.readLease()?.owner === owner ? { granted: fence } : { retryInMs: this.options.pollMs };
  }

  private extendLease(owner: string): boolean {
    const held = this.readLease();
    if (held?.owner !== owner) return false;
    this.writeLease({ ...held, until: Date.now() + this.options.lockTtlMs });
    return true;
  }

  private dropLease(owner: string): void {
    if (this.readLease()?.owner !== owner) return;
    this.leaseStorage!.removeItem(`${this.name}:lock`);
    this.post({ type: 'released' });
  }

  private readLease(): Lease | undefined {
    const text = this.leaseStorage!.getItem(`${this.name}:lock`);
    if (!text) return undefined;
    try {
      const lease = JSON.parse(text) as Partial<Lease>;
      const valid =
        typeof lease.owner === 'string' && typeof lease.until === 'number' && typeof lease.fence === 'number';
      return valid ? (lease as Lease) : undefined;
    } catch {
      return undefined;
    }
  }

  private writeLease(lease: Lease): void {
    this.leaseStorage!.setItem(`${this.name}:lock`, JSON.stringify(lease));
  }

  /** The fence of the last lease granted, in any tab. */
  private lastFence(): number {
    const fence = Number(this.leaseStorage?.getItem(`${this.name}:fence`) ?? 0);
    return Number.isFinite(fence) ? fence : 0;
  }

  private timedOut(): Error {
    return new Error(
      `The Web Lock "${this.name}" was still held by another tab after ${this.options.lockTimeoutMs} ms (\`lockTimeoutMs\`).`,
    );
  }
}

/** The browser's Web Locks, if it has them. */
function webLocks(): LockManager | undefined {
  const navigator = (globalThis as { navigator?: { locks?: LockManager } }).navigator;
  return typeof navigator?.locks?.request === 'function' ? navigator.locks : undefined;
}

/** `localStorage` or `sessionStorage`, if this environment has it and lets the page use it. */
function webStorage(kind: 'local' | 'session'): Storage | undefined {
  try {
    const storage = (globalThis as Partial<Record<'localStorage' | 'sessionStorage', Storage>>)[`${kind}Storage`];
    // Reading throws where the user blocked site data; so may the first access above.
    storage?.getItem('axios-token-keeper');
    return storage;
  } catch {
    return undefined;
  }
}
