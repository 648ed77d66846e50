// The token budget: the calls that may generate a token (retries included) counted in a rolling window, and one past
// the limit refused before it leaves, since the identity provider may suspend an account that generates too many,
// whatever the reason. A person's typed sign-in is neither counted nor refused.
import { TokenAuthError } from '../../contract/errors.js';
import type { TokenBudgetLimits } from '../../contract/calls.js';
import type { TokenOperation } from '../../contract/store.js';
import type { Gate, GuardedCall } from './gate.js';
import { INVALID, isNumbers, isObject } from './record-part.js';
import type { RecordPart } from './record-part.js';

/** The calls spent in the window, as the account's record keeps them: when each left (epoch ms). */
export type SpentCalls = Record<TokenOperation, number[]>;

export class Budget implements Gate, RecordPart<SpentCalls> {
  readonly field = 'spent';
  private spent: SpentCalls = { login: [], refresh: [] };

  /**
   * `limits`: `tokenBudget`'s, or false without a budget (it refuses nothing, and keeps nothing). `shared`: the calls
   * are counted for every holder of a shared store, which its refusal says.
   */
  constructor(
    private readonly limits: TokenBudgetLimits | false,
    private readonly clock: () => number,
    private readonly shared: boolean,
  ) {}

  refuse({ operation, typed }: GuardedCall): TokenAuthError | undefined {
    const limits = this.limits;
    if (!limits || typed) return undefined;
    const times = this.inWindow()[operation];
    const limit = operation === 'login' ? limits.logins : limits.refreshes;
    if (times.length < limit) return undefined;
    const freeInMs = times[0]! + limits.windowMs - this.clock();
    const what = operation === 'login' ? 'login calls' : 'token calls';
    return new TokenAuthError(
      'TOKEN_BUDGET_EXCEEDED',
      `Token budget spent: ${times.length} ${what} in the last ${Math.round(limits.windowMs / 60_000)} min (\`tokenBudget.${operation === 'login' ? 'logins' : 'refreshes'}\`). ` +
        `The next is allowed in ${Math.ceil(freeInMs / 1000)} s.` +
        (this.shared ? " The calls are the account's, counted across every holder of the shared store." : '') +
        ' The identity provider may suspend an account that generates too many tokens: ' +
        'the `failure` events say why so many were needed.',
    );
  }

  spend({ operation, typed }: GuardedCall): void {
    if (this.limits && !typed)
      this.spent = { ...this.inWindow(), [operation]: [...this.inWindow()[operation], this.clock()] };
  }

  /** The calls of each operation still allowed in the window now; undefined without a budget. */
  left(): Record<TokenOperation, number> | undefined {
    const limits = this.limits;
    if (!limits) return undefined;
    const { login, refresh } = this.inWindow();
    return {
      login: Math.max(0, limits.logins - login.length),
      refresh: Math.max(0, limits.refreshes - refresh.length),
    };
  }

  save(): SpentCalls {
    return this.inWindow();
  }

  until(): number {
    const limits = this.limits;
    if (!limits) return 0;
    const { login, refresh } = this.inWindow();
    return Math.max(0, ...[...login, ...refresh].map((at) => at + limits.windowMs));
  }

  parse(value: unknown): SpentCalls | typeof INVALID {
    return isObject(value) && isNumbers(value.login) && isNumbers(value.refresh) ? (value as SpentCalls) : INVALID;
  }

  load(spent: SpentCalls): void {
    if (this.limits) this.spent = { login: [...spent.login], refresh: [...spent.refresh] };
  }

  /** The calls that left within the window, oldest first. */
  private inWindow(): SpentCalls {
    if (!this.limits) return this.spent;
    const since = this.clock() - this.limits.windowMs;
    return {
      login: this.spent.login.filter((at) => at > since),
      refresh: this.spent.refresh.filter((at) => at > since),
    };
  }
}
