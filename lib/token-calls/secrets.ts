// What a login, token or logout call carries that is secret, and what of an answer may be a token: the strings the
// token client masks in what its errors say and keep as their cause.
import { utf8FromBase64Url } from '../support/base64.js';

/**
 * A Basic header's secrets: the header, its value, and what it decodes to (`id:secret`, the secret alone, and the
 * secret form-decoded, as OAuth2 clients join them), since a service may quote any of them back.
 */
export function basicSecrets(header: string): string[] {
  const value = header.slice('Basic '.length).trim();
  const decoded = utf8FromBase64Url(value) ?? '';
  const secret = decoded.slice(decoded.indexOf(':') + 1);
  let formDecoded = secret;
  try {
    formDecoded = decodeURIComponent(secret.replace(/\+/g, ' '));
  } catch {
    // Not form-encoded: the secret as it is is already listed.
  }
  return [header, value, decoded, secret, formDecoded];
}

/** Names under which a request carries a secret: a password, a client secret, a token, a key, an assertion. */
const SECRET_NAME = /pass|secret|token|key|assertion|code|credential|auth|refresh|access|cookie/i;

/** The strings under names that match `names`, in objects, arrays and forms, at any depth. */
function valuesUnder(value: unknown, names: RegExp, name = ''): string[] {
  if (typeof value === 'string') return name !== '' && names.test(name) && value !== '' ? [value] : [];
  // A form: URLSearchParams, or FormData (whose file fields hold no text of ours).
  if (value instanceof URLSearchParams || (typeof FormData !== 'undefined' && value instanceof FormData))
    return [...(value as unknown as Iterable<[string, unknown]>)].flatMap(([key, item]) =>
      valuesUnder(item, names, key),
    );
  if (typeof value !== 'object' || value === null) return [];
  return Object.entries(value).flatMap(([key, item]) => valuesUnder(item, names, key));
}

/**
 * The secrets a request carries, to mask: values under secret-looking names in a body object, a form, headers or
 * query parameters, and a text body whole. Other values (`grant_type=password`, a scope) stay readable.
 */
export function secretsIn(value: unknown): string[] {
  if (typeof value !== 'string') return valuesUnder(value, SECRET_NAME);
  return value.length >= 4 ? [value, ...valuesUnder(formOf(value), SECRET_NAME)] : [];
}

/** A form-encoded text as a form, to find its secret fields; none for other texts. */
function formOf(text: string): URLSearchParams | undefined {
  return /^[^=&\s]+=[^&]*(&[^=&\s]+=[^&]*)*$/.test(text) ? new URLSearchParams(text) : undefined;
}

/** Token-like strings in an answer body: values under keys that name a token (not `code`, an error's name there). */
export function tokensIn(body: unknown): string[] {
  return valuesUnder(body, /token|access|refresh/i);
}

/** Every string in an answer long enough to be a token, for redacting what a custom parser may quote of it. */
export function stringsIn(body: unknown): string[] {
  if (typeof body === 'string') return body.length >= 8 ? [body] : [];
  if (typeof body !== 'object' || body === null) return [];
  return Object.values(body).flatMap(stringsIn);
}
