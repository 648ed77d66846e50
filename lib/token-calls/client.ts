import axios, { AxiosError, isAxiosError } from 'axios';
import type { AxiosInstance, AxiosRequestConfig, InternalAxiosRequestConfig } from 'axios';
import { base64FromUtf8 } from '../support/base64.js';
import { settle } from '../support/deadline.js';
import type { TokenOperation, TokenPair } from '../contract/store.js';
import { TokenAuthError } from '../contract/errors.js';
import type { TokenAuthErrorCode } from '../contract/errors.js';
import { describeShape } from './parse.js';
import { Mask } from '../support/redact.js';
import { withRetries } from './retry.js';
import { basicSecrets, secretsIn, stringsIn, tokensIn } from './secrets.js';
import type { RetryPolicy } from './retry.js';
import type { Credentials, LogoutRequest, ParsedTokens } from '../contract/options.js';
import type { ResolvedOptions } from '../options/resolve.js';

/**
 * Called by each attempt of a call of the private instance as it leaves, first try and retries alike: it spends the
 * budget for the call's operation (which the URL cannot tell when the login and the token call share an endpoint, as
 * in OAuth2) and counts the attempt. A function under a string key, which every axios version's config merges pass
 * on as it is.
 */
const ATTEMPT = 'axiosTokenKeeperAttempt';
type AttemptConfig = InternalAxiosRequestConfig & { [ATTEMPT]?: () => void };

/**
 * What a login or token call came to, filled in as it goes: the attempts that left (retries included; none when the
 * budget refused the first), and the HTTP status of the answer that ended it, if one did.
 */
export interface CallOutcome {
  attempts: number;
  status: number | undefined;
}

/** The calls the client makes: the two that generate a token, and the logout. */
type Operation = TokenOperation | 'logout';

/**
 * What each attempt of a login or token call passes as it leaves, first try and retries alike: the account's budget,
 * which counts it, and the lease of the store's lock the renewal holds. It refuses the attempt by throwing, and the
 * call fails with that error as it is.
 */
export interface CallGate {
  pass(operation: TokenOperation): void;
}

const REJECTED: Record<Operation, TokenAuthErrorCode> = {
  login: 'LOGIN_REJECTED',
  refresh: 'REFRESH_REJECTED',
  logout: 'LOGOUT_REJECTED',
};
/** What each call is, in a message, and the option that sets its path. */
const CALLS: Record<Operation, [what: string, path: string]> = {
  login: ['login', '`loginPath`'],
  refresh: ['token', '`tokenPath`'],
  logout: ['logout', 'the `path` that `logoutRequest` returns'],
};

/** 4xx other than timeouts and rate limits: the service refused what we sent, and sending it again won't help. */
function isRefusal(status: number): boolean {
  return status >= 400 && status < 500 && status !== 408 && status !== 429;
}

/** The service's reason, masked before it is cut short: a cut could fall inside a secret and leave its start. */
function detailOf(body: unknown, mask: Mask): string | undefined {
  const detail =
    (body as { detail?: unknown } | null | undefined)?.detail ??
    (body as { message?: unknown } | null | undefined)?.message;
  return typeof detail === 'string' && detail !== '' ? mask.text(detail).slice(0, 200) : undefined;
}

/**
 * The login and token calls. They go through a private axios instance, never through the user's instance or its
 * interceptors, so a renewal can neither recurse nor wait for itself.
 */
export class TokenClient {
  private readonly http: AxiosInstance;
  private readonly retries: RetryPolicy;

  constructor(private readonly options: ResolvedOptions) {
    this.http = axios.create({
      baseURL: options.authBaseURL,
      timeout: options.tokenTimeoutMs,
      // A redirect could carry the Basic header or the refresh token to another origin: never follow one.
      maxRedirects: 0,
      // A token answer is a few hundred bytes; a huge one is a fault, not something to hold in memory.
      maxContentLength: MAX_ANSWER_BYTES,
      headers: { Accept: 'application/json' },
    });
    // axios.create() copies axios.defaults, and an application may have put its own Authorization there.
    for (const headers of Object.values(this.http.defaults.headers) as Array<Record<string, unknown>>) {
      if (typeof headers === 'object' && headers !== null) delete headers.Authorization;
    }
    // Every call that leaves, first tries and retries alike, spends the account's budget; past it, none leaves.
    this.http.interceptors.request.use((config) => {
      (config as AttemptConfig)[ATTEMPT]?.();
      return config;
    });
    this.retries = {
      retries: options.tokenRetries,
      delayMs: options.tokenRetryDelayMs,
      timeoutMs: options.tokenTimeoutMs,
    };
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
   * The login call of `account` (undefined: the default one); `outcome` is filled in as it goes. `gate` passes each
   * attempt, or refuses it.
   */
  login(
    credentials: Credentials,
    outcome: CallOutcome,
    account: string | undefined,
    gate: CallGate,
  ): Promise<ParsedTokens> {
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
      return this.call('login', { url, data, headers, params, withCredentials }, secrets, outcome, gate);
    }
    const basic = `Basic ${base64FromUtf8(`${credentials.username}:${credentials.password}`)}`;
    // The raw password too: an answer may quote what it was sent.
    const secrets = [basic, basic.slice(6), `${credentials.username}:${credentials.password}`, credentials.password];
    // With the refresh token in a cookie, the login is what sets it: cross-origin, that needs withCredentials.
    const withCredentials = this.options.refreshTokenInCookie;
    return this.call('login', { url, headers: { Authorization: basic }, withCredentials }, secrets, outcome, gate);
  }

  /**
   * The token call; `refreshToken` undefined when the refresh token lives in a cookie the plugin cannot see. `outcome`
   * is filled in as it goes; `gate` passes each attempt, or refuses it.
   */
  refresh(
    refreshToken: string | undefined,
    outcome: CallOutcome,
    account: string | undefined,
    gate: CallGate,
  ): Promise<ParsedTokens> {
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
    return this.call('refresh', config, secrets, outcome, gate);
  }

  /**
   * The logout call `logoutRequest` makes of `pair` (the pair held, or null), if it makes one: once, never retried,
   * outside the budget (it generates no token). `outcome` is filled in as it goes.
   */
  async logout(pair: TokenPair | null, outcome: CallOutcome, account: string | undefined): Promise<void> {
    const tokens = [pair?.access, pair?.refresh].filter((token): token is string => token !== undefined);
    let request: LogoutRequest | null | undefined;
    try {
      request = this.options.logoutRequest?.(pair, account);
    } catch (error) {
      throw error instanceof Error ? new Mask(tokens).copy(error) : error;
    }
    if (!request) return;
    const { path: url, data, headers, params, withCredentials = this.options.refreshTokenInCookie } = request;
    const secrets = [...tokens, ...secretsIn(data), ...secretsIn(headers), ...secretsIn(params)];
    await this.send('logout', { url, data, headers, params, withCredentials }, secrets, outcome, undefined);
  }

  /** Sends a call of `operation` and gives its answer; a failure as the TokenAuthError that names it. */
  private async send(
    operation: Operation,
    config: AxiosRequestConfig,
    sent: string[],
    outcome: CallOutcome,
    gate: CallGate | undefined,
  ): Promise<{ body: unknown; status: number }> {
    /** What the gate threw: the call fails with it as it is. */
    let refused: { error: unknown } | undefined;
    // Each attempt is a request of its own, so it has the whole `tokenTimeoutMs` and passes the gate anew.
    const attempt = async () => {
      const abort = new AbortController();
      const sent = this.http.request<unknown>({
        ...config,
        method: 'POST',
        signal: abort.signal,
        // A call the gate refuses throws here, before it leaves, and is no attempt; nor is any retry after it.
        [ATTEMPT]: () => {
          try {
            if (operation !== 'logout') gate?.pass(operation);
          } catch (error) {
            refused = { error };
            throw error;
          }
          outcome.attempts += 1;
        },
      } as AxiosRequestConfig);
      // axios' `timeout` is not enough: before 1.16 its Node adapter times a call without redirects from the socket
      // on, so a connection that never completes (a host that drops packets) waits for the system, minutes, not
      // `tokenTimeoutMs`. A clock of the plugin's own bounds every adapter alike, and ends the call as axios would.
      const answer = await settle(sent, { ms: this.options.tokenTimeoutMs });
      // With no signal to settle, a symbol can only be TIMED_OUT.
      if (typeof answer !== 'symbol') return answer;
      abort.abort();
      throw new AxiosError(`timeout of ${this.options.tokenTimeoutMs}ms exceeded`, AxiosError.ECONNABORTED, {
        method: 'post',
        url: config.url,
      } as InternalAxiosRequestConfig);
    };
    try {
      // The logout goes once: the tokens are dropped already, and a user waits for the sign-out.
      const retries = operation === 'logout' ? { ...this.retries, retries: 0 } : this.retries;
      const { data: body, status } = await withRetries(attempt, retries);
      outcome.status = status;
      return { body, status };
    } catch (error) {
      if (refused) throw refused.error;
      outcome.status = isAxiosError(error) ? error.response?.status : undefined;
      throw this.failure(operation, config, error, sent);
    }
  }

  private async call(
    operation: TokenOperation,
    config: AxiosRequestConfig,
    sent: string[],
    outcome: CallOutcome,
    gate: CallGate,
  ): Promise<ParsedTokens> {
    const where = `POST ${this.address(config)}`;
    const { body, status } = await this.send(operation, config, sent, outcome, gate);
    let parsed: ParsedTokens | null | undefined;
    let cause: unknown;
    try {
      parsed = this.options.parseTokens(body);
    } catch (error) {
      // A parser may quote the answer it could not read, and the answer may hold tokens.
      cause = error instanceof Error ? new Mask([...sent, ...stringsIn(body)]).copy(error) : undefined;
    }
    if (typeof parsed?.access !== 'string' || parsed.access === '') {
      throw new TokenAuthError(
        'TOKEN_RESPONSE_INVALID',
        `The token service answered ${where} with HTTP ${status} but no access token could be read from it (saw ${describeShape(body)}). ` +
          'If your service answers in another shape, pass `parseTokens`.',
        { cause, status },
      );
    }
    return parsed;
  }

  private failure(operation: Operation, config: AxiosRequestConfig, error: unknown, sent: string[]): TokenAuthError {
    if (error instanceof TokenAuthError) return error;
    const url = this.address(config);
    const where = `POST ${url}`;
    if (!isAxiosError(error)) {
      return new TokenAuthError('TOKEN_SERVICE_UNAVAILABLE', `${where} failed before reaching the token service.`, {
        cause: error,
      });
    }
    const response = error.response;
    const mask = new Mask([...sent, ...tokensIn(response?.data)]);
    const cause = mask.tokenCallError(error as AxiosError, url);
    // An answer over maxContentLength. Before 1.16, axios gives an answer cut short by the connection ("stream has been
    // aborted") the same code and no response either: that one is the service's outage, said below. Before 1.7.8 it
    // gives it the message of maxContentLength too, and only the length the answer declared tells them apart.
    if (
      response === undefined &&
      error.code === 'ERR_BAD_RESPONSE' &&
      error.message.includes('maxContentLength') &&
      !declaredWithin(error, MAX_ANSWER_BYTES)
    ) {
      return new TokenAuthError(
        'TOKEN_RESPONSE_INVALID',
        `The token service's answer to ${where} could not be read: ${cause.message}.`,
        { cause },
      );
    }
    // Before 1.16 the answer cut short by the connection comes with no response: it was reached all the same.
    if (response === undefined && error.code === 'ERR_BAD_RESPONSE') {
      return new TokenAuthError(
        'TOKEN_SERVICE_UNAVAILABLE',
        `The token service answered ${where} with an answer that was cut off (${error.code}).`,
        { cause },
      );
    }
    if (response === undefined) {
      const reason =
        error.code === 'ECONNABORTED' || error.code === 'ETIMEDOUT'
          ? `timed out after ${this.options.tokenTimeoutMs} ms`
          : `failed (${error.code ?? cause.message})`;
      return new TokenAuthError(
        'TOKEN_SERVICE_UNAVAILABLE',
        `The token service at ${hostAndPort(url)} could not be reached: ${where} ${reason}.${this.fromBaseURL()}`,
        { cause },
      );
    }
    const detail = detailOf(response.data, mask);
    const said = detail === undefined ? '' : `: "${detail}"`;
    // No such endpoint: a wrong address, which no credentials or refresh token would cure.
    if (response.status === 404 || response.status === 405) {
      const [what, path] = CALLS[operation];
      return new TokenAuthError(
        'TOKEN_ENDPOINT_NOT_FOUND',
        `The token service has no ${what} call at ${url} (HTTP ${response.status}${said}). ` +
          `Check \`authBaseURL\` and ${path}.${this.fromBaseURL()}`,
        { cause, status: response.status },
      );
    }
    if (isRefusal(response.status)) {
      const fix =
        operation === 'login'
          ? ' Check the `credentials`; the plugin will not retry them on its own during `loginCooldownMs`.'
          : '';
      return new TokenAuthError(
        REJECTED[operation],
        `The token service rejected the ${operation === 'refresh' ? 'refresh token' : operation} (${where}, HTTP ${response.status}${said}).${fix}`,
        {
          cause,
          status: response.status,
        },
      );
    }
    const what =
      response.status < 300
        ? `an answer that was cut off (${error.code ?? 'incomplete body'})`
        : response.status < 400
          ? 'a redirect, which is not followed for token calls'
          : 'an error';
    return new TokenAuthError(
      'TOKEN_SERVICE_UNAVAILABLE',
      `The token service answered ${where} with ${what} (HTTP ${response.status}${said}).`,
      {
        cause,
        status: response.status,
      },
    );
  }
}

/** The largest token answer read: a few hundred bytes is usual; a huge one is a fault, not something to hold. */
const MAX_ANSWER_BYTES = 1024 * 1024;

/**
 * Whether the answer that `error` ended declared a Content-Length within `max` (Node's adapter keeps the response it
 * was reading on its request), which an answer over `max` cannot have.
 */
function declaredWithin(error: AxiosError, max: number): boolean {
  const request = error.request as { res?: { headers?: Record<string, unknown> } } | undefined;
  const declared = Number(request?.res?.headers?.['content-length'] ?? Number.NaN);
  return Number.isFinite(declared) && declared <= max;
}

/** `host:port` of a URL, the port spelt out even when it is the scheme's own. */
function hostAndPort(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.hostname}:${parsed.port || (parsed.protocol === 'https:' ? '443' : '80')}`;
  } catch {
    return url;
  }
}
