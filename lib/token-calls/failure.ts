// What a failed login, token or logout call says: one TokenAuthError whose code a caller switches on and whose message
// names the call and what to do, with nothing the plugin sent in it (the cause keeps the answer, masked).
import { isAxiosError } from 'axios';
import type { AxiosError } from 'axios';
import { TokenAuthError } from '../contract/errors.js';
import type { TokenAuthErrorCode } from '../contract/errors.js';
import type { TokenOperation } from '../contract/store.js';
import { Mask } from '../support/redact.js';
import { tokensIn } from './secrets.js';

/** The calls the client makes: the two that generate a token, and the logout. */
export type Operation = TokenOperation | 'logout';

/** Where a call went and how it was set up, for its message. */
export interface CallPlace {
  operation: Operation;
  /** The call's URL, without query or userinfo. */
  url: string;
  /** Its `tokenTimeoutMs`. */
  timeoutMs: number;
  /** What the message adds when no `authBaseURL` was given (or nothing). */
  fromBaseURL: string;
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

/** The largest token answer read: a few hundred bytes is usual; a huge one is a fault, not something to hold. */
export const MAX_ANSWER_BYTES = 1024 * 1024;

/**
 * The TokenAuthError of a call at `place` that failed with `error`, having sent `sent` (every spelling of which is
 * masked in what the error keeps).
 */
export function callFailure(place: CallPlace, error: unknown, sent: string[]): TokenAuthError {
  if (error instanceof TokenAuthError) return error;
  const where = `POST ${place.url}`;
  if (!isAxiosError(error))
    return new TokenAuthError('TOKEN_SERVICE_UNAVAILABLE', `${where} failed before reaching the token service.`, {
      cause: error,
    });
  const response = error.response;
  const mask = new Mask([...sent, ...tokensIn(response?.data)]);
  const cause = mask.tokenCallError(error, place.url);
  if (response === undefined) return unanswered(place, error, cause);
  const detail = detailOf(response.data, mask);
  const said = detail === undefined ? '' : `: "${detail}"`;
  const { status } = response;
  // No such endpoint: a wrong address, which no credentials or refresh token would cure.
  if (status === 404 || status === 405) {
    const [what, path] = CALLS[place.operation];
    return new TokenAuthError(
      'TOKEN_ENDPOINT_NOT_FOUND',
      `The token service has no ${what} call at ${place.url} (HTTP ${status}${said}). ` +
        `Check \`authBaseURL\` and ${path}.${place.fromBaseURL}`,
      { cause, status },
    );
  }
  if (isRefusal(status)) {
    const { operation } = place;
    const fix =
      operation === 'login'
        ? ' Check the `credentials`; the plugin will not retry them on its own during `loginCooldownMs`.'
        : '';
    const what = operation === 'refresh' ? 'refresh token' : operation;
    return new TokenAuthError(
      REJECTED[operation],
      `The token service rejected the ${what} (${where}, HTTP ${status}${said}).${fix}`,
      { cause, status },
    );
  }
  const what =
    status < 300
      ? `an answer that was cut off (${error.code ?? 'incomplete body'})`
      : status < 400
        ? 'a redirect, which is not followed for token calls'
        : 'an error';
  return new TokenAuthError(
    'TOKEN_SERVICE_UNAVAILABLE',
    `The token service answered ${where} with ${what} (HTTP ${status}${said}).`,
    {
      cause,
      status,
    },
  );
}

/**
 * A call that ended with no answer: too large to read, cut off, unreachable or out of time. Before 1.16 axios gives an
 * answer cut short by the connection ("stream has been aborted") the same code as one over `maxContentLength`, and no
 * response either; before 1.7.8 the message of maxContentLength too, and only the length the answer declared tells
 * them apart.
 */
function unanswered(place: CallPlace, error: AxiosError, cause: Error): TokenAuthError {
  const where = `POST ${place.url}`;
  if (error.code === 'ERR_BAD_RESPONSE') {
    if (error.message.includes('maxContentLength') && !declaredWithin(error, MAX_ANSWER_BYTES))
      return new TokenAuthError(
        'TOKEN_RESPONSE_INVALID',
        `The token service's answer to ${where} could not be read: ${cause.message}.`,
        { cause },
      );
    // The answer cut short by the connection: the service was reached all the same, and is failing.
    return new TokenAuthError(
      'TOKEN_SERVICE_UNAVAILABLE',
      `The token service answered ${where} with an answer that was cut off (${error.code}).`,
      { cause },
    );
  }
  const reason =
    error.code === 'ECONNABORTED' || error.code === 'ETIMEDOUT'
      ? `timed out after ${place.timeoutMs} ms`
      : `failed (${error.code ?? cause.message})`;
  return new TokenAuthError(
    'TOKEN_SERVICE_UNAVAILABLE',
    `The token service at ${hostAndPort(place.url)} could not be reached: ${where} ${reason}.${place.fromBaseURL}`,
    { cause },
  );
}

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
