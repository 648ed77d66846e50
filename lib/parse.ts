import { utf8FromBase64Url } from './base64.js';
import type { ParsedTokens, TokenPair } from './types.js';

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

/** The `exp` of a JWT in epoch milliseconds; undefined for opaque tokens. */
export function jwtExpiry(token: string): number | undefined {
  const parts = token.split('.');
  if (parts.length !== 3) return undefined;
  const payload = utf8FromBase64Url(parts[1]!);
  if (payload === undefined) return undefined;
  try {
    const exp = (JSON.parse(payload) as { exp?: unknown }).exp;
    return typeof exp === 'number' && Number.isFinite(exp) ? exp * 1000 : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The pair to keep from an answer: its expiry as the answer states it (`expires_in`, else a JWT's `exp`), else
 * `lifetimeMs` from now; the refresh token it brought, else the one it was renewed with.
 */
export function pairFromAnswer(
  parsed: ParsedTokens,
  previousRefresh: string | undefined,
  { now, lifetimeMs, marginMs }: { now: number; lifetimeMs: number; marginMs: number },
): TokenPair {
  const told = parsed.expiresIn !== undefined ? now + parsed.expiresIn * 1000 : jwtExpiry(parsed.access);
  // An expiry already within the margin on arrival means skewed clocks, a broken answer or a very short token:
  // renewing before sending would cost a token call per request, so such a token is renewed on its 401 only.
  const expiresAt = told === undefined ? now + lifetimeMs : told - marginMs > now ? told : undefined;
  const pair: TokenPair = { access: parsed.access };
  const refresh = parsed.refresh ?? previousRefresh;
  if (refresh !== undefined) pair.refresh = refresh;
  if (expiresAt !== undefined && Number.isFinite(expiresAt)) pair.expiresAt = expiresAt;
  return pair;
}
