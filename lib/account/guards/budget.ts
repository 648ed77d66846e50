import { TokenAuthError } from '../../contract/errors.js';
import type { TokenBudgetLimits } from '../../contract/calls.js';

import type { SpentCalls, TokenOperation } from '../../contract/store.js';

/**
 * Counts the calls that may generate a token, in a rolling window, and refuses one past the limit before it
 * leaves: the identity provider may suspend an account that generates too many, whatever the reason.
 */
export class TokenBudget {
  private spent: SpentCalls = { login: [], refresh: [] };

  /** `shared`: the calls are counted for every holder of a shared store (the record says so), not this one alone. */
  constructor(
    private readonly limits: TokenBudgetLimits,
    private readonly clock: () => number,
    private readonly shared = false,
  ) {}

  /** Records one call of `operation`, or throws TOKEN_BUDGET_EXCEEDED without recording it. */
  take(operation: TokenOperation): void {
    const now = this.clock();
    const times = this.spent[operation];
    while (times.length > 0 && times[0]! <= now - this.limits.windowMs) times.shift();
    const limit = operation === 'login' ? this.limits.logins : this.limits.refreshes;
    if (times.length >= limit) {
      const freeInMs = times[0]! + this.limits.windowMs - now;
      const what = operation === 'login' ? 'login calls' : 'token calls';
      throw new TokenAuthError(
        'TOKEN_BUDGET_EXCEEDED',
        `Token budget spent: ${times.length} ${what} in the last ${Math.round(this.limits.windowMs / 60_000)} min (\`tokenBudget.${operation === 'login' ? 'logins' : 'refreshes'}\`). ` +
          `The next is allowed in ${Math.ceil(freeInMs / 1000)} s.` +
          (this.shared ? " The calls are the account's, counted across every holder of the shared store." : '') +
          ' The identity provider may suspend an account that generates too many tokens: ' +
          'the `failure` events say why so many were needed.',
      );
    }
    times.push(now);
  }

  /** The calls of each operation still allowed in the window now. */
  left(): Record<TokenOperation, number> {
    const { login, refresh } = this.state;
    return {
      login: Math.max(0, this.limits.logins - login.length),
      refresh: Math.max(0, this.limits.refreshes - refresh.length),
    };
  }

  get state(): SpentCalls {
    const since = this.clock() - this.limits.windowMs;
    return {
      login: this.spent.login.filter((at) => at > since),
      refresh: this.spent.refresh.filter((at) => at > since),
    };
  }

  set state(spent: SpentCalls) {
    this.spent = { login: [...spent.login], refresh: [...spent.refresh] };
  }
}
