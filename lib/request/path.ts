// A request's life, in one room: armed by the request interceptor, it goes out through this adapter, below the app's
// interceptors, which run once and see only the final answer: its account's token goes on, a refusal is decided here
// (refusal.ts), and the request goes again with the pair the decision gives, or the refusal goes to the caller.
import { getAdapter, isAxiosError } from 'axios';
import type { AxiosAdapter, AxiosInstance, AxiosRequestConfig, AxiosResponse, InternalAxiosRequestConfig } from 'axios';
import type { Accounts } from '../account/accounts.js';
import type { AccountKeeper, Ticket } from '../account/keeper.js';
import type { PairInUse } from '../account/pairs.js';
import type { Reports } from '../account/reports.js';
import type { ResolvedOptions } from '../options/defaults.js';
import { sendWithin, startDeadline } from '../support/abort.js';
import type { OriginPolicy } from './origins.js';
import { RedirectGuards } from './redirects.js';
import { RefusalDecision } from './refusal.js';

type AdapterSetting = AxiosRequestConfig['adapter'];

/** What the request path is laid over: the instance, the options, the origins, the accounts and the events. */
export interface PathParts {
  readonly instance: AxiosInstance;
  readonly options: ResolvedOptions;
  readonly origins: OriginPolicy;
  readonly accounts: Accounts;
  readonly reports: Reports;
}

/** The life of every request of one attachment. */
export class RequestPath {
  /** The adapter a request would have used without the plugin, under a symbol of this attachment alone. */
  private readonly inner = Symbol('axios-token-keeper.adapter');
  private readonly redirects: RedirectGuards;
  private readonly refusals: RefusalDecision;
  private ejected = false;

  constructor(private readonly parts: PathParts) {
    this.redirects = new RedirectGuards(parts.origins);
    this.refusals = new RefusalDecision({ ...parts, ejected: () => this.ejected });
  }

  /**
   * The request interceptor: arms each request with the path's adapter, around the one it would have used (its own,
   * or the instance's). One that an interceptor sets after this one (a cache's answer from memory) goes out as it is.
   */
  readonly arm = (config: InternalAxiosRequestConfig): InternalAxiosRequestConfig => {
    if (config.adapter !== this.send) {
      (config as Armed)[this.inner] = config.adapter;
      config.adapter = this.send;
    }
    return config;
  };

  /** After `eject()`, a request armed before goes out as without the plugin. */
  eject(): void {
    this.ejected = true;
  }

  /**
   * The adapter every request goes out through. It runs after all request interceptors, with the body serialised,
   * and before any response interceptor: the token of the request's account goes on here, a refused request is caught
   * here, waits for the account's one shared renewal, and is sent again as it was.
   */
  private readonly send: AxiosAdapter = (config) => {
    const armed = config as Armed;
    const setting = armed[this.inner] ?? this.parts.instance.defaults.adapter;
    const adapter = typeof setting === 'function' ? setting : getAdapter(setting, config);
    // Not ours to authorize: it goes out, and fails, exactly as without the plugin, unmarked.
    if (this.ejected || config.skipAuth || !this.parts.origins.allows(config)) {
      const outside = !this.ejected && !config.skipAuth;
      delete armed[this.inner];
      return outside
        ? adapter(config).catch((error: unknown) => this.refusals.outside(error, config))
        : adapter(config);
    }
    let account: AccountKeeper;
    try {
      account = this.parts.accounts.of(config);
    } catch (error) {
      // ACCOUNT_INVALID: the request fails as a request does, nothing sent.
      return Promise.reject(error instanceof Error ? error : new Error(String(error)));
    }
    this.redirects.guard(config, account);
    const { clock, scheme } = this.parts.options;
    startDeadline(config, clock());
    // The scheme's adapter over the request's own (the same one for every request on it: made once per adapter).
    const schemed = scheme.adapter(adapter);
    if (account.name === undefined) return this.authorize(schemed, config, account);
    // A named account may be dropped to make room for others, but not while a request of its own is under way.
    account.inFlight += 1;
    const done = (): void => {
      account.inFlight -= 1;
    };
    const sent = this.authorize(schemed, config, account);
    sent.then(done, done);
    return sent;
  };

  /** The request with its account's pair: at once when one is ready, else once a renewal (or the store) gives one. */
  private authorize(
    adapter: AxiosAdapter,
    config: InternalAxiosRequestConfig,
    account: AccountKeeper,
  ): Promise<AxiosResponse> {
    const ready = account.ready(config);
    if (ready) return this.attempt(adapter, config, account.ticket(ready, 0), ready, false);
    return account.grant(config).then(
      (granted) => {
        const inUse = account.freshest(granted);
        return this.attempt(adapter, config, account.ticket(inUse, 0), inUse, true);
      },
      (error: unknown) => {
        throw isAxiosError(error) ? account.secrets.axiosError(error) : error;
      },
    );
  }

  /**
   * One send with `inUse`'s token under `ticket`; after a refusal, the next with the pair the decision gives, or the
   * refusal. `waited`: the request waited for a renewal before, which its `timeout` counts.
   */
  private attempt(
    adapter: AxiosAdapter,
    config: InternalAxiosRequestConfig,
    ticket: Ticket,
    inUse: PairInUse,
    waited: boolean,
  ): Promise<AxiosResponse> {
    const { options } = this.parts;
    options.scheme.authorize(config, inUse.pair);
    const sent = waited ? sendWithin(adapter, config, options.clock) : adapter(config);
    // A replay accepted is a renewal that cured a refusal, which the back-off waits for; a first send is not.
    const answered =
      ticket.replays > 0
        ? sent.then((response) => {
            ticket.account.cured(ticket);
            return response;
          })
        : sent;
    return answered.catch((error: unknown) => this.again(error, adapter, config, ticket));
  }

  /** A send that failed: again with the pair the decision gives, or its refusal for the caller. */
  private again(
    error: unknown,
    adapter: AxiosAdapter,
    config: InternalAxiosRequestConfig,
    ticket: Ticket,
  ): Promise<AxiosResponse> {
    return this.refusals
      .next(error, ticket, config)
      .then((next) => this.attempt(adapter, config, ticket.account.ticket(next, ticket.replays + 1), next, true));
  }
}

/** A request's config as the path arms it: the adapter it would have used, under the path's symbol. */
type Armed = InternalAxiosRequestConfig & { [key: symbol]: AdapterSetting };
