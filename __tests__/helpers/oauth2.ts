// What the tests of the plugin against real OAuth2 servers (interop-oauth2-*.test.ts) share: whom the API saw behind
// each request, the token calls since a point, the answer an error keeps, and a secret in every spelling it travels in.
import type { TokenCall } from '../../harness/oauth2/token-call.js';
import { basicOf, formEncoded, pairSpellings, spellingsOf } from './scan-secrets.js';
import type { Secret } from './scan-secrets.js';

/** Whom the API saw behind each request's token (the user, or the client for client_credentials). */
export function subjects(results: PromiseSettledResult<{ data: { subject: string } }>[]): unknown[] {
  return results.map((result) =>
    result.status === 'fulfilled' ? result.value.data.subject : (result.reason as unknown),
  );
}

/** A client secret or password, and the Basic value it travels in, for the leak checks. */
export function secretAndBasic(name: string, id: string, secret: string): Secret[] {
  return [
    { name, value: secret },
    { name: `Basic value of ${name}`, value: basicOf(id, secret) },
  ];
}

/**
 * A wrong secret in every spelling a transport gives it, and the pair it makes with the client id as the preset joins
 * it for Basic (each form-encoded, RFC 6749 §2.3.1).
 */
export function everySpelling(name: string, id: string, secret: string): Secret[] {
  return [...spellingsOf(name, secret), ...pairSpellings(`${name} in Basic`, formEncoded(id), formEncoded(secret))];
}

/** The token service's answer, as the error's cause keeps it for the caller. */
export function answerOf(error: unknown): unknown {
  return (error as { cause?: { response?: { data?: unknown } } }).cause?.response?.data;
}

/** What the token calls after the first `from` were, as the server recorded them. */
export function since(calls: TokenCall[], from: number): TokenCall[] {
  return calls.slice(from);
}
