import { AxiosHeaders } from 'axios';
import type { AxiosError, AxiosRequestConfig } from 'axios';
import { base64FromUtf8 } from './base64.js';

export const REDACTED = '[REDACTED]';

/** A body that is read as it is sent (a Node stream): it cannot be sent a second time. */
export function isStream(data: unknown): boolean {
  return typeof (data as { pipe?: unknown } | null)?.pipe === 'function';
}

/** Two hex digits that match in either case: a percent-encoding or a `\u` escape may be written either way. */
function hexPattern(code: number, digits: number): string {
  return code
    .toString(16)
    .padStart(digits, '0')
    .replace(/[a-f]/g, (digit) => `[${digit}${digit.toUpperCase()}]`);
}

const JSON_ESCAPES: Readonly<Record<string, string>> = {
  '"': '\\"',
  '\\': '\\\\',
  '/': '\\/',
  '\b': '\\b',
  '\f': '\\f',
  '\n': '\\n',
  '\r': '\\r',
  '\t': '\\t',
};

function literal(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
}

/** Characters that every encoder leaves as they are (RFC 3986's unreserved): a pattern needs no alternatives for them. */
const UNRESERVED = /^[A-Za-z0-9\-._~]$/;

/** One character of a secret, as any transport may write it: as it is, percent-encoded, `+` for a space, JSON-escaped. */
function characterPattern(char: string): string {
  if (UNRESERVED.test(char)) return char === '.' ? '\\.' : char;
  const ways = new Set([literal(char)]);
  ways.add([...new TextEncoder().encode(char)].map((byte) => `%${hexPattern(byte, 2)}`).join(''));
  if (char === ' ') ways.add('\\+');
  const escape = JSON_ESCAPES[char];
  if (escape !== undefined) ways.add(literal(escape));
  // A character outside the BMP is escaped as its surrogate pair.
  ways.add(Array.from({ length: char.length }, (_, index) => `\\\\u${hexPattern(char.charCodeAt(index), 4)}`).join(''));
  return `(?:${[...ways].join('|')})`;
}

/**
 * The one place that decides how a secret may be spelt where it surfaces: the pattern of `secret` as it is, JSON-escaped
 * (`\"`, `\u00fc`), percent-encoded (`%3A`, `%3a`, `+` or `%20` for a space, UTF-8 bytes), any mix of those (a form
 * encoder leaves `*` as it is, axios's query serialiser leaves `:`), and its Base64 and Base64url (an HTTP Basic value
 * is the Base64 of `user:password`, which the callers pass as a secret of its own; a JWT's parts are Base64url). The
 * Base64 spellings of secrets under four characters are left out: they would mask ordinary text.
 */
export function spellingsOf(secret: string): string {
  const ways = [[...secret].map(characterPattern).join('')];
  if ([...secret].length >= 4) {
    const base64 = base64FromUtf8(secret).replace(/=+$/, '');
    ways.push(literal(base64), literal(base64.replace(/\+/g, '-').replace(/\//g, '_')));
  }
  return ways.join('|');
}

/**
 * A set of secrets in every spelling ({@link spellingsOf}), compiled once: what masks text, plain data, request
 * configs and errors. Longer secrets are tried first, so that `user:password` goes whole rather than around the
 * password.
 */
export class Mask {
  private readonly pattern: RegExp | undefined;

  constructor(secrets: Iterable<string | undefined>) {
    const unique = [...new Set(secrets)].filter(
      (secret): secret is string => typeof secret === 'string' && secret !== '',
    );
    unique.sort((a, b) => b.length - a.length);
    this.pattern = unique.length === 0 ? undefined : new RegExp(unique.map(spellingsOf).join('|'), 'g');
  }

  text(text: string): string {
    return this.pattern === undefined ? text : text.replace(this.pattern, REDACTED);
  }

  /**
   * Plain data with every secret replaced in its strings. Anything else (a Date, a Buffer, a stream) is kept as it
   * is: it holds no secret of ours, and the config must stay usable for the caller's own retries.
   */
  data(value: unknown, depth = 0): unknown {
    if (typeof value === 'string') return this.text(value);
    if (typeof value !== 'object' || value === null || depth > 8) return value;
    if (Array.isArray(value)) return value.map((item) => this.data(item, depth + 1));
    if (value instanceof URLSearchParams) return new URLSearchParams(this.text(value.toString()));
    const proto: unknown = Object.getPrototypeOf(value);
    if (proto !== Object.prototype && proto !== null) return value;
    // Keys too: a server that parses a body as the wrong kind of form makes the whole body a key.
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [this.text(key), this.data(item, depth + 1)]));
  }

  /**
   * A copy of `error` with the same prototype (so `instanceof`, `isAxiosError` and `isCancel` still hold) and every
   * own string property masked, whatever its key or writability: axios keeps the cause's stack under a non-writable
   * symbol. Plain objects and arrays on it are masked in depth. Its `cause` chain is copied the same way.
   */
  copy<E extends object>(error: E, depth = 0): E {
    const copy = Object.create(Object.getPrototypeOf(error) as object | null) as E;
    for (const key of Reflect.ownKeys(error)) {
      const descriptor = Object.getOwnPropertyDescriptor(error, key)!;
      let value: unknown = 'value' in descriptor ? descriptor.value : (error as Record<PropertyKey, unknown>)[key];
      if (typeof value === 'string') value = this.text(value);
      else if (key === 'cause' && value instanceof Error) value = depth < 4 ? this.copy(value, depth + 1) : undefined;
      // A client library's own detail, such as the command and arguments ioredis puts on its errors.
      else if (typeof value === 'object' && value !== null && !(value instanceof Error)) value = this.data(value);
      Object.defineProperty(copy, key, {
        value,
        writable: true,
        enumerable: descriptor.enumerable ?? false,
        configurable: true,
      });
    }
    return copy;
  }

  /**
   * The error of a request the app sent, made safe to hand back while its config stays usable (sending it again
   * through the instance gets the current token): `Authorization` values and `auth` passwords masked, every secret
   * replaced in the config, message, stack, causes and answer, and the raw request (Node's ClientRequest keeps the
   * headers as sent) replaced by a description of it. Returns a copy; `error` itself is left as it was.
   */
  axiosError<E extends AxiosError>(error: E): E {
    const config = error.config && this.config(error.config);
    return this.withRequest(error, config);
  }

  /**
   * The error of a login or token call, as the caller gets it in `cause`: the status, the answer (masked) and
   * `{ method, url }` with the URL given (its query left out by the caller), and nothing of what was sent (body,
   * headers, query, `auth`): those are the plugin's business, and masking cannot know every way a body spells a
   * secret.
   */
  tokenCallError<E extends AxiosError>(error: E, url: string): E {
    const config = { method: error.config?.method ?? 'post', url } as NonNullable<E['config']>;
    return this.withRequest(error, config);
  }

  private withRequest<E extends AxiosError>(error: E, config: E['config']): E {
    const copy = this.copy(error);
    const request =
      error.request === undefined
        ? undefined
        : { redacted: true, method: config?.method?.toUpperCase(), url: config?.url };
    copy.config = config;
    copy.request = request;
    if (error.response) {
      copy.response = {
        ...error.response,
        headers: this.headers(error.response.headers) as typeof error.response.headers,
        config: config ?? error.response.config,
        request,
        // An endpoint may echo what it was sent, token included.
        data: this.data(error.response.data),
      };
    }
    return copy;
  }

  private headers(headers: AxiosRequestConfig['headers']): AxiosHeaders {
    const masked = new AxiosHeaders(headers as AxiosHeaders);
    for (const [name, value] of Object.entries(masked.toJSON())) {
      // Keep the scheme ("Bearer"), mask the credential, whatever it is; a value without a scheme goes whole.
      if (/^(authorization|proxy-authorization)$/i.test(name))
        masked.set(name, `${typeof value === 'string' ? (/^\S+\s/.exec(value)?.[0] ?? '') : ''}${REDACTED}`);
      // A cookie may be the refresh token itself (a session forwarded by a server, or set by a login): it goes whole.
      else if (/^(cookie|set-cookie)$/i.test(name)) masked.set(name, REDACTED);
      else if (typeof value === 'string') masked.set(name, this.text(value));
    }
    return masked;
  }

  private config<C extends AxiosRequestConfig>(config: C): C {
    const copy: C = { ...config, headers: this.headers(config.headers) };
    if (typeof config.url === 'string') copy.url = this.text(config.url);
    if (config.params !== undefined) copy.params = this.data(config.params);
    // A stream body keeps a reference to the request it was piped into, headers and all; it cannot be sent again.
    if (config.data !== undefined) copy.data = isStream(config.data) ? REDACTED : this.data(config.data);
    if (config.auth) copy.auth = { username: config.auth.username, password: REDACTED };
    return copy;
  }
}

/**
 * The secrets one attachment has held, newest last, to mask wherever they could surface: the last few pairs, for the
 * errors of requests that outlived their token.
 */
export class SecretList {
  private readonly values: string[] = [];
  /** Compiled when first needed after a change: most pairs are never masked in anything. */
  private compiled: Mask | undefined;

  constructor(private readonly capacity = 16) {}

  /** Remembers the tokens of a pair; true when its access token was already known (a pair that came back). */
  remember(pair: { access: string; refresh?: string | undefined }): boolean {
    const known = this.values.includes(pair.access);
    const before = this.values.length;
    for (const secret of [pair.access, pair.refresh])
      if (secret && !this.values.includes(secret)) this.values.push(secret);
    if (this.values.length !== before) {
      this.values.splice(0, Math.max(0, this.values.length - this.capacity));
      this.compiled = undefined;
    }
    return known;
  }

  private get current(): Mask {
    return (this.compiled ??= new Mask(this.values));
  }

  mask(text: string): string {
    return this.current.text(text);
  }

  /** A copy of an error of ours or a user's function, its strings masked. */
  copy<E extends object>(error: E): E {
    return this.current.copy(error);
  }

  /** An axios error of the app's request made safe to hand to the caller; see {@link Mask.axiosError}. */
  axiosError<E extends AxiosError>(error: E): E {
    return this.current.axiosError(error);
  }
}
