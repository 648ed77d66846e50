// What the tests of the plugin against real OAuth2 servers (interop-oauth2-*.test.ts) share: whom the API saw behind
// each request, the token calls since a point, the answer an error keeps, and a secret or a private key in every
// spelling it travels in.
import type { KeyObject } from 'node:crypto';
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

/** Shorter than this, a line of Base64 could be found in any text by chance. */
const SHORTEST_PEM_LINE = 16;

/** The private members of a JWK: EC's and OKP's `d`, and RSA's `d` and CRT parameters (RFC 7518 §6.2.2, §6.3.2). */
const PRIVATE_JWK_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi'] as const;

/**
 * A client's private key in each form a user hands it over in, whichever form the test gave it in, and every
 * spelling a transport gives each part: its PKCS#8 PEM whole, the PEM's Base64 body on one line and each of its
 * lines (but a last one too short to tell from chance), and each private member of its JWK.
 */
export function privateKeySecrets(name: string, key: KeyObject): Secret[] {
  const pem = key.export({ type: 'pkcs8', format: 'pem' }) as string;
  const lines = pem.split('\n').filter((line) => !line.startsWith('-----'));
  const body = lines.join('');
  const jwk = key.export({ format: 'jwk' }) as Record<string, unknown>;
  return [
    ...spellingsOf(`${name} (PKCS#8 PEM)`, pem),
    ...spellingsOf(`${name} (PEM body)`, body),
    ...lines
      .filter((line) => line.length >= SHORTEST_PEM_LINE)
      .flatMap((line, index) => spellingsOf(`${name} (PEM line ${index + 1})`, line)),
    ...PRIVATE_JWK_MEMBERS.filter((member) => typeof jwk[member] === 'string').flatMap((member) =>
      spellingsOf(`${name} (JWK member ${member})`, jwk[member] as string),
    ),
  ];
}
