import axios, { getAdapter } from 'axios';
import type { AxiosInstance, AxiosRequestConfig, InternalAxiosRequestConfig } from 'axios';
import { base64FromUtf8 } from '../support/base64.js';
import type { TokenOperation, TokenPair } from '../contract/store.js';
import type { TokenAuthOptions } from '../contract/options.js';
import { describeShape } from './parse.js';
import { bounded, layered } from './adapter.js';
import type { Binding, TokenScheme } from './scheme.js';
import { Mask } from '../support/redact.js';
import { TokenAuthError } from '../contract/errors.js';
import { callFailure, MAX_ANSWER_BYTES } from './failure.js';
import type { Operation } from './failure.js';
import { retryCalls } from './retries.js';
import { basicSecrets, secretsIn, stringsIn } from './secrets.js';
import type { Credentials, LogoutRequest, ParsedTokens } from '../contract/calls.js';
import type { ClientAuthLayer } from '../contract/client-auth.js';

/**
 * What a call of the private instance is for, on its config under a string key, which every axios version's config
 * merges pass on as it is (a symbol or a WeakMap would not survive them; a function is not copied as an object would
 * be): its gate, and its scheme's binding. The call
 * layers read it (see {@link callOf}); nothing of it ever reaches an error (see failure.ts).
 */
const CALL = 'axiosTokenKeeperCall';

/**
 * What each attempt of a login or token call passes as it leaves, first try and retries alike: the account's gates,
 * which count it, and the lease of the store's lock the renewal holds. It refuses the attempt by throwing, and the call
 * fails with that error as it is. The one question the token calls ask back up, as each attempt leaves.
 */
export interface CallGate {
  pass(operation: Operation): void;
}

/** Whose call it is: the account (undefined: the default one), what its attempts pass, and its scheme's binding. */
export interface CallContext {
  readonly account: string | undefined;
  readonly gate: CallGate | undefined;
  readonly binding?: Binding | undefined;
}

/** What a call of the private instance is for: see {@link CALL}. */
export interface CallOf {
  readonly operation: Operation;
  readonly gate: CallGate | undefined;
  readonly binding: Binding | undefined;
  /** Masks `value`, which a layer put on the attempt (an assertion), in whatever error the call fails with. */
  secret(value: string): void;
}

/** What `config`, a call of the private instance as a call layer sees it, is for. */
export function callOf(config: InternalAxiosRequestConfig): CallOf | undefined {
  return (config as InternalAxiosRequestConfig & { [CALL]?: () => CallOf })[CALL]?.();
}

/** A token answer: the tokens read from it, and its HTTP status. */
export interface Answer {
  readonly tokens: ParsedTokens;
  readonly status: number;
}

/** What the token calls are made with: the options they read, as attach resolved them. */
export interface TokenCallOptions {
  authBaseURL: string;
  /** No `authBaseURL` was given: messages about the calls' address say it is the instance's `baseURL`. */
  authBaseURLFromBaseURL: boolean;
  loginPath: string;
  tokenPath: string;
  loginRequest?: TokenAuthOptions['loginRequest'];
  refreshRequest: NonNullable<TokenAuthOptions['refreshRequest']>;
  logoutRequest?: TokenAuthOptions['logoutRequest'];
  parseTokens: NonNullable<TokenAuthOptions['parseTokens']>;
  refreshTokenInCookie: boolean;
  tokenTimeoutMs: number;
  tokenRetries: number;
  tokenRetryDelayMs: number;
  /** The token scheme: what it lays over each call, and the answers it can use. */
  scheme: Pick<TokenScheme, 'callLayer' | 'checkAnswer'>;
  /** The client authentication, if any: its layer over each call, and its secrets, masked in every failure. */
  clientAuth?: ClientAuthLayer | undefined;
}

/**
 * The login and token calls. They go through a private axios instance, never through the user's instance or its
 * interceptors, so a renewal can neither recurse nor wait for itself; axios-retry retries them there.
 */
export class TokenClient {
  private readonly http: AxiosInstance;

  constructor(private readonly options: TokenCallOptions) {
    this.http = axios.create({
      baseURL: options.authBaseURL,
      timeout: options.tokenTimeoutMs,
      // A redirect could carry the Basic header or the refresh token to another origin: never follow one.
      maxRedirects: 0,
      // A token answer is a few hundred bytes; a huge one is a fault, not something to hold in memory.
      maxContentLength: MAX_ANSWER_BYTES,
      headers: { Accept: 'application/json' },
      adapter: bounded(
        layered(getAdapter(axios.defaults.adapter), options.scheme.callLayer, options.clientAuth?.layer),
        options.tokenTimeoutMs,
      ),
    });
    // axios.create() copies axios.defaults, and an application may have put its own Authorization there.
    for (const headers of Object.values(this.http.defaults.headers) as Array<Record<string, unknown>>) {
      if (typeof headers === 'object' && headers !== null) delete headers.Authorization;
    }
    // Every call that leaves, first tries and retries alike, passes its gate; past the budget, none leaves.
    this.http.interceptors.request.use((config) => {
      const call = callOf(config);
      call?.gate?.pass(call.operation);
      return config;
    });
    retryCalls(this.http, {
      retries: options.tokenRetries,
      delayMs: options.tokenRetryDelayMs,
      timeoutMs: options.tokenTimeoutMs,
    });
  }

  /** The call's URL for a message: its query and any userinfo left out, since either may carry a secret. */
  private address(config: AxiosRequestConfig): string {
    const url = this.http.getUri({ ...config, params: undefined });
    try {
      const parsed = new URL(url);
      parsed.username = '';
      parsed.password = '';
      parsed.search = '';
      return parsed.href;
    } catch {
      return url.split('?')[0]!;
    }
  }

  /** Where the token calls' address came from, for a message about it: said when the user never set it. */
  private fromBaseURL(): string {
    return this.options.authBaseURLFromBaseURL
      ? " No `authBaseURL` was given, so the token calls go to the instance's `baseURL`; pass `authBaseURL` if the token service lives elsewhere."
      : '';
  }

  /**
   * The login call of `context.account` (undefined: the default one); `context.gate` passes each attempt, or refuses
   * it.
   */
  login(credentials: Credentials, context: CallContext): Promise<Answer> {
    const { account } = context;
    const url = this.options.loginPath;
    const custom = this.options.loginRequest;
    if (custom) {
      const {
        data,
        headers,
        params,
        withCredentials = this.options.refreshTokenInCookie,
      } = custom(credentials, account);
      // Whatever the request carries may be a secret (a password, a client secret, an assertion): mask it all.
      const secrets = [credentials.password, ...secretsIn(data), ...secretsIn(headers), ...secretsIn(params)];
      const basic = headers?.Authorization ?? headers?.authorization;
      if (basic?.startsWith('Basic ')) secrets.push(...basicSecrets(basic));
      return this.call('login', { url, data, headers, params, withCredentials }, secrets, context);
    }
    const basic = `Basic ${base64FromUtf8(`${credentials.username}:${credentials.password}`)}`;
    // The raw password too: an answer may quote what it was sent.
    const secrets = [basic, basic.slice(6), `${credentials.username}:${credentials.password}`, credentials.password];
    // With the refresh token in a cookie, the login is what sets it: cross-origin, that needs withCredentials.
    const withCredentials = this.options.refreshTokenInCookie;
    return this.call('login', { url, headers: { Authorization: basic }, withCredentials }, secrets, context);
  }

  /**
   * The token call; `refreshToken` undefined when the refresh token lives in a cookie the plugin cannot see. `context`
   * as for the login.
   */
  refresh(refreshToken: string | undefined, context: CallContext): Promise<Answer> {
    const { account } = context;
    const cookie = this.options.refreshTokenInCookie;
    const {
      data,
      headers,
      params,
      withCredentials = cookie,
    } = this.options.refreshRequest(refreshToken ?? '', account);
    const secrets = [
      ...(refreshToken === undefined ? [] : [refreshToken]),
      ...secretsIn(data),
      ...secretsIn(headers),
      ...secretsIn(params),
    ];
    const config = { url: this.options.tokenPath, data, headers, params, withCredentials };
    return this.call('refresh', config, secrets, context);
  }

  /**
   * The logout calls `logoutRequest` makes of `pair` (the pair held, or null), if it makes any (a revocation makes one
   * per token): each once, in order, never retried, outside the budget (they generate no token); `context.gate` counts
   * them. One that fails does not keep the next from going; the first failure is thrown once all have gone.
   */
  async logout(pair: TokenPair | null, { account, gate }: CallContext): Promise<void> {
    const tokens = [pair?.access, pair?.refresh].filter((token): token is string => token !== undefined);
    let made: LogoutRequest | readonly LogoutRequest[] | null | undefined;
    try {
      made = this.options.logoutRequest?.(pair, account);
    } catch (error) {
      throw error instanceof Error ? new Mask(tokens).copy(error) : error;
    }
    const requests = (Array.isArray(made) ? made : [made]) as Array<LogoutRequest | null | undefined>;
    let failed: { error: unknown } | undefined;
    for (const request of requests) {
      if (!request) continue;
      const { path: url, data, headers, params, withCredentials = this.options.refreshTokenInCookie } = request;
      const secrets = [...tokens, ...secretsIn(data), ...secretsIn(headers), ...secretsIn(params)];
      const config = { url, data, headers, params, withCredentials };
      await this.send('logout', config, secrets, { gate, binding: undefined }).catch((error: unknown) => {
        failed ??= { error };
      });
    }
    if (failed) throw failed.error;
  }

  /** Sends a call of `operation` and gives its answer; a failure as the TokenAuthError that names it. */
  private async send(
    operation: Operation,
    config: AxiosRequestConfig,
    sent: string[],
    { gate, binding }: Omit<CallContext, 'account'>,
  ): Promise<{ body: unknown; status: number }> {
    /** What the gate threw: the call fails with it as it is. */
    let refused: { error: unknown } | undefined;
    const masked = [...sent, ...(this.options.clientAuth?.secrets ?? [])];
    const call: CallOf = {
      operation,
      binding,
      secret: (value) => masked.push(value),
      // A call the gate refuses throws here, before it leaves, and is no attempt; nor is any retry after it.
      gate: gate && {
        pass(name) {
          try {
            gate.pass(name);
          } catch (error) {
            refused = { error };
            throw error;
          }
        },
      },
    };
    try {
      const { data: body, status } = await this.http.request<unknown>({
        ...config,
        method: 'POST',
        // The logout goes once: the tokens are dropped already, and a user waits for the sign-out.
        ...(operation === 'logout' && { 'axios-retry': { retries: 0 } }),
        [CALL]: () => call,
      } as AxiosRequestConfig);
      return { body, status };
    } catch (error) {
      if (refused) throw refused.error;
      const place = {
        operation,
        url: this.address(config),
        timeoutMs: this.options.tokenTimeoutMs,
        fromBaseURL: this.fromBaseURL(),
      };
      throw callFailure(place, error, masked);
    }
  }

  private async call(
    operation: TokenOperation,
    config: AxiosRequestConfig,
    sent: string[],
    context: CallContext,
  ): Promise<Answer> {
    const where = `POST ${this.address(config)}`;
    const { body, status } = await this.send(operation, config, sent, context);
    let parsed: ParsedTokens | null | undefined;
    let cause: unknown;
    try {
      parsed = this.options.parseTokens(body);
    } catch (error) {
      // A parser may quote the answer it could not read, and the answer may hold tokens.
      cause = error instanceof Error ? new Mask([...sent, ...stringsIn(body)]).copy(error) : undefined;
    }
    this.options.scheme.checkAnswer(body, where, status);
    if (typeof parsed?.access !== 'string' || parsed.access === '') {
      throw new TokenAuthError(
        'TOKEN_RESPONSE_INVALID',
        `The token service answered ${where} with HTTP ${status} but no access token could be read from it (saw ${describeShape(body)}). ` +
          'If your service answers in another shape, pass `parseTokens`.',
        { cause, status },
      );
    }
    return { tokens: parsed, status };
  }
}
