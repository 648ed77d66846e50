// The accounts of one attachment: the default one, which is today's single account, and the named ones a request
// asks for (its `account`, or the `account` option's), made on first use and dropped, least recently used first,
// past `maxAccounts`, never while in use.
import type { InternalAxiosRequestConfig } from 'axios';
import { Account } from './keeper.js';
import type { Attachment } from './keeper.js';
import { TokenAuthError } from '../contract/errors.js';
import { MemoryTokenStore } from '../stores/memory.js';
import type { TokenStore } from '../contract/store.js';

/** The longest account name taken: room for a tenant id or an e-mail address (254), not for a pasted token. */
export const LONGEST_ACCOUNT_NAME = 256;

/** What is wrong with `name` as an account's name, or undefined when nothing is. Never quotes it whole. */
export function accountNameProblem(name: unknown): string | undefined {
  if (typeof name !== 'string') return `must be a string, got ${name === null ? 'null' : typeof name}`;
  if (name === '') return 'must not be empty';
  if (name.length > LONGEST_ACCOUNT_NAME)
    return `must be at most ${LONGEST_ACCOUNT_NAME} characters, got ${name.length}`;
  return undefined;
}

export class Accounts {
  readonly default: Account;
  private readonly named = new Map<string, Account>();
  /** Accounts asked for so far: each named account's `lastUsed` is its turn in this count. */
  private asked = 0;

  /** `store` is the user's (undefined: each account gets a memory store of its own); `max` is `maxAccounts`. */
  constructor(
    private readonly attachment: Attachment,
    private readonly store: TokenStore | undefined,
    private readonly max: number,
  ) {
    this.default = new Account(undefined, attachment, store ?? new MemoryTokenStore(), store === undefined);
  }

  /**
   * The account `config` names: its `account`, else what the `account` option derives from it, else the default one.
   * Throws ACCOUNT_INVALID (nothing is sent) for a name that is no account's, or one the store cannot keep.
   */
  of(config: InternalAxiosRequestConfig): Account {
    let name = config.account;
    let where = "the request's `account`";
    const derive = this.attachment.options.account;
    if (name === undefined && derive) {
      where = 'the `account` option';
      try {
        name = derive(config);
      } catch (error) {
        throw new TokenAuthError(
          'ACCOUNT_INVALID',
          'The `account` option threw, so the request cannot be told which account it is for; nothing was sent. See `cause`.',
          { cause: error },
        );
      }
    }
    if (name === undefined) return this.default;
    const problem = accountNameProblem(name);
    if (problem !== undefined)
      throw new TokenAuthError(
        'ACCOUNT_INVALID',
        `The account of a request (${where}) ${problem}; nothing was sent. Name the account with a non-empty string, such as a tenant id.`,
      );
    return this.get(name);
  }

  /** The account named `name` (a checked name), made on first use. */
  get(name: string): Account {
    let account = this.named.get(name);
    if (!account) {
      const store = this.storeFor(name);
      this.makeRoom();
      account = new Account(name, this.attachment, store ?? new MemoryTokenStore(), store === undefined);
      this.named.set(name, account);
    }
    account.lastUsed = ++this.asked;
    return account;
  }

  /** Every account held now, the default one first. */
  all(): Account[] {
    return [this.default, ...this.named.values()];
  }

  /** How many named accounts are held now. */
  get size(): number {
    return this.named.size;
  }

  /** Account `name`'s store: the user's store's `forAccount(name)`; undefined for a memory store of its own. */
  private storeFor(name: string): TokenStore | undefined {
    const store = this.store;
    if (!store) return undefined;
    if (typeof store.forAccount !== 'function')
      throw new TokenAuthError(
        'ACCOUNT_INVALID',
        `The \`store\` keeps one account (it has no \`forAccount(name)\`), so account "${name}" cannot be kept there; ` +
          'nothing was sent. Use a store of this package (memory, file, Redis, browser), or give yours `forAccount`.',
      );
    try {
      return store.forAccount(name);
    } catch (error) {
      throw new TokenAuthError(
        'ACCOUNT_INVALID',
        `The \`store\` refused account "${name}" (its \`forAccount\` threw); nothing was sent. See \`cause\`.`,
        { cause: error },
      );
    }
  }

  /** At `maxAccounts`, drops the least recently used idle account; one in use stays, past the bound if it must. */
  private makeRoom(): void {
    if (this.named.size < this.max) return;
    let oldest: Account | undefined;
    for (const account of this.named.values())
      if (account.idle && (!oldest || account.lastUsed < oldest.lastUsed)) oldest = account;
    if (!oldest) return;
    this.named.delete(oldest.name!);
    oldest.close();
  }
}
