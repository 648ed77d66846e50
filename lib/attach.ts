import { AxiosHeaders, getAdapter, isAxiosError } from 'axios';
import type {
  AxiosAdapter,
  AxiosError,
  AxiosInstance,
  AxiosRequestConfig,
  AxiosResponse,
  InternalAxiosRequestConfig,
} from 'axios';
import { Emitter } from './events.js';
import type { Held } from './held-pair.js';
import { DEFAULTS, resolveOptions } from './options.js';
import { answeredFrom, OriginPolicy, requestURL } from './origins.js';
import { TokenKeeper } from './renewal.js';
import type { Ticket } from './renewal.js';
import { isStream, SecretList } from './redact.js';
import { TokenClient } from './token-client.js';
import type { TokenAuth, TokenAuthEvents, TokenAuthOptions } from './types.js';

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
  const events = new Emitter<TokenAuthEvents>();
  const secrets = new SecretList();
  const keeper = new TokenKeeper(resolved, new TokenClient(resolved), events, secrets);
  const origins = new OriginPolicy(resolved.origins);
  let ejected = false;

  // The adapter a request would have used without the plugin, under a symbol of this attachment alone.
  const inner = Symbol('axios-token-keeper.adapter');
  type Armed = InternalAxiosRequestConfig & { [inner]?: AdapterSetting };

  // An axios error leaving the plugin (a CanceledError while waiting, too) may carry a token in its config.
  const redacted = (error: unknown): never => {
    throw isAxiosError(error) ? secrets.axiosError(error) : error;
  };

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
   * After a refusal: the pair to send the request with once more, or the refusal itself, redacted, for the caller.
   * A replay refused for a pair that a later renewal has replaced (tokens that expired again meanwhile) goes once
   * more with the newer one; refused with the current pair, it goes to the caller.
   */
  const recover = async (error: unknown, ticket: Ticket, config: InternalAxiosRequestConfig): Promise<Held> => {
    if (!isAxiosError(error)) throw error;
    // A refusal from elsewhere (a redirect to another origin, which got no token) is not about our token.
    const answeredBy = answeredFrom(error.request);
    if (ejected || !isTokenRefusal(error, config) || (answeredBy !== undefined && !origins.allowsURL(answeredBy)))
      throw secrets.axiosError(error);
    const endpoint = `${(config.method ?? 'get').toUpperCase()} ${(requestURL(config) ?? '').split(/[?#]/)[0]}`;
    // A stream was consumed by the first send and cannot go again: the renewal is for the requests that follow.
    if (isStream(config.data)) {
      await keeper.afterStreamRejection(ticket, endpoint, config).catch(redacted);
      throw secrets.axiosError(error);
    }
    const held = ticket.replay
      ? await keeper.afterReplayRejection(ticket, endpoint, config)
      : await keeper.afterRejection(ticket, endpoint, config).catch(redacted);
    // After eject() the request would go out without a token.
    if (held === null || ejected) throw secrets.axiosError(error);
    keeper.noteReplay();
    events.emit('replay', { method: (config.method ?? 'get').toUpperCase(), url: secrets.mask(config.url ?? '') });
    return held;
  };

  /**
   * Whether the service refused the token, judged on the answer as the caller would see it: a custom test gets the
   * body parsed; the default one reads the status only, and is spared the parsing.
   */
  const isTokenRejected = resolved.isTokenRejected;
  const isTokenRefusal: (error: AxiosError, config: InternalAxiosRequestConfig) => boolean =
    isTokenRejected === DEFAULTS.isTokenRejected
      ? isTokenRejected
      : (error, config) => isTokenRejected(withParsedBody(error, config));

  /**
   * The adapter every request goes out through. It runs after all request interceptors, with the body serialised,
   * and before any response interceptor: the token goes on here, a refused request is caught here, waits for the one
   * shared renewal, and is sent again as it was, so interceptors run once and never see a refusal the plugin cured.
   */
  const send: AxiosAdapter = (config) => {
    const setting = (config as Armed)[inner] ?? instance.defaults.adapter;
    const adapter = typeof setting === 'function' ? setting : getAdapter(setting, config);
    // Not ours to authorize: it goes out, and fails, exactly as without the plugin, unmarked.
    if (ejected || config.skipAuth || !origins.allows(config)) {
      delete (config as Armed)[inner];
      return adapter(config);
    }
    guardRedirects(config);
    const held = keeper.usable(config);
    if (held) return attempt(adapter, config, held, false);
    return keeper.grant(config).then((granted) => attempt(adapter, config, keeper.freshest(granted), false), redacted);
  };

  /** One send with `held`'s token; after a refusal, the next with the pair `recover` gives, or the refusal itself. */
  const attempt = (
    adapter: AxiosAdapter,
    config: InternalAxiosRequestConfig,
    held: Held,
    replay: boolean,
  ): Promise<AxiosResponse> => {
    const ticket = keeper.ticket(held, replay);
    resolved.applyToken(config, held.pair.access);
    const sent = adapter(config);
    // A replay accepted is a renewal that cured a refusal, which the back-off waits for; a first send is not.
    const answered = replay
      ? sent.then((response) => {
          keeper.cured(ticket);
          return response;
        })
      : sent;
    return answered.catch(async (error: unknown) =>
      attempt(adapter, config, await recover(error, ticket, config), true),
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
      keeper.close();
    },
    accessToken: () => keeper.accessToken(),
    getTokens: () => keeper.tokens(),
    login: (credentials) => keeper.login(credentials),
    setTokens: (tokens) => keeper.setTokens(tokens),
    refresh: () => keeper.refresh(),
    logout: () => keeper.logout(),
    flush: () => keeper.flush(),
    on: (event, listener) => events.on(event, listener),
    stats: () => keeper.stats(),
  };
}

/**
 * `error` as the caller will see it, its body run through the request's `transformResponse` (JSON parsed), for a
 * custom `isTokenRejected` that reads the body; axios does the same to the error the plugin lets through.
 */
function withParsedBody(error: AxiosError, config: InternalAxiosRequestConfig): AxiosError {
  const response = error.response;
  if (!response) return error;
  let data = response.data;
  try {
    const headers = AxiosHeaders.from(response.headers as AxiosHeaders).normalize(false);
    for (const transform of [config.transformResponse ?? []].flat())
      data = transform.call(config, data, headers, response.status) as unknown;
  } catch {
    data = response.data;
  }
  const view = Object.create(Object.getPrototypeOf(error) as object) as AxiosError;
  return Object.assign(view, error, { response: { ...response, data } });
}
