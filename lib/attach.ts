import { AxiosHeaders, isAxiosError } from 'axios';
import type { AxiosInstance, AxiosRequestConfig, AxiosResponse, InternalAxiosRequestConfig } from 'axios';
import { Emitter } from './events.js';
import { resolveOptions } from './options.js';
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

/**
 * Attaches the token service's client rule to an axios instance: the first request logs in with the credentials,
 * every request to `origins` carries the access token, a token known to be expired is renewed before sending, and
 * requests refused with 401 share one renewal and are replayed once.
 *
 * Attach after registering your own response interceptors: one registered later sees a replayed response twice.
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

  // Per-request bookkeeping under symbols of this attachment alone, so that a config replayed through another
  // attached instance is not mistaken for one of ours: the ticket of what a request carried, and a replay mark.
  const carried = Symbol('axios-token-keeper.ticket');
  const replayed = Symbol('axios-token-keeper.replay');
  type Marked = InternalAxiosRequestConfig & { [carried]?: Ticket; [replayed]?: true };
  // The body of a replay was serialised on the first send: it goes out again as it is. Older axios versions drop
  // symbol keys when they copy a config, but keep this function, so it marks a replay too.
  const passBody = (data: unknown): unknown => data;

  const isReplay = (config: Marked): boolean => {
    const transforms = config.transformRequest;
    return (
      config[replayed] === true || (Array.isArray(transforms) ? transforms.includes(passBody) : transforms === passBody)
    );
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

  const authorize = async (config: InternalAxiosRequestConfig): Promise<InternalAxiosRequestConfig> => {
    if (config.skipAuth || !origins.allows(config)) return config;
    const held = keeper.usable(config) ?? keeper.freshest(await keeper.grant(config).catch(redacted));
    resolved.applyToken(config, held.pair.access);
    const marked = config as Marked;
    marked[carried] = keeper.ticket(held, isReplay(marked));
    const own = config.beforeRedirect;
    if (own !== guardRedirect) {
      config.beforeRedirect = own
        ? (redirect, response, request) => {
            guardRedirect(redirect, response, request);
            own(redirect, response, request);
          }
        : guardRedirect;
    }
    return config;
  };

  // An axios error leaving the interceptors (a CanceledError while waiting, too) may carry a token in its config.
  const redacted = (error: unknown): never => {
    throw isAxiosError(error) ? secrets.axiosError(error) : error;
  };

  const recover = async (error: unknown): Promise<unknown> => {
    if (!isAxiosError(error)) throw error;
    const config = error.config as Marked | undefined;
    const ticket = config?.[carried];
    if (config === undefined || ticket === undefined) throw error;
    // A refusal from elsewhere (a redirect to another origin, which got no token) is not about our token.
    const answeredBy = answeredFrom(error.request);
    if (ejected || !resolved.isTokenRejected(error) || (answeredBy !== undefined && !origins.allowsURL(answeredBy)))
      throw secrets.axiosError(error);
    const endpoint = `${(config.method ?? 'get').toUpperCase()} ${(requestURL(config) ?? '').split(/[?#]/)[0]}`;
    // A replay refused for a pair that a later renewal has replaced (tokens that expired again meanwhile) goes once
    // more with the newer one; refused with the current pair, it goes to the caller.
    const held = ticket.replay
      ? await keeper.afterReplayRejection(ticket, endpoint, config)
      : await keeper.afterRejection(ticket, endpoint, config).catch(redacted);
    // A stream was consumed by the first send; after eject() the request would go out without a token.
    if (held === null || ejected || isStream(config.data)) throw secrets.axiosError(error);
    keeper.noteReplay();
    events.emit('replay', { method: (config.method ?? 'get').toUpperCase(), url: secrets.mask(config.url ?? '') });
    // axios wrote the first body's Content-Length into these headers; a user's transform may change the body.
    const headers = new AxiosHeaders(config.headers);
    headers.delete('Content-Length');
    return instance.request({
      ...config,
      headers,
      [replayed]: true,
      transformRequest: [passBody],
    } as AxiosRequestConfig);
  };

  // What an app's interceptor registered before this one made of the answer may not be a response any more.
  const accepted = (response: AxiosResponse): AxiosResponse => {
    const ticket = ((response as Partial<AxiosResponse> | undefined)?.config as Marked | undefined)?.[carried];
    if (ticket) keeper.accepted(ticket);
    return response;
  };

  const requestId = instance.interceptors.request.use(authorize);
  const responseId = instance.interceptors.response.use(accepted, recover);
  target[ATTACHED] = true;

  return {
    eject() {
      ejected = true;
      instance.interceptors.request.eject(requestId);
      instance.interceptors.response.eject(responseId);
      delete target[ATTACHED];
      keeper.close();
    },
    getTokens: () => keeper.tokens(),
    login: () => keeper.login(),
    refresh: () => keeper.refresh(),
    logout: () => keeper.logout(),
    on: (event, listener) => events.on(event, listener),
    stats: () => keeper.stats(),
  };
}
