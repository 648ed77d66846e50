// The user's store as the plugin takes it, checked once at attach, what it can do known, each capability with one
// message, so that nothing downstream asks again. Without a `store`, an account is nobody else's (solo.ts), and this is
// not made.
import { TokenAuthError } from '../contract/errors.js';
import type { TokenStore } from '../contract/store.js';

/**
 * Why a store cannot keep named accounts, and what to do: what each place that needs them says (the `accountOf` option
 * at attach, `auth.account(name)`, a request that names its account), in one message.
 */
export const KEEPS_ONE_ACCOUNT = 'the `store` keeps one account (it has no `forAccount(name)`)';
export const KEEP_ACCOUNTS = 'use a store of this package (memory, file, Redis, browser), or give yours `forAccount`';

/** A store the user gave, and what it can do. Other holders may share it: what it holds may change under this one. */
export class CheckedStore {
  /** It has a lock, which several holders renew under one at a time. */
  readonly locks: boolean;
  /** It keeps the account's record, which its holders share (`getAccount` and `setAccount`). */
  readonly keepsRecord: boolean;
  /** It keeps named accounts (`forAccount`). */
  readonly keepsAccounts: boolean;

  private constructor(readonly store: TokenStore) {
    this.locks = typeof store.lock === 'function';
    this.keepsRecord = typeof store.getAccount === 'function' && typeof store.setAccount === 'function';
    this.keepsAccounts = typeof store.forAccount === 'function';
  }

  /**
   * The user's store, checked once at attach; undefined without one. `namesAccounts`: the `accountOf` option names
   * accounts per request, which the store must then keep.
   * @throws TypeError when the store lacks `get`, `set` or `clear`, or named accounts are asked of a store that keeps one.
   */
  static of(store: TokenStore | undefined, { namesAccounts }: { namesAccounts: boolean }): CheckedStore | undefined {
    if (!store) return undefined;
    const missing = (['get', 'set', 'clear'] as const).filter(
      (method) => typeof (store as unknown as Record<string, unknown>)?.[method] !== 'function',
    );
    if (missing.length > 0)
      throw new TypeError(
        `attachTokenAuth: \`store\` must implement get, set and clear (a TokenStore); missing ${missing.join(', ')}.`,
      );
    const checked = new CheckedStore(store);
    // Requests would name accounts the store cannot keep: refused now rather than at each request.
    if (namesAccounts && !checked.keepsAccounts)
      throw new TypeError(
        `attachTokenAuth: \`accountOf\` names accounts per request, but ${KEEPS_ONE_ACCOUNT}: ${KEEP_ACCOUNTS}.`,
      );
    return checked;
  }

  /**
   * The store of account `name`: its `forAccount(name)`. Throws ACCOUNT_INVALID (nothing is sent) when the store keeps
   * one account, or refuses the name.
   */
  forAccount(name: string): CheckedStore {
    if (!this.keepsAccounts)
      throw new TokenAuthError(
        'ACCOUNT_INVALID',
        `The ${KEEPS_ONE_ACCOUNT.slice(4)}, so account "${name}" cannot be kept there; nothing was sent. ${KEEP_ACCOUNTS[0]!.toUpperCase()}${KEEP_ACCOUNTS.slice(1)}.`,
      );
    try {
      return new CheckedStore(this.store.forAccount!(name));
    } catch (error) {
      throw new TokenAuthError(
        'ACCOUNT_INVALID',
        `The \`store\` refused account "${name}" (its \`forAccount\` threw); nothing was sent. See \`cause\`.`,
        { cause: error },
      );
    }
  }
}
