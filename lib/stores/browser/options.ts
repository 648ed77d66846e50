// The options of BrowserTokenStore: what each does, their defaults, and their checks, which name the option at fault;
// and the storage an option asks for, which must be there when the store is created.
import { webStorage } from './environment.js';
import { LEASE_DEFAULTS } from '../common/lease.js';
import { checkStoreOptions, shown } from '../common/options.js';
import type { OptionNames } from '../common/options.js';
import type { Sealer } from '../sealing/records.js';
import { checkedBySealing } from '../sealing/brand.js';
import type { Sealing } from '../sealing/index.js';
import { LazySealer } from './lazy-sealer.js';

/** Where `BrowserTokenStore` writes the pair. */
export type BrowserStorageKind = 'local' | 'session' | 'none';

/**
 * How the tabs of one origin take turns renewing: the Web Locks API where the browser has it; otherwise a lease
 * kept in `localStorage`; otherwise within this tab only.
 */
export type BrowserLocking = 'web-locks' | 'storage-lease' | 'tab';

/** Options of `BrowserTokenStore`. Only `key` is required. */
export interface BrowserTokenStoreOptions {
  /**
   * Names the storage entry, the lock and the BroadcastChannel of one account: tabs with the same key share one
   * pair. Use one key per service, and `BrowserTokenStore.forAccount` for its accounts (the key may then not
   * hold `#`), or one key per account.
   */
  key: string;
  /**
   * `'local'`: `localStorage`, shared by the tabs of the origin and kept across browser restarts, so a reopened app
   * makes no login. `'session'`: `sessionStorage`, kept per tab until it closes; tabs still share through the
   * channel. `'none'`: in memory only; a reload logs in again unless another tab of the app is open.
   * Anything in storage can be read by a script injected into the page (XSS): see `keepAccessInMemory`.
   * With `dpop`, the pair's key is a non-extractable CryptoKey in IndexedDB, which the entry names by its thumbprint
   * alone (with `'none'`, in the tabs' memory alone): a script can use it while it runs in the page, never copy it.
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
   * How long a tab waits for another tab's renewal before it gives up (reported as `STORE_FAILED`); the plugin then
   * treats the store as down, as its `whenStoreDown` option says. Longer than the longest renewal, so that a tab that is merely slow is waited for; the browser
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
  /**
   * Seal the tokens in storage with WebCrypto: what `sealing()` (from 'axios-token-keeper/sealing') made of `keys` (the
   * first seals, every one opens), each `{ id, key }` with a non-extractable CryptoKey (kept in IndexedDB) or
   * `{ id, secret }` with 32 random bytes, or of `seal` and `unseal` of your own: `encryption: sealing({ keys })`. The
   * store takes nothing else, so that an app without `encryption` loads none of sealing's code. The pair is bound to
   * its entry's name. It keeps the tokens out of what storage keeps on disk, not from a script injected into the page,
   * which can use the key: see docs/stores.md, "Tokens sealed at rest". Not with `storage: 'none'`, which keeps
   * nothing.
   * @default none: the pair is kept in clear
   */
  encryption?: Sealing;
}

const BROWSER_DEFAULTS = {
  storage: 'local' as BrowserStorageKind,
  keepAccessInMemory: false,
  ...LEASE_DEFAULTS,
} satisfies Required<Omit<BrowserTokenStoreOptions, 'key' | 'encryption'>>;

const BROWSER_OPTIONS: OptionNames<BrowserTokenStoreOptions> = {
  key: true,
  storage: true,
  keepAccessInMemory: true,
  lockTimeoutMs: true,
  lockTtlMs: true,
  pollMs: true,
  encryption: true,
};

/** The options checked, with their defaults, but `encryption` (see {@link sealerOf}); a TypeError naming the option for one that is wrong. */
export function checkOptions(
  options: BrowserTokenStoreOptions,
): Required<Omit<BrowserTokenStoreOptions, 'encryption'>> {
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
  // Named one by one: what else the object holds (a store of an account's link to its parent) is not an option.
  return {
    key: given.key,
    storage: given.storage ?? BROWSER_DEFAULTS.storage,
    keepAccessInMemory: given.keepAccessInMemory ?? BROWSER_DEFAULTS.keepAccessInMemory,
    lockTimeoutMs: given.lockTimeoutMs ?? BROWSER_DEFAULTS.lockTimeoutMs,
    lockTtlMs: given.lockTtlMs ?? BROWSER_DEFAULTS.lockTtlMs,
    pollMs: given.pollMs ?? BROWSER_DEFAULTS.pollMs,
  };
}

/**
 * The sealing of `encryption`, with the page's own WebCrypto: none without it. It takes only what `sealing()` checked
 * (a TypeError that says to wrap anything else in it), and refuses it where there is nothing to seal
 * (`storage: 'none'`) or no WebCrypto (a page served over plain http). The cipher itself is loaded at the first seal
 * or open (see LazySealer).
 */
export function sealerOf(encryption: unknown, storage: BrowserStorageKind): Sealer | undefined {
  if (encryption === undefined) return undefined;
  const checked = checkedBySealing(encryption);
  if (!checked)
    throw new TypeError(
      'BrowserTokenStore: `encryption` takes what `sealing()` makes of your keys: wrap them, ' +
        "`encryption: sealing({ keys })`, with `import { sealing } from 'axios-token-keeper/sealing'`, which checks " +
        `them, so that an app without \`encryption\` loads none of sealing's code; got ${kindOf(encryption)}.`,
    );
  if (storage === 'none')
    throw new TypeError(
      "BrowserTokenStore: `encryption` seals what the store writes to storage, and `storage: 'none'` writes nothing: " +
        "leave `encryption` out, or keep the pair in `storage: 'local'` or `'session'`.",
    );
  const crypto = (globalThis as { crypto?: Crypto }).crypto;
  if (!crypto?.subtle)
    throw new TypeError(
      'BrowserTokenStore: `encryption` needs WebCrypto (`crypto.subtle`), which this page lacks: browsers offer it to ' +
        'pages served over https (and from localhost) only.',
    );
  return new LazySealer(checked, crypto);
}

/**
 * Where the pair is kept: none for `'none'`. A storage the environment does not offer fails here, at creation, rather
 * than at the first request.
 */
export function pairStorage(kind: BrowserStorageKind): Storage | undefined {
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

/** What a value given as `encryption` is, for a message: never its content, which may hold a secret. */
function kindOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' ? 'an object that `sealing()` did not make' : `a ${typeof value}`;
}
