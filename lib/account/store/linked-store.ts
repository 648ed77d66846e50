// A store as the plugin takes it, linked once at attach: the user's store (or a memory store of the attachment's own)
// with what it can do known, each capability checked once, with one message, so that nothing downstream asks again.
import { TokenAuthError } from '../../contract/errors.js';
import type { TokenPair, TokenStore } from '../../contract/store.js';
import { keepsAccount } from '../../stores/common/account-record.js';
import { MemoryTokenStore } from '../../stores/memory.js';

/**
 * Why a store cannot keep named accounts, and what to do: what each place that needs them says (the `accountOf` option
 * at attach, `auth.account(name)`, a request that names its account), in one message.
 */
export const KEEPS_ONE_ACCOUNT = 'the `store` keeps one account (it has no `forAccount(name)`)';
export const KEEP_ACCOUNTS = 'use a store of this package (memory, file, Redis, browser), or give yours `forAccount`';

/** A store and what it can do. */
export class LinkedStore {
  /** Other holders may share it: what it holds may change, or be lost, under this one. */
  readonly shared: boolean;
  /** It has a lock, which several holders renew under one at a time. */
  readonly locks: boolean;
  /** It keeps the account's record, which its holders share (`getAccount` and `setAccount`). */
  readonly keepsRecord: boolean;
  /** It keeps named accounts (`forAccount`). */
  readonly keepsAccounts: boolean;
  /** With `dpop`, the key of a login is exported into the store's sealed record: it is made extractable. */
  readonly exportsDpopKeys: boolean;
  /** The store as the plugin uses it: with `dpop`, a pair without its key reads as none. */
  readonly store: TokenStore;
  /** The store as the user gave it. */
  private readonly given: TokenStore;

  private constructor(store: TokenStore, { shared, dpop }: { shared: boolean; dpop: boolean }) {
    this.given = store;
    this.store = dpop ? keyedPairsOf(store) : store;
    this.exportsDpopKeys = dpop && store.dpopKeys === 'sealed';
    this.shared = shared;
    this.locks = typeof store.lock === 'function';
    this.keepsRecord = shared && keepsAccount(store);
    this.keepsAccounts = typeof store.forAccount === 'function';
  }

  /**
   * The user's store, checked once at attach; without one, a memory store of the attachment's own, which nobody else
   * holds. `namesAccounts`: the `accountOf` option names accounts per request, which the store must then keep.
   * @throws TypeError when the store lacks `get`, `set` or `clear`, or named accounts are asked of a store that keeps one.
   */
  static of(store: TokenStore | undefined, { namesAccounts = false, dpop = false } = {}): LinkedStore {
    if (!store) return new LinkedStore(new MemoryTokenStore(), { shared: false, dpop });
    const missing = (['get', 'set', 'clear'] as const).filter(
      (method) => typeof (store as unknown as Record<string, unknown>)?.[method] !== 'function',
    );
    if (missing.length > 0)
      throw new TypeError(
        `attachTokenAuth: \`store\` must implement get, set and clear (a TokenStore); missing ${missing.join(', ')}.`,
      );
    if (dpop && store.dpopKeys !== 'as-is' && store.dpopKeys !== 'sealed')
      throw new TypeError(
        `attachTokenAuth: \`dpop\` binds the tokens to a key the holders of the \`store\` must share, and this store keeps no key (its \`dpopKeys\` is ${String(store.dpopKeys)}). ` +
          'A FileTokenStore or RedisTokenStore keeps it sealed: give the store `encryption` (without `writeClear`); ' +
          'the memory and browser stores keep it as it is. A private key is never kept in clear.',
      );
    const linked = new LinkedStore(store, { shared: true, dpop });
    // Requests would name accounts the store cannot keep: refused now rather than at each request.
    if (namesAccounts && !linked.keepsAccounts)
      throw new TypeError(
        `attachTokenAuth: \`accountOf\` names accounts per request, but ${KEEPS_ONE_ACCOUNT}: ${KEEP_ACCOUNTS}.`,
      );
    return linked;
  }

  /**
   * The store of account `name`: its `forAccount(name)`, or a memory store of its own. Throws ACCOUNT_INVALID (nothing
   * is sent) when the store keeps one account, or refuses the name.
   */
  forAccount(name: string): LinkedStore {
    const dpop = this.store !== this.given;
    if (!this.shared) return LinkedStore.of(undefined, { dpop });
    if (!this.keepsAccounts)
      throw new TokenAuthError(
        'ACCOUNT_INVALID',
        `The ${KEEPS_ONE_ACCOUNT.slice(4)}, so account "${name}" cannot be kept there; nothing was sent. ${KEEP_ACCOUNTS[0]!.toUpperCase()}${KEEP_ACCOUNTS.slice(1)}.`,
      );
    try {
      return new LinkedStore(this.given.forAccount!(name), { shared: true, dpop });
    } catch (error) {
      throw new TokenAuthError(
        'ACCOUNT_INVALID',
        `The \`store\` refused account "${name}" (its \`forAccount\` threw); nothing was sent. See \`cause\`.`,
        { cause: error },
      );
    }
  }
}

/**
 * `store`, each pair it gives without a DPoP key read as none (and one heard of, not heard): a pair this holder cannot prove it
 * holds (written by a holder without `dpop`, or whose key was lost) costs one login with a new key, never a refresh
 * with the wrong key. Its methods are the store's own, bound to it.
 */
function keyedPairsOf(store: TokenStore): TokenStore {
  const keyed = (pair: TokenPair | null | undefined) => (pair?.dpopKey ? pair : null);
  const bound = Object.fromEntries(
    (['set', 'clear', 'lock', 'getAccount', 'setAccount', 'subscribeAccount', 'forAccount'] as const)
      .filter((name) => typeof store[name] === 'function')
      .map((name) => [name, (store[name] as (...args: unknown[]) => unknown).bind(store)]),
  );
  const subscribe = store.subscribe?.bind(store);
  return {
    ...bound,
    get: () => {
      const read = store.get();
      return read && typeof (read as Promise<unknown>).then === 'function'
        ? (read as Promise<TokenPair | null | undefined>).then(keyed)
        : keyed(read as TokenPair | null | undefined);
    },
    ...(subscribe && {
      // A pair heard of without its key is no news: not one to use, nor a sign that the pair was dropped.
      subscribe: (listener: (pair: TokenPair | null) => void) =>
        subscribe((pair) => {
          if (!pair || pair.dpopKey) listener(pair);
        }),
    }),
    dpopKeys: store.dpopKeys,
  } as unknown as TokenStore;
}
