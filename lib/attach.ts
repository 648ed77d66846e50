import { isAxiosError } from 'axios';
import type { AxiosInstance, AxiosRequestConfig, InternalAxiosRequestConfig } from 'axios';
import { Emitter } from './events.js';
import { resolveOptions } from './options.js';
import { answeredFrom, OriginPolicy } from './origins.js';
import { TokenKeeper } from './renewal.js';
import type { Ticket } from './renewal.js';
import { TokenClient } from './token-client.js';
import type { TokenAuth, TokenAuthEvents, TokenAuthOptions } from './types.js';

/** Marks an instance as attached; `Symbol.for`, so that two copies of the package see each other's mark. */
const ATTACHED = Symbol.for('axios-token-keeper.attached');

type Attachable = AxiosInstance & { [ATTACHED]?: true };

/**
 * Attaches the token service's client rule to an axios instance: the first request logs in with the credentials,
 * every request to `origins` carries the access token, a token known to be expired is renewed before sending, and
 * requests refused with 401 share one renewal and are replayed once.
 *
 * @example
 * const api = axios.create({ baseURL: 'https://api.example.com' });
 * const auth = attachTokenAuth(api, { credentials: { username: 'jane', password: process.env.PASSWORD! } });
 * await api.get('/allocation/api/v1/tracking/order-list');
 */
export function attachTokenAuth(instance: AxiosInstance, options: TokenAuthOptions): TokenAuth {
  const target = instance as Attachable;
  if (typeof target?.interceptors?.request?.use !== 'function') {
    throw new TypeError('attachTokenAuth: the first argument must be an axios instance, e.g. axios.create({ baseURL }).');
  }
  if (target[ATTACHED]) {
    throw new Error('attachTokenAuth: this axios instance already has token auth attached. Call `eject()` on the first handle before attaching again.');
  }
  const resolved = resolveOptions(instance, options);
  const events = new Emitter<TokenAuthEvents>();
  const keeper = new TokenKeeper(resolved, new TokenClient(resolved), events);
  const origins = new OriginPolicy(resolved.origins);
  // Which request carried which pair (a Ticket). A symbol of this attachment alone, so that a config replayed
  // through another attached instance is not mistaken for one of ours.
  const carried = Symbol('axios-token-keeper.ticket');
  // axios copies a config on every request and drops symbol keys in older versions, but it keeps function
  // references: the pass-through body transform of a replay is how its 401 is recognised as a replay's.
  const replayTransforms = new WeakSet<object>();

  type Marked = InternalAxiosRequestConfig & { [carried]?: Ticket };

  const authorize = async (config: InternalAxiosRequestConfig): Promise<InternalAxiosRequestConfig> => {
    if (config.skipAuth || !origins.allows(config)) return config;
    const held = await keeper.grant(config).catch(redacted);
    resolved.applyToken(config, held.pair.access);
    (config as Marked)[carried] = keeper.ticket(held);
    return config;
  };

  // An axios error leaving the interceptors (a CanceledError while waiting, too) may carry a token in its config.
  const redacted = (error: unknown): never => {
    throw isAxiosError(error) ? keeper.redact(error) : error;
  };

  const isReplay = (config: AxiosRequestConfig): boolean => {
    const transforms = config.transformRequest;
    return Array.isArray(transforms) ? transforms.some((transform) => replayTransforms.has(transform)) : !!transforms && replayTransforms.has(transforms);
  };

  const recover = async (error: unknown): Promise<unknown> => {
    if (!isAxiosError(error)) throw error;
    const config = error.config as Marked | undefined;
    const ticket = config?.[carried];
    if (config === undefined || ticket === undefined) throw error;
    // A refusal from elsewhere (a redirect to another origin, which got no token) is not about our token.
    const answeredBy = answeredFrom(error.request);
    if (!resolved.isTokenRejected(error) || (answeredBy !== undefined && !origins.allowsURL(answeredBy))) throw keeper.redact(error);
    if (isReplay(config)) {
      keeper.noteReplayRefused(ticket.generation);
      throw keeper.redact(error);
    }
    const held = await keeper.afterRejection(ticket, config).catch(redacted);
    if (held === null) throw keeper.redact(error);
    keeper.counts.replays += 1;
    events.emit('replay', { method: (config.method ?? 'get').toUpperCase(), url: config.url ?? '' });
    // The body was serialised on the first send: send those bytes again rather than serialising them twice.
    const passBody = (data: unknown): unknown => data;
    replayTransforms.add(passBody);
    return instance.request({ ...config, transformRequest: [passBody] });
  };

  const requestId = instance.interceptors.request.use(authorize);
  const responseId = instance.interceptors.response.use(undefined, recover);
  target[ATTACHED] = true;

  return {
    eject() {
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
    stats: () => ({ ...keeper.counts }),
  };
}
