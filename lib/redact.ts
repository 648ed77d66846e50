import { AxiosHeaders } from 'axios';
import type { AxiosError, AxiosRequestConfig } from 'axios';

export const REDACTED = '[REDACTED]';

export function redactText(text: string, secrets: readonly string[]): string {
  let result = text;
  for (const secret of secrets) if (secret !== '' && result.includes(secret)) result = result.split(secret).join(REDACTED);
  return result;
}

/** Copies plain data with every secret replaced in its strings. Anything that is not plain data is dropped. */
function scrub(value: unknown, secrets: readonly string[], depth = 0): unknown {
  if (typeof value === 'string') return redactText(value, secrets);
  if (typeof value !== 'object' || value === null) return value;
  if (depth > 8) return REDACTED;
  if (Array.isArray(value)) return value.map((item) => scrub(item, secrets, depth + 1));
  const proto: unknown = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) return value instanceof URLSearchParams ? new URLSearchParams(redactText(value.toString(), secrets)) : REDACTED;
  return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, scrub(item, secrets, depth + 1)]));
}

function redactConfig<C extends AxiosRequestConfig>(config: C, secrets: readonly string[]): C {
  const headers = new AxiosHeaders(config.headers as AxiosHeaders);
  for (const [name, value] of Object.entries(headers.toJSON())) {
    if (typeof value === 'string' && /^(authorization|proxy-authorization)$/i.test(name)) headers.set(name, value.replace(/^(\S+\s).*$/s, `$1${REDACTED}`));
    else if (typeof value === 'string') headers.set(name, redactText(value, secrets));
  }
  const copy: C = { ...config, headers };
  if (typeof config.url === 'string') copy.url = redactText(config.url, secrets);
  if (config.params !== undefined) copy.params = scrub(config.params, secrets);
  if (typeof config.data === 'string') copy.data = redactText(config.data, secrets);
  if (config.auth) copy.auth = { username: config.auth.username, password: REDACTED };
  return copy;
}

/**
 * Makes an axios error safe to hand to users: `Authorization` values and `auth` passwords are masked, every
 * known secret is replaced in the config, message and (for token calls) the answer body, and the raw request
 * (Node's ClientRequest keeps the headers as sent) is replaced by a description of it. Mutates and returns
 * `error`, which must be one that no one else holds yet.
 */
export function redactAxiosError<E extends AxiosError>(error: E, secrets: readonly string[], options: { scrubBody?: boolean } = {}): E {
  const config = error.config && redactConfig(error.config, secrets);
  const request = error.request === undefined ? undefined : { redacted: true, method: config?.method?.toUpperCase(), url: config?.url };
  error.config = config;
  error.request = request;
  error.message = redactText(error.message, secrets);
  if (error.stack) error.stack = redactText(error.stack, secrets);
  if (error.response) {
    error.response = {
      ...error.response,
      config: config ?? error.response.config,
      request,
      data: options.scrubBody ? scrub(error.response.data, secrets) : error.response.data,
    };
  }
  return error;
}
