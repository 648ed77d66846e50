import { utf8FromBase64Url } from './base64.js';

/** What a login or token answer yields once parsed. */
export interface ParsedTokens {
  /** The access token. */
  access: string;
  /** A new refresh token, when the service rotates them. */
  refresh?: string;
  /** Lifetime of the access token in seconds, when the answer says. */
  expiresIn?: number;
}

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
 * The default `parseTokens`: reads the seed's `{access, refresh}` and the real service's
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
