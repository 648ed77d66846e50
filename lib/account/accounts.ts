// The accounts of one attachment: the default one, and the named ones a request asks for (its `account`, or the
// `accountOf` option's), made on first use and dropped, least recently used first, past `maxAccounts`, never while in use.
import type { InternalAxiosRequestConfig } from 'axios';
import { TokenAuthError } from '../contract/errors.js';
import { AccountKeeper } from './keeper.js';
import type { Attachment } from './keeper.js';
import type { CheckedStore } from './checked-store.js';

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
  readonly default: AccountKeeper;
  private readonly named = new Map<string, AccountKeeper>();
  /** Accounts asked for so far: each named account's `lastUsed` is its turn in this count. */
  private asked = 0;

  /** `store`: the attachment's store, checked once; none: every account is this holder's alone. */
  constructor(
    private readonly attachment: Attachment,
    private readonly store: CheckedStore | undefined,
  ) {
    this.default = new AccountKeeper(undefined, attachment, store);
  }

  /**
   * The account `config` names: its `account`, else what the `accountOf` option derives from it, else the default one.
   * Throws ACCOUNT_INVALID (nothing is sent) for a name that is no account's, or one the store cannot keep.
   */
  of(config: InternalAxiosRequestConfig): AccountKeeper {
    let name = config.account;
    let where = "the request's `account`";
    const derive = this.attachment.options.accountOf;
    if (name === undefined && derive) {
      where = 'the `accountOf` option';
      try {
        name = derive(config);
      } catch (error) {
        throw new TokenAuthError(
          'ACCOUNT_INVALID',
          'The `accountOf` option threw, so the request cannot be told which account it is for; nothing was sent. See `cause`.',
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
  get(name: string): AccountKeeper {
    let account = this.named.get(name);
    if (!account) {
      const store = this.store?.forAccount(name);
      this.makeRoom();
      account = new AccountKeeper(name, this.attachment, store);
      this.named.set(name, account);
    }
    account.lastUsed = ++this.asked;
    return account;
  }

  /** Every account held now, the default one first. */
  all(): AccountKeeper[] {
    return [this.default, ...this.named.values()];
  }

  /** How many named accounts are held now. */
  get size(): number {
    return this.named.size;
  }

  /** At `maxAccounts`, drops the least recently used idle account; one in use stays, past the bound if it must. */
  private makeRoom(): void {
    if (this.named.size < this.attachment.options.maxAccounts) return;
    let oldest: AccountKeeper | undefined;
    for (const account of this.named.values())
      if (account.idle && (!oldest || account.lastUsed < oldest.lastUsed)) oldest = account;
    if (!oldest) return;
    this.named.delete(oldest.name!);
    oldest.close();
  }
}
