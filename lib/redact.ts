import { AxiosHeaders } from 'axios';
import type { AxiosError, AxiosRequestConfig } from 'axios';

export const REDACTED = '[REDACTED]';

/** A body that is read as it is sent (a Node stream): it cannot be sent a second time. */
export function isStream(data: unknown): boolean {
  return typeof (data as { pipe?: unknown } | null)?.pipe === 'function';
}

export function redactText(text: string, secrets: readonly string[]): string {
  let result = text;
  for (const secret of secrets)
    if (secret !== '' && result.includes(secret)) result = result.split(secret).join(REDACTED);
  return result;
}

/**
 * Plain data with every secret replaced in its strings. Anything else (a Date, a Buffer, a stream) is kept as it
 * is: it holds no secret of ours, and the config must stay usable for the caller's own retries.
 */
function scrub(value: unknown, secrets: readonly string[], depth = 0): unknown {
  if (typeof value === 'string') return redactText(value, secrets);
  if (typeof value !== 'object' || value === null || depth > 8) return value;
  if (Array.isArray(value)) return value.map((item) => scrub(item, secrets, depth + 1));
  if (value instanceof URLSearchParams) return new URLSearchParams(redactText(value.toString(), secrets));
  const proto: unknown = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) return value;
  return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, scrub(item, secrets, depth + 1)]));
}

function redactConfig<C extends AxiosRequestConfig>(config: C, secrets: readonly string[]): C {
  const headers = new AxiosHeaders(config.headers as AxiosHeaders);
  for (const [name, value] of Object.entries(headers.toJSON())) {
    if (typeof value !== 'string') continue;
    // Keep the scheme ("Bearer"), mask the credential, whatever it is; a value without a scheme goes whole.
    if (/^(authorization|proxy-authorization)$/i.test(name))
      headers.set(name, `${/^\S+\s/.exec(value)?.[0] ?? ''}${REDACTED}`);
    // A cookie may be the refresh token itself (a session forwarded by a server): it goes whole.
    else if (/^(cookie|set-cookie)$/i.test(name)) headers.set(name, REDACTED);
    else headers.set(name, redactText(value, secrets));
  }
  const copy: C = { ...config, headers };
  if (typeof config.url === 'string') copy.url = redactText(config.url, secrets);
  if (config.params !== undefined) copy.params = scrub(config.params, secrets);
  // A stream body keeps a reference to the request it was piped into, headers and all; it cannot be sent again.
  if (config.data !== undefined) copy.data = isStream(config.data) ? REDACTED : scrub(config.data, secrets);
  if (config.auth) copy.auth = { username: config.auth.username, password: REDACTED };
  return copy;
}

/**
 * A copy of `error` with the same prototype (so `instanceof`, `isAxiosError` and `isCancel` still hold) and every
 * own string property redacted, whatever its key or writability: axios keeps the cause's stack under a
 * non-writable symbol. Plain objects and arrays on it are redacted in depth. Its `cause` chain is copied the same way.
 */
export function redactedCopy<E extends object>(error: E, secrets: readonly string[], depth = 0): E {
  const copy = Object.create(Object.getPrototypeOf(error) as object | null) as E;
  for (const key of Reflect.ownKeys(error)) {
    const descriptor = Object.getOwnPropertyDescriptor(error, key)!;
    let value: unknown = 'value' in descriptor ? descriptor.value : (error as Record<PropertyKey, unknown>)[key];
    if (typeof value === 'string') value = redactText(value, secrets);
    else if (key === 'cause' && value instanceof Error)
      value = depth < 4 ? redactedCopy(value, secrets, depth + 1) : undefined;
    // A client library's own detail, such as the command and arguments ioredis puts on its errors.
    else if (typeof value === 'object' && value !== null && !(value instanceof Error)) value = scrub(value, secrets);
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
 * Makes an axios error safe to hand to users: `Authorization` values and `auth` passwords are masked, every known
 * secret is replaced in the config, message, stack, causes and answer body, and the raw
 * request (Node's ClientRequest keeps the headers as sent) is replaced by a description of it. Returns a copy;
 * `error` itself is left as it was.
 */
export function redactAxiosError<E extends AxiosError>(error: E, secrets: readonly string[]): E {
  const copy = redactedCopy(error, secrets);
  const config = error.config && redactConfig(error.config, secrets);
  const request =
    error.request === undefined
      ? undefined
      : { redacted: true, method: config?.method?.toUpperCase(), url: config?.url };
  copy.config = config;
  copy.request = request;
  if (error.response) {
    copy.response = {
      ...error.response,
      config: config ?? error.response.config,
      request,
      // An endpoint may echo what it was sent, token included.
      data: scrub(error.response.data, secrets),
    };
  }
  return copy;
}

/**
 * The secrets one attachment has held, newest last, to mask wherever they could surface: the last few pairs, for the
 * errors of requests that outlived their token.
 */
export class SecretList {
  private readonly values: string[] = [];

  constructor(private readonly capacity = 16) {}

  /** Remembers the tokens of a pair; true when its access token was already known (a pair that came back). */
  remember(pair: { access: string; refresh?: string | undefined }): boolean {
    const known = this.values.includes(pair.access);
    for (const secret of [pair.access, pair.refresh])
      if (secret && !this.values.includes(secret)) this.values.push(secret);
    this.values.splice(0, Math.max(0, this.values.length - this.capacity));
    return known;
  }

  mask(text: string): string {
    return redactText(text, this.values);
  }

  /** A copy of an error of ours or a user's function, its strings masked. */
  copy<E extends object>(error: E): E {
    return redactedCopy(error, this.values);
  }

  /** An axios error made safe to hand to the caller; see {@link redactAxiosError}. */
  axiosError<E extends AxiosError>(error: E): E {
    return redactAxiosError(error, this.values);
  }
}
