import { utf8FromBase64Url } from '../support/base64.js';
import type { ParsedTokens } from '../contract/calls.js';
import type { TokenPair } from '../contract/store.js';

const ACCESS_KEYS = ['access', 'access_token', 'accessToken'] as const;
const REFRESH_KEYS = ['refresh', 'refresh_token', 'refreshToken'] as const;
const EXPIRES_KEYS = ['expires_in', 'expiresIn'] as const;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function firstString(record: Record<string, unknown>, keys: readonly string[]): string | undefined {
  for (const key of keys) {
    const value = record[key];
    if (typeof value === 'string' && value !== '') return value;
  }
  return undefined;
}

/**
 * The default `parseTokens`: reads the documented login answer `{access, refresh}` and the real service's
 * `{status, data: {access_token, refresh_token}}`, in snake, camel or short spelling, at the top level or
 * under `data`, with `expires_in` in seconds when present.
 */
export function parseTokenBody(body: unknown): ParsedTokens | undefined {
  if (!isRecord(body)) return undefined;
  for (const record of isRecord(body.data) ? [body, body.data] : [body]) {
    const access = firstString(record, ACCESS_KEYS);
    if (access === undefined) continue;
    const parsed: ParsedTokens = { access };
    const refresh = firstString(record, REFRESH_KEYS);
    if (refresh !== undefined) parsed.refresh = refresh;
    const expiresIn = EXPIRES_KEYS.map((key) => Number(record[key])).find((n) => Number.isFinite(n) && n > 0);
    if (expiresIn !== undefined) parsed.expiresIn = expiresIn;
    return parsed;
  }
  return undefined;
}

/** The `token_type` an answer states (at the top level or under `data`), if it states one. */
export function tokenTypeOf(body: unknown): string | undefined {
  if (!isRecord(body)) return undefined;
  const record = isRecord(body.data) ? body.data : body;
  return firstString(record, ['token_type', 'tokenType']) ?? firstString(body, ['token_type', 'tokenType']);
}

/** Names the shape of an answer (its keys, one level into objects) without any of its values. */
export function describeShape(body: unknown): string {
  if (typeof body === 'string') return `a text of ${body.length} characters, not a JSON object`;
  if (!isRecord(body))
    return body === null || body === undefined
      ? 'an empty body'
      : `a JSON ${Array.isArray(body) ? 'array' : typeof body}`;
  const keys = Object.keys(body).flatMap((key) => {
    const value = body[key];
    return isRecord(value) ? Object.keys(value).map((inner) => `${key}.${inner}`) : [key];
  });
  return keys.length === 0
    ? 'an empty JSON object'
    : `keys ${keys.slice(0, 20).join(', ')}${keys.length > 20 ? ', …' : ''}`;
}

/** A JWT's `exp` and `iat` in epoch milliseconds, those it has; nothing for an opaque token. */
export function jwtTimes(token: string): { expiresAt?: number; issuedAt?: number } {
  const parts = token.split('.');
  if (parts.length !== 3) return {};
  const payload = utf8FromBase64Url(parts[1]!);
  if (payload === undefined) return {};
  let claims: { exp?: unknown; iat?: unknown };
  try {
    claims = JSON.parse(payload) as { exp?: unknown; iat?: unknown };
  } catch {
    return {};
  }
  const times: { expiresAt?: number; issuedAt?: number } = {};
  if (typeof claims?.exp === 'number' && Number.isFinite(claims.exp)) times.expiresAt = claims.exp * 1000;
  if (typeof claims?.iat === 'number' && Number.isFinite(claims.iat)) times.issuedAt = claims.iat * 1000;
  return times;
}

/**
 * How long a token lives, for its margin: a JWT's `exp - iat` when it has both (the issuer's own account, whatever our
 * clock says), else the time left until `expiresAt`. The one rule for judging an answer and a held pair alike.
 */
export function lifetimeOf(access: string, expiresAt: number, now: number): number {
  const { expiresAt: exp, issuedAt } = jwtTimes(access);
  return exp !== undefined && issuedAt !== undefined ? exp - issuedAt : expiresAt - now;
}

/**
 * The pair to keep from an answer: its expiry as the answer states it (`expires_in`, else a JWT's `exp`), else
 * `lifetimeMs` from now; the refresh token it brought, else the one it was renewed with.
 */
export function pairFromAnswer(
  parsed: ParsedTokens,
  previousRefresh: string | undefined,
  { now, lifetimeMs, marginFor }: { now: number; lifetimeMs: number; marginFor: (lifetimeMs: number) => number },
): TokenPair {
  const told = parsed.expiresIn !== undefined ? now + parsed.expiresIn * 1000 : jwtTimes(parsed.access).expiresAt;
  // An expiry already within the margin on arrival means skewed clocks, a broken answer or a very short token:
  // renewing before sending would cost a token call per request, so such a token is renewed on its 401 only.
  const expiresAt =
    told === undefined
      ? now + lifetimeMs
      : told - marginFor(lifetimeOf(parsed.access, told, now)) > now
        ? told
        : undefined;
  const pair: TokenPair = { access: parsed.access };
  const refresh = parsed.refresh ?? previousRefresh;
  if (refresh !== undefined) pair.refresh = refresh;
  if (expiresAt !== undefined && Number.isFinite(expiresAt)) pair.expiresAt = expiresAt;
  return pair;
}

/** A stored pair with the expiry its JWT states, when the store kept none (a custom store, an older record). */
export function withJwtExpiry(pair: TokenPair): TokenPair {
  if (pair.expiresAt !== undefined) return pair;
  const { expiresAt } = jwtTimes(pair.access);
  return expiresAt === undefined ? pair : { ...pair, expiresAt };
}
