// A redirect that leaves `origins` loses the token. Node follows redirects itself (follow-redirects drops only
// `Authorization`, and keeps it for subdomains), so a hop off `origins` must not take the token along, in whatever
// header `applyToken` put it.
import type { AxiosRequestConfig, InternalAxiosRequestConfig } from 'axios';
import type { AccountKeeper } from '../account/keeper.js';
import type { OriginPolicy } from './origins.js';

type RedirectHook = NonNullable<AxiosRequestConfig['beforeRedirect']>;

/** One `beforeRedirect` hook per account, whose secrets it knows, chained before a request's own. */
export class RedirectGuards {
  private readonly hooks = new WeakMap<AccountKeeper, RedirectHook>();

  constructor(private readonly origins: OriginPolicy) {}

  /** Has `config`'s redirects off `origins` drop every header that carries one of `account`'s secrets. */
  guard(config: InternalAxiosRequestConfig, account: AccountKeeper): void {
    const hook = this.hookOf(account);
    const own = config.beforeRedirect;
    if (own === hook) return;
    config.beforeRedirect = own
      ? (redirect, response, request) => {
          hook(redirect, response, request);
          own(redirect, response, request);
        }
      : hook;
  }

  private hookOf(account: AccountKeeper): RedirectHook {
    let hook = this.hooks.get(account);
    if (!hook) {
      hook = (redirect) => {
        const to = (redirect as { href?: unknown }).href;
        const headers = (redirect as { headers?: Record<string, unknown> }).headers;
        if (typeof to !== 'string' || !headers || this.origins.allowsURL(to)) return;
        for (const [name, value] of Object.entries(headers))
          if (typeof value === 'string' && account.secrets.mask(value) !== value) delete headers[name];
      };
      this.hooks.set(account, hook);
    }
    return hook;
  }
}
