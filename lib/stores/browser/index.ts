/**
 * {@link BrowserTokenStore}: one token pair shared by the tabs of a browser app, renewed by one tab at a time.
 * Browser only; it loads nothing from Node.
 *
 * @module axios-token-keeper/browser-store
 */
import type { AccountRecord, TokenPair, TokenStore, TokenStoreLock } from '../../contract/store.js';
import { accountRecordIn } from '../common/account-record.js';
import { dpopKeysOf, webStorage } from './environment.js';
import { checkOptions, pairStorage, sealerOf } from './options.js';
import type { BrowserLocking, BrowserTokenStoreOptions } from './options.js';
import { AccountEntry } from './account-entry.js';
import { RecordView } from './record-view.js';
import { readPair } from './read-pair.js';
import { BrowserLock } from './store-lock.js';
import { TabChannel } from './tab-channel.js';
import { checkAccountName, checkAccountsRoot, escapeAccountName } from '../common/account-key.js';
import { copyPair } from '../common/record.js';
import type { FencedPair, StoredPair } from '../common/record.js';
import type { Sealer } from '../sealing/records.js';
import { Announcer } from '../common/announcer.js';

/** The store's options, and what it tells of the browser. */
export type { BrowserLocking, BrowserStorageKind, BrowserTokenStoreOptions } from './options.js';

/** The `encryption` option, which `sealing()` (axios-token-keeper/sealing) makes of your keys. */
export type { Sealing } from '../sealing/index.js';

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
  /** With `dpop`, a pair's key is kept as it is: a CryptoKey in IndexedDB (see `storage`); undefined without IndexedDB. */
  readonly dpopKeys: 'as-is' | undefined;
  private readonly options: Required<Omit<BrowserTokenStoreOptions, 'encryption'>>;
  /** The sealing of `encryption`, which the named accounts' stores share: private, so that nothing prints the keys. */
  readonly #sealer: Sealer | undefined;
  /** The name of the storage entry, the lock and the channel; the keys beside the entry start with it. */
  private readonly name: string;
  /** For a named account's store (forAccount): tells its parent it was let go. */
  private readonly leave: (() => void) | undefined;
  /** The named accounts' stores listened to in this tab, by name, so that keepers of one account share one. */
  private readonly accounts = new Map<string, BrowserTokenStore>();
  /** A named account's store with no listener left: it neither speaks to the other tabs nor hears them. */
  private asleep = false;
  private readonly view: RecordView;
  private readonly channel: TabChannel;
  /** The tabs' turns to renew: Web Locks, a lease in `localStorage`, or this tab's alone. */
  private readonly browserLock: BrowserLock;
  private readonly announcer = new Announcer();
  private closed = false;
  /** The account's record as the tabs share it: see AccountEntry. */
  private readonly accountEntry: AccountEntry;
  private readonly onStorage = (event: StorageEvent): void => this.storageChanged(event);

  /**
   * Checks the options and opens the channel to the other tabs. Throws a `TypeError` naming the option for a bad one,
   * and for a `storage` the environment does not offer (a server render), instead of failing at the first request; for
   * an `encryption` that `sealing()` did not make (its keys are checked there), or with `storage: 'none'` or without
   * WebCrypto, naming what to fix.
   */
  constructor(options: BrowserTokenStoreOptions) {
    const parent = (options as AccountStoreOptions | undefined)?.[PARENT];
    this.options = checkOptions(options);
    this.leave = parent?.leave;
    // One name for the storage entry, the lock and the channel of this account.
    const name = parent?.name ?? `axios-token-keeper:${this.options.key}`;
    this.name = name;
    const kind = this.options.storage;
    // `encryption` first, as an option: what is wrong with it is said in a server render too.
    this.#sealer = parent ? parent.sealer : sealerOf(options.encryption, kind);
    const storage = pairStorage(kind);
    this.dpopKeys = dpopKeysOf(kind);
    const where = `The ${kind}Storage entry "${name}"`;
    this.view = new RecordView(storage, name, where, this.options.keepAccessInMemory, this.#sealer);
    // The tabs share the account's record in `localStorage` whatever `storage` says: it holds no secret, and a logout in
    // one tab must stop the others from signing back in by themselves (an HttpOnly cookie would let them).
    this.accountEntry = new AccountEntry(webStorage('local'), `${name}:account`);
    this.channel = new TabChannel(name, {
      known: () => this.view.known,
      told: (record) => this.told(record),
      toldAccount: (fence, text) => this.accountEntry.told(fence, text),
      stirred: () => this.browserLock.wake(),
    });
    const fences = { newest: () => this.newestFence(), ofPair: () => this.view.newestFence() };
    this.browserLock = new BrowserLock(name, this.options, fences, this.channel);
    this.locking = this.browserLock.locking;
    globalThis.addEventListener?.('storage', this.onStorage);
  }

  /**
   * The store of account `name` in this tab, with the same options: its storage entry, lock, BroadcastChannel and
   * record are named `axios-token-keeper#<key>#<name>` (and `:lock`, `:fence`, `:account` after it), with the name
   * escaped (see `escapeAccountName`: letters, digits, `_` and `-` as they are, anything else as `%XX`, so that it
   * holds no `#`, `:` or `@`); the `#` after the package's name, where every default account has `:`, keeps a named
   * account's entries apart from any key's. Keepers of one account in a tab share one store while it is listened to;
   * it lets go of the channel and of the tab's storage events once its last listener goes, and this store forgets it.
   *
   * @throws TypeError when `key` holds `#`, which would let an account's entries be those of another key's account.
   *
   * @example
   * const store = new BrowserTokenStore({ key: 'orders-api' });
   * store.forAccount('jane@example.com'); // localStorage "axios-token-keeper#orders-api#jane%40example%2Ecom"
   */
  forAccount(name: string): BrowserTokenStore {
    checkAccountName('BrowserTokenStore', name);
    this.checkOpen();
    const { key } = this.options;
    checkAccountsRoot('BrowserTokenStore', 'key', key, 'entries');
    const held = this.accounts.get(name);
    if (held) return held;
    const base = this.leave ? this.name : `axios-token-keeper#${key}`;
    const options: AccountStoreOptions = {
      ...this.options,
      [PARENT]: {
        name: `${base}#${escapeAccountName(name)}`,
        sealer: this.#sealer,
        leave: () => {
          if (this.accounts.get(name) === store) this.accounts.delete(name);
        },
      },
    };
    const store = new BrowserTokenStore(options);
    this.accounts.set(name, store);
    return store;
  }

  /**
   * The pair, or null. With `keepAccessInMemory` (or `storage` other than `'local'`) a tab that does not know the
   * access token asks the other tabs for it; when none answers, it gets the refresh token with an access token that
   * counts as expired, so the plugin renews before sending anything.
   */
  async get(): Promise<TokenPair | null> {
    this.checkOpen();
    return readPair(this.view, this.channel, this.options.storage === 'local');
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
    return accountRecordIn(this.accountEntry.read()) ?? null;
  }

  /**
   * Writes the account's record and tells the other tabs; false, without writing, when `fence` is older than a later
   * holder's. Marked for the next holder of the lock to wait for, as a write of the pair is.
   */
  async setAccount(record: AccountRecord, fence?: number): Promise<boolean> {
    this.checkOpen();
    if (fence !== undefined && fence < this.newestFence()) return false;
    const written = fence ?? this.newestFence() + 1;
    this.channel.tellAccount(written, this.accountEntry.write(record, written));
    await this.browserLock.mark(written);
    return true;
  }

  /**
   * Resolves once this tab may renew, and holds the lock until `release()`. Rejects after `lockTimeoutMs`; the plugin
   * then treats the store as down (its `whenStoreDown` option).
   */
  async lock(): Promise<TokenStoreLock> {
    this.checkOpen();
    return this.browserLock.lock();
  }

  /** Calls `listener` when another tab (or another keeper in this tab) writes or clears the pair. */
  subscribe(listener: (pair: TokenPair | null) => void): () => void {
    const remove = this.announcer.add(listener);
    if (this.asleep && !this.closed) {
      this.asleep = false;
      this.channel.open();
      globalThis.addEventListener?.('storage', this.onStorage);
    }
    return () => {
      remove();
      // A named account's store is let go with its last listener: the plugin dropped the account and will not close
      // it, and the channel and the storage listener would keep it (and its tokens) for as long as the tab lives.
      if (this.leave && this.announcer.size === 0 && !this.asleep) {
        this.asleep = true;
        this.disconnect();
        this.leave();
      }
    };
  }

  /** Stops listening to the other tabs, its accounts' stores too. The store cannot be used afterwards. */
  close(): void {
    this.closed = true;
    this.disconnect();
    this.browserLock.wake();
    this.leave?.();
    for (const account of [...this.accounts.values()]) account.close();
  }

  private disconnect(): void {
    this.browserLock.close();
    this.channel.close();
    globalThis.removeEventListener?.('storage', this.onStorage);
  }

  private checkOpen(): void {
    if (this.closed) throw new Error(`BrowserTokenStore "${this.options.key}" is closed; create a new one.`);
  }

  /** The fence of the newest write this tab can see: of the pair, or of the account's record. */
  private newestFence(): number {
    return Math.max(this.view.newestFence(), this.accountEntry.fence);
  }

  private async write(pair: TokenPair | null, fence: number | undefined): Promise<boolean> {
    this.checkOpen();
    // An entry that is not ours is reported (by the read), never overwritten.
    const newest = this.view.checkedFence();
    // A later holder's write of the pair, or of the account's record alone, makes this one stale.
    if (fence !== undefined && Math.max(newest, this.accountEntry.fence) > fence) return false;
    // Without Web Locks, a lease granted since may not have written yet: its fence is the lease's.
    if (fence !== undefined && this.browserLock.grantedPast(fence)) return false;
    // A write without the lock (it timed out, or a store used directly) comes after everything this tab has seen.
    const written: FencedPair = { fence: fence ?? newest + 1, pair };
    await this.view.persist(written);
    this.learn(written);
    this.channel.tell(written);
    await this.browserLock.mark(written.fence);
    return true;
  }

  /** Takes `record` as this tab's view and tells this tab's keepers, once per record; false for an older record. */
  private learn(record: FencedPair): boolean {
    if (!this.view.take(record)) return false;
    this.browserLock.learnt(record.fence);
    this.channel.recheck();
    this.announcer.announce(JSON.stringify(record), copyPair(record.pair));
    return true;
  }

  private told(record: FencedPair): void {
    // Per tab, each tab keeps its own copy, so that a reload of this tab finds it; shared storage has it already.
    if (this.learn(record) && this.options.storage === 'session') this.view.persistOverOurs(record).catch(ignore);
  }

  /** Without BroadcastChannel, `localStorage` events carry the pair; with or without it, they wake lease waiters. */
  private storageChanged(event: StorageEvent): void {
    if (this.closed) return;
    this.browserLock.heard(event.key);
    if (event.key === this.view.entry || event.key === this.accountEntry.key) this.channel.recheck();
    const record = this.view.carriedBy(event);
    if (record) void this.learnCarried(record);
  }

  private async learnCarried(record: FencedPair<StoredPair<Partial<TokenPair>>>): Promise<void> {
    try {
      const opened = await this.view.opened(record);
      if (opened && !this.closed) this.learn(opened);
    } catch {
      // A pair that does not open is reported by get(), where the plugin can say so.
    }
  }
}

/** Where forAccount hands the new store what it takes from its parent: a symbol, so that no option of yours is it. */
const PARENT = Symbol('the store an account is of');

/** The options of a named account's store: its parent's, its name, and how it tells its parent it was let go. */
interface AccountStoreOptions extends BrowserTokenStoreOptions {
  [PARENT]?: { name: string; sealer: Sealer | undefined; leave: () => void };
}

function ignore(): void {}
