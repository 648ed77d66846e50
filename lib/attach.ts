import { getAdapter } from 'axios';
import type { AxiosAdapter, AxiosInstance, AxiosRequestConfig, AxiosResponse, InternalAxiosRequestConfig } from 'axios';
import { sendWithin, startDeadline } from './abort.js';
import type { PairInUse } from './account.js';
import { resolveOptions } from './options.js';
import { OriginPolicy } from './origins.js';
import { SecretList } from './redact.js';
import { Renewals } from './renewal.js';
import { Replays } from './replay.js';
import { Reports } from './reports.js';
import { TokenClient } from './token-client.js';
import type { TokenAuth } from './handle.js';
import type { TokenAuthOptions } from './types.js';

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
  if (target[ATTACHED]) {
    throw new Error(
      'attachTokenAuth: this axios instance already has token auth attached. Call `eject()` on the first handle before attaching again.',
    );
  }
  const resolved = resolveOptions(instance, options);
  const reports: Reports = new Reports(() => renewals.account.budgetLeft());
  const secrets = new SecretList();
  // `instance.defaults` itself may be replaced after attach (hey-api's setConfig does): read it as each request goes.
  const origins = new OriginPolicy(
    resolved.origins,
    resolved.originsFollowBaseURL ? () => instance.defaults?.baseURL : undefined,
  );
  const client = new TokenClient(resolved, (operation) => renewals.account.spend(operation));
  const renewals = new Renewals(resolved, client, reports, secrets);
  const replays = new Replays(renewals, reports, secrets, origins, resolved);
  let ejected = false;
  const isEjected = (): boolean => ejected;

  // The adapter a request would have used without the plugin, under a symbol of this attachment alone.
  const inner = Symbol('axios-token-keeper.adapter');
  type Armed = InternalAxiosRequestConfig & { [inner]?: AdapterSetting };

  // Node follows redirects itself: a hop to an origin outside `origins` must not take the token along, in whatever
  // header applyToken put it (follow-redirects drops only Authorization, and keeps it for subdomains).
  const guardRedirect: RedirectHook = (redirect) => {
    const to = (redirect as { href?: unknown }).href;
    const headers = (redirect as { headers?: Record<string, unknown> }).headers;
    if (typeof to !== 'string' || !headers || origins.allowsURL(to)) return;
    for (const [name, value] of Object.entries(headers))
      if (typeof value === 'string' && secrets.mask(value) !== value) delete headers[name];
  };

  const guardRedirects = (config: InternalAxiosRequestConfig): void => {
    const own = config.beforeRedirect;
    if (own === guardRedirect) return;
    config.beforeRedirect = own
      ? (redirect, response, request) => {
          guardRedirect(redirect, response, request);
          own(redirect, response, request);
        }
      : guardRedirect;
  };

  /**
   * The adapter every request goes out through. It runs after all request interceptors, with the body serialised,
   * and before any response interceptor: the token goes on here, a refused request is caught here, waits for the one
   * shared renewal, and is sent again as it was, so interceptors run once and never see a refusal the plugin cured.
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
    guardRedirects(config);
    startDeadline(config);
    const ready = renewals.ready(config);
    if (ready) return attempt(adapter, config, ready, false, false);
    return renewals
      .grant(config)
      .then((granted) => attempt(adapter, config, renewals.freshest(granted), false, true), replays.masked);
  };

  /**
   * One send with `inUse`'s token; after a refusal, the next with the pair the replays give, or the refusal. `waited`:
   * the request waited for a renewal before, which its `timeout` counts.
   */
  const attempt = (
    adapter: AxiosAdapter,
    config: InternalAxiosRequestConfig,
    inUse: PairInUse,
    replay: boolean,
    waited: boolean,
  ): Promise<AxiosResponse> => {
    const ticket = replays.ticket(inUse, replay);
    resolved.applyToken(config, inUse.pair.access);
    const sent = waited ? sendWithin(adapter, config) : adapter(config);
    // A replay accepted is a renewal that cured a refusal, which the back-off waits for; a first send is not.
    const answered = replay
      ? sent.then((response) => {
          replays.cured(ticket);
          return response;
        })
      : sent;
    return answered.catch(async (error: unknown) =>
      attempt(adapter, config, await replays.recover(error, ticket, config, isEjected), true, true),
    );
  };

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

  return {
    eject() {
      ejected = true;
      instance.interceptors.request.eject(requestId);
      delete target[ATTACHED];
      renewals.close();
    },
    accessToken: () => renewals.accessToken(),
    getTokens: () => renewals.tokens(),
    login: (credentials) => renewals.login(credentials),
    setTokens: (tokens) => renewals.setTokens(tokens),
    refresh: () => renewals.refresh(),
    logout: () => renewals.logout(),
    flush: () => renewals.flush(),
    getState: () => renewals.signInState(),
    subscribe: (listener) => renewals.signIn.subscribe(listener),
    on: (event, listener) => reports.on(event, listener),
    stats: () => reports.stats(),
  };
}
