// A store as the plugin takes it, linked once at attach: the user's store (or a memory store of the attachment's own)
// with what it can do known, each capability checked once, with one message, so that nothing downstream asks again.
import { TokenAuthError } from '../../contract/errors.js';
import type { TokenStore } from '../../contract/store.js';
import { keepsAccount } from '../../stores/account-record.js';
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

  private constructor(
    readonly store: TokenStore,
    { shared }: { shared: boolean },
  ) {
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
  static of(store: TokenStore | undefined, { namesAccounts = false } = {}): LinkedStore {
    if (!store) return new LinkedStore(new MemoryTokenStore(), { shared: false });
    const missing = (['get', 'set', 'clear'] as const).filter(
      (method) => typeof (store as unknown as Record<string, unknown>)?.[method] !== 'function',
    );
    if (missing.length > 0)
      throw new TypeError(
        `attachTokenAuth: \`store\` must implement get, set and clear (a TokenStore); missing ${missing.join(', ')}.`,
      );
    const linked = new LinkedStore(store, { shared: true });
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
    if (!this.shared) return LinkedStore.of(undefined);
    if (!this.keepsAccounts)
      throw new TokenAuthError(
        'ACCOUNT_INVALID',
        `The ${KEEPS_ONE_ACCOUNT.slice(4)}, so account "${name}" cannot be kept there; nothing was sent. ${KEEP_ACCOUNTS[0]!.toUpperCase()}${KEEP_ACCOUNTS.slice(1)}.`,
      );
    try {
      return new LinkedStore(this.store.forAccount!(name), { shared: true });
    } catch (error) {
      throw new TokenAuthError(
        'ACCOUNT_INVALID',
        `The \`store\` refused account "${name}" (its \`forAccount\` threw); nothing was sent. See \`cause\`.`,
        { cause: error },
      );
    }
  }
}
