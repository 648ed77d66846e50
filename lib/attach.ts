import { getAdapter, isAxiosError } from 'axios';
import type { AxiosAdapter, AxiosInstance, AxiosRequestConfig, AxiosResponse, InternalAxiosRequestConfig } from 'axios';
import { sendWithin, startDeadline } from './support/abort.js';
import { axiosVersionProblem } from './support/axios-version.js';
import type { Account, Ticket } from './account/keeper.js';
import type { PairInUse } from './account/pairs.js';
import { accountNameProblem, Accounts } from './account/accounts.js';
import { resolveOptions } from './options/resolve.js';
import { OriginPolicy } from './request/origins.js';
import { Replays } from './request/refusal.js';
import { Reports } from './account/reports.js';
import { TokenClient } from './token-calls/client.js';
import type { TokenAuth, TokenAuthAccount } from './contract/handle.js';
import type { TokenAuthOptions } from './contract/options.js';

/** Marks an instance as attached; `Symbol.for`, so that two copies of the package see each other's mark. */
const ATTACHED = Symbol.for('axios-token-keeper.attached');

type Attachable = AxiosInstance & { [ATTACHED]?: true };
type RedirectHook = NonNullable<AxiosRequestConfig['beforeRedirect']>;
type AdapterSetting = AxiosRequestConfig['adapter'];

/**
 * Attaches the token service's client rule to an axios instance: the first request logs in with the credentials,
 * every request to `origins` carries the access token, a token known to be expired is renewed before sending, and
 * requests refused with 401 share one renewal and are sent again.
 *
 * Your own interceptors, registered before or after, run once per request and see only the final answer: the token
 * goes on and a refusal is cured one level below them, in the request's adapter.
 *
 * @example
 * const api = axios.create({ baseURL: 'https://api.example.com' });
 * const auth = attachTokenAuth(api, { credentials: { username: 'jane', password: process.env.PASSWORD! } });
 * await api.get('/allocation/api/v1/tracking/order-list');
 */
export function attachTokenAuth(instance: AxiosInstance, options: TokenAuthOptions): TokenAuth {
  const target = instance as Attachable;
  if (typeof target?.interceptors?.request?.use !== 'function') {
    throw new TypeError(
      'attachTokenAuth: the first argument must be an axios instance, e.g. axios.create({ baseURL }).',
    );
  }
  const problem = axiosVersionProblem(instance);
  if (problem !== undefined)
    throw new TypeError(`attachTokenAuth: ${problem}; install one in that range (\`npm install axios@1\`).`);
  if (target[ATTACHED]) {
    throw new Error(
      'attachTokenAuth: this axios instance already has token auth attached. Call `eject()` on the first handle before attaching again.',
    );
  }
  const resolved = resolveOptions(instance, options);
  const reports = new Reports();
  // `instance.defaults` itself may be replaced after attach (hey-api's setConfig does): read it as each request goes.
  const origins = new OriginPolicy(
    resolved.origins,
    resolved.originsFollowBaseURL ? () => instance.defaults?.baseURL : undefined,
  );
  const client = new TokenClient(resolved);
  const accounts = new Accounts({ options: resolved, client, reports }, resolved.store, resolved.maxAccounts);
  let ejected = false;

  // The adapter a request would have used without the plugin, under a symbol of this attachment alone.
  const inner = Symbol('axios-token-keeper.adapter');
  type Armed = InternalAxiosRequestConfig & { [inner]?: AdapterSetting };

  // Node follows redirects itself: a hop to an origin outside `origins` must not take the token along, in whatever
  // header applyToken put it (follow-redirects drops only Authorization, and keeps it for subdomains). One hook per
  // account, whose secrets it knows.
  const redirectGuards = new WeakMap<Account, RedirectHook>();
  const guardFor = (account: Account): RedirectHook => {
    let guard = redirectGuards.get(account);
    if (!guard) {
      guard = (redirect) => {
        const to = (redirect as { href?: unknown }).href;
        const headers = (redirect as { headers?: Record<string, unknown> }).headers;
        if (typeof to !== 'string' || !headers || origins.allowsURL(to)) return;
        for (const [name, value] of Object.entries(headers))
          if (typeof value === 'string' && account.secrets.mask(value) !== value) delete headers[name];
      };
      redirectGuards.set(account, guard);
    }
    return guard;
  };

  const guardRedirects = (config: InternalAxiosRequestConfig, account: Account): void => {
    const guard = guardFor(account);
    const own = config.beforeRedirect;
    if (own === guard) return;
    config.beforeRedirect = own
      ? (redirect, response, request) => {
          guard(redirect, response, request);
          own(redirect, response, request);
        }
      : guard;
  };

  /**
   * The adapter every request goes out through. It runs after all request interceptors, with the body serialised,
   * and before any response interceptor: the token of the request's account goes on here, a refused request is caught
   * here, waits for the account's one shared renewal, and is sent again as it was, so interceptors run once and never
   * see a refusal the plugin cured.
   */
  const send: AxiosAdapter = (config) => {
    const setting = (config as Armed)[inner] ?? instance.defaults.adapter;
    const adapter = typeof setting === 'function' ? setting : getAdapter(setting, config);
    // Not ours to authorize: it goes out, and fails, exactly as without the plugin, unmarked.
    if (ejected || config.skipAuth) {
      delete (config as Armed)[inner];
      return adapter(config);
    }
    if (!origins.allows(config)) {
      delete (config as Armed)[inner];
      return adapter(config).catch((error: unknown) => replays.outside(error, config));
    }
    let account: Account;
    try {
      account = accounts.of(config);
    } catch (error) {
      // ACCOUNT_INVALID: the request fails as a request does, nothing sent.
      return Promise.reject(error instanceof Error ? error : new Error(String(error)));
    }
    guardRedirects(config, account);
    startDeadline(config, resolved.clock());
    if (account.name === undefined) return authorize(adapter, config, account);
    // A named account may be dropped to make room for others, but not while a request of its own is under way.
    account.inFlight += 1;
    const done = (): void => {
      account.inFlight -= 1;
    };
    const sent = authorize(adapter, config, account);
    sent.then(done, done);
    return sent;
  };

  /** The request with its account's pair: at once when one is ready, else once a renewal (or the store) gives one. */
  const authorize = (
    adapter: AxiosAdapter,
    config: InternalAxiosRequestConfig,
    account: Account,
  ): Promise<AxiosResponse> => {
    const ready = account.ready(config);
    if (ready) return attempt(adapter, config, account.ticket(ready, 0), ready, false);
    return account.grant(config).then(
      (granted) => {
        const inUse = account.freshest(granted);
        return attempt(adapter, config, account.ticket(inUse, 0), inUse, true);
      },
      (error: unknown) => {
        throw isAxiosError(error) ? account.secrets.axiosError(error) : error;
      },
    );
  };

  /**
   * One send with `inUse`'s token under `ticket`; after a refusal, the next with the pair the replays give, or the
   * refusal. `waited`: the request waited for a renewal before, which its `timeout` counts.
   */
  const attempt = (
    adapter: AxiosAdapter,
    config: InternalAxiosRequestConfig,
    ticket: Ticket,
    inUse: PairInUse,
    waited: boolean,
  ): Promise<AxiosResponse> => {
    resolved.applyToken(config, inUse.pair.access);
    const sent = waited ? sendWithin(adapter, config, resolved.clock) : adapter(config);
    // A replay accepted is a renewal that cured a refusal, which the back-off waits for; a first send is not.
    const answered =
      ticket.replays > 0
        ? sent.then((response) => {
            ticket.account.cured(ticket);
            return response;
          })
        : sent;
    return answered.catch((error: unknown) => replays.recover(error, ticket, config, adapter));
  };

  /** A refused request sent again with the pair the replays give: one function for all, so none holds a closure. */
  const sendAgain = (
    adapter: AxiosAdapter,
    config: InternalAxiosRequestConfig,
    ticket: Ticket,
    next: PairInUse,
  ): Promise<AxiosResponse> => attempt(adapter, config, ticket.account.ticket(next, ticket.replays + 1), next, true);
  const replays = new Replays(reports, origins, resolved, () => ejected, sendAgain);

  // The request interceptor arms each request with the adapter above, around the one it would have used: its own,
  // or the instance's. One that an interceptor sets after this one (a cache's answer from memory) goes out as it is.
  const arm = (config: InternalAxiosRequestConfig): InternalAxiosRequestConfig => {
    if (config.adapter !== send) {
      (config as Armed)[inner] = config.adapter;
      config.adapter = send;
    }
    return config;
  };

  const requestId = instance.interceptors.request.use(arm, undefined, { synchronous: true });
  target[ATTACHED] = true;

  // The members bound to their account, so that `useSyncExternalStore(auth.subscribe, auth.getState)` works as it is.
  const handleOf = (account: () => Account): TokenAuthAccount => ({
    accessToken: () => account().accessToken(),
    getTokens: () => account().getTokens(),
    login: (credentials) => account().login(credentials),
    setTokens: (tokens) => account().setTokens(tokens),
    refresh: () => account().refresh(),
    logout: () => account().logout(),
    flush: () => account().flush(),
    stats: () => account().stats(),
    getState: () => account().getState(),
    subscribe: (listener) => account().subscribe(listener),
  });
  const { default: first } = accounts;

  return {
    ...handleOf(() => first),
    eject() {
      ejected = true;
      instance.interceptors.request.eject(requestId);
      delete target[ATTACHED];
      for (const account of accounts.all()) account.close();
    },
    account(name) {
      const problem = accountNameProblem(name);
      if (problem !== undefined)
        throw new TypeError(`auth.account(name): \`name\` ${problem}; pass the account's name, such as a tenant id.`);
      if (resolved.store && typeof resolved.store.forAccount !== 'function')
        throw new TypeError(
          `auth.account("${name}"): the \`store\` keeps one account (it has no \`forAccount(name)\`); use a store of ` +
            'this package (memory, file, Redis, browser), or give yours `forAccount`.',
        );
      // The account as it is held at each call: one dropped meanwhile (maxAccounts) is made again, from the store.
      return handleOf(() => accounts.get(name));
    },
    on: (event, listener) => reports.on(event, listener),
  };
}
