// The test secrets the leak scanner looks for (see scan-secrets.ts): the credentials and literals the tests use, every
// spelling a transport or a store gives a secret, token-shaped strings, and the places a store keeps them at rest.
import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { E2E_PASSWORD, E2E_USER } from '../../harness/account.js';
import { PASSWORD, USERNAME } from './credentials.js';

export interface Secret {
  /** What it is, without its value: printed in failures. */
  name: string;
  value: string;
}

/**
 * Credentials the tests use. Passwords too short or too ordinary to search for as text ('p', 'x', 'wrong',
 * 'changed') are covered by their Basic value, which is harvested from the login calls as they are sent.
 */
export const KNOWN_CREDENTIALS: ReadonlyArray<readonly [username: string, password: string]> = [
  [USERNAME, PASSWORD], // helpers/credentials.ts, the fake token service's account
  [E2E_USER, E2E_PASSWORD], // harness/account.ts, the emulator's account in end-to-end tests
  ['demo', 'demo-password'], // emulator default user, examples, demo
  ['jane', 's3cret'], // README
  ['jane', 'wr0ng: pässwort'], // secrets-errors.test.ts, a wrong password that is sent
  ['jane', 'a password changed elsewhere'], // rotation.test.ts, the service's new password
  ['42', 'hunter2-secret'], // options.test.ts, malformed credentials (username 42)
];

/** Other literal secrets the tests plant in token-service answers. */
export const KNOWN_LITERALS: readonly string[] = ['tok-9f8e7d6c-not-for-logs', 'sess-1a2b3c4d-not-for-logs'];

/** The base64 part of the Basic header the plugin sends for these credentials. */
export function basicOf(username: string, password: string): string {
  return Buffer.from(`${username}:${password}`, 'utf8').toString('base64');
}

/** The Basic header value the plugin sends for these credentials. */
export function basicHeader(username = USERNAME, password = PASSWORD): string {
  return `Basic ${basicOf(username, password)}`;
}

/** The password of these credentials and their Basic value (which the whole header contains). */
export function credentialSecrets(username: string, password: string): Secret[] {
  const who = JSON.stringify(username);
  return [
    { name: `password of ${who}`, value: password },
    { name: `Basic value of ${who}`, value: basicOf(username, password) },
  ];
}

/** RFC 6749 §2.3.1's spelling of a client id or secret before it is joined for Basic: form-encoded, space as `+`. */
export function formEncoded(value: string): string {
  return encodeURIComponent(value).replace(/%20/g, '+');
}

/**
 * Every spelling a transport gives `value`, written out here one by one (not by the library's own function, so that
 * a spelling it forgets is caught): as it is; JSON-escaped, as written and with every non-ASCII character escaped;
 * percent-encoded by encodeURIComponent, with a space as `%20` and as `+`, as a WHATWG form (URLSearchParams, and
 * axios's form serialisation) and as axios's query serialiser leaves `:`, `$`, `,`, `[` and `]`, each in upper and
 * lower case hex; Base64 and Base64url, padded and not.
 */
export function spellingsOf(name: string, value: string): Secret[] {
  const json = JSON.stringify(value).slice(1, -1);
  const asciiJson = json.replace(/[^\x20-\x7e]/g, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`);
  const percent = encodeURIComponent(value);
  const form = new URLSearchParams({ v: value }).toString().slice(2);
  const query = percent
    .replace(/%3A/g, ':')
    .replace(/%24/g, '$')
    .replace(/%2C/g, ',')
    .replace(/%20/g, '+')
    .replace(/%5B/g, '[')
    .replace(/%5D/g, ']');
  const lower = (text: string) => text.replace(/%[0-9A-F]{2}/g, (escape) => escape.toLowerCase());
  const base64 = Buffer.from(value, 'utf8').toString('base64');
  const base64url = Buffer.from(value, 'utf8').toString('base64url');
  const spellings: Array<[string, string]> = [
    ['as it is', value],
    ['JSON-escaped', json],
    ['JSON-escaped, ASCII only', asciiJson],
    ['percent-encoded', percent],
    ['percent-encoded, space as +', percent.replace(/%20/g, '+')],
    ['form-encoded', form],
    ['query-encoded by axios', query],
    ['percent-encoded, lower-case hex', lower(percent)],
    ['form-encoded, lower-case hex', lower(form)],
    ['query-encoded, lower-case hex', lower(query)],
    ['Base64', base64],
    ['Base64 unpadded', base64.replace(/=+$/, '')],
    ['Base64url', base64url],
  ];
  const unique = new Map<string, string>();
  for (const [how, spelling] of spellings) if (!unique.has(spelling)) unique.set(spelling, `${name} (${how})`);
  return [...unique].map(([spelling, label]) => ({ name: label, value: spelling }));
}

/** Shorter than this, a Base64 run cut out of a longer text could match by chance. */
const SHORTEST_BASE64_CORE = 16;

/**
 * Every spelling in which `value` can sit at rest, in what a store keeps (a Redis key's value, a file): those of
 * {@link spellingsOf}; hex of its UTF-8 bytes, lower and upper case; and Base64 and Base64url of it within a longer
 * text encoded at once (a whole record in Base64), at each of the three offsets where its bytes can start: the run of
 * characters that encodes its bytes alone, whatever comes before and after.
 */
export function atRestSpellingsOf(name: string, value: string): Secret[] {
  const bytes = Buffer.from(value, 'utf8');
  const hex = bytes.toString('hex');
  const spellings = [...spellingsOf(name, value)];
  const add = (how: string, spelling: string) => {
    if (!spellings.some((known) => known.value === spelling))
      spellings.push({ name: `${name} (${how})`, value: spelling });
  };
  add('hex', hex);
  add('hex, upper case', hex.toUpperCase());
  for (const offset of [0, 1, 2]) {
    const shifted = Buffer.concat([Buffer.alloc(offset), bytes]);
    // Past the group that holds the padding; up to the last whole group, which ends where the value's bytes end.
    const start = offset === 0 ? 0 : 4;
    const end = Math.floor(shifted.length / 3) * 4;
    for (const [how, encoding] of [
      ['Base64', 'base64'],
      ['Base64url', 'base64url'],
    ] as const) {
      const core = shifted.toString(encoding).slice(start, end);
      if (core.length >= SHORTEST_BASE64_CORE) add(`${how} at offset ${offset} of a longer text`, core);
    }
  }
  return spellings;
}

/** A place a store keeps something: a key, a file; `bytes` as read. */
export interface PlaceAtRest {
  where: string;
  bytes: Uint8Array | string;
}

/**
 * The secrets found at rest in `places`, in any of their spellings ({@link atRestSpellingsOf}), searched byte for byte:
 * one line per find, naming the place and the spelling, with no more of the secret than a short prefix.
 */
export function secretsAtRest(places: readonly PlaceAtRest[], secrets: readonly Secret[]): string[] {
  const spellings = secrets.flatMap((secret) => atRestSpellingsOf(secret.name, secret.value));
  const found: string[] = [];
  for (const { where, bytes } of places) {
    const buffer = typeof bytes === 'string' ? Buffer.from(bytes, 'utf8') : Buffer.from(bytes);
    for (const spelling of spellings)
      if (buffer.includes(Buffer.from(spelling.value, 'utf8')))
        found.push(`${where}: ${spelling.name} ${preview(spelling.value)}`);
  }
  return found;
}

/** The spellings of `user:secret`, joined as HTTP Basic joins them. */
export function pairSpellings(name: string, user: string, secret: string): Secret[] {
  return spellingsOf(name, `${user}:${secret}`);
}

/**
 * Everything of one test that must never reach the user: the password and Basic value of the credentials, every
 * token the service issued, and whatever else the test made the service say.
 */
export function secretsOf(
  service: { readonly issued: readonly string[] },
  extra: readonly string[] = [],
  [username, password]: readonly [string, string] = [USERNAME, PASSWORD],
): Secret[] {
  return [
    ...credentialSecrets(username, password),
    ...service.issued.map((value, index) => ({ name: `token #${index + 1} the service issued`, value })),
    ...extra.map((value) => ({ name: 'secret the test planted', value })),
  ].filter((secret) => secret.value !== '');
}

/** The secrets searched for as text: passwords, the base64 of username:password, and extra literals. */
export function literalSecrets(
  credentials: ReadonlyArray<readonly [string, string]> = KNOWN_CREDENTIALS,
  literals: readonly string[] = KNOWN_LITERALS,
  harvested: ReadonlyMap<string, string> = new Map(),
): Secret[] {
  const secrets = new Map<string, string>();
  for (const [username, password] of credentials) {
    for (const { name, value } of credentialSecrets(username, password))
      if (value !== password || isSearchablePassword(password)) secrets.set(value, name);
  }
  for (const literal of literals) secrets.set(literal, 'planted secret');
  for (const [value, name] of harvested) if (!secrets.has(value)) secrets.set(value, name);
  return [...secrets].map(([value, name]) => ({ name, value }));
}

/** Long and odd enough not to occur in ordinary text ("wrong", "password" and "changed" would). */
export function isSearchablePassword(password: string): boolean {
  return password.length >= 6 && /[^A-Za-z]/.test(password);
}

const BASE64URL_RUN = /[A-Za-z0-9_-]+(?:\.[A-Za-z0-9_-]*){2,}/g;
/** helpers/service.ts issues acc-<serial>-<nonce> and ref-<serial>-<nonce>. */
const FAKE_TOKEN = /(?<![A-Za-z0-9_-])(?:acc|ref)-\d+-[0-9a-z]{2,}/g;
/** lib/emulator issues acc_<36 hex> and ref_<48 hex>. */
const EMULATOR_TOKEN = /(?<![A-Za-z0-9_-])(?:acc|ref)_[0-9a-f]{16,}/g;
/** Any Basic credential; '[REDACTED]' cannot match (no '[' in base64), and decoding must give user:password. */
const BASIC_VALUE = /\bBasic\s+([A-Za-z0-9+/]{4,}={0,2})(?![A-Za-z0-9+/=])/g;

function isJwtHeader(segment: string): boolean {
  if (segment.length < 10) return false;
  try {
    const header: unknown = JSON.parse(Buffer.from(segment, 'base64url').toString('utf8'));
    return typeof header === 'object' && header !== null && !Array.isArray(header) && 'alg' in header;
  } catch {
    return false;
  }
}

/**
 * A private member of a JWK (`d`: 43 base64url characters for P-256 and Ed25519, hundreds for RSA, whose `p`, `q`, `dp`,
 * `dq` and `qi` are private too), as JSON, JSON-escaped JSON or `util.inspect` print it: a DPoP key, a client's key.
 */
const PRIVATE_JWK_MEMBER =
  /(?:\\?"(?:d|p|q|dp|dq|qi)\\?"\s*:\s*\\?"|\b(?:d|p|q|dp|dq|qi): ')([A-Za-z0-9_-]{43,})(?=\\?"|')/g;

/** A private key in PEM (PKCS#8, PKCS#1, SEC 1): its body is the secret, and each of its lines. */
const PRIVATE_KEY_PEM =
  /-----BEGIN (?:[A-Z]+ )*PRIVATE KEY-----((?:\\[rn]|[\s])+[\s\S]*?)-----END (?:[A-Z]+ )*PRIVATE KEY-----/g;

/** Token-shaped strings in a text: the test services' formats, JWTs, Basic values of user:password, private keys. */
export function tokenShapedIn(text: string): Secret[] {
  const found: Secret[] = [];
  for (const match of text.matchAll(PRIVATE_JWK_MEMBER)) found.push({ name: 'private JWK member', value: match[1]! });
  for (const match of text.matchAll(PRIVATE_KEY_PEM)) {
    // As printed (real line breaks) or JSON-escaped (`\n`): the lines of base64 are what a leak would show.
    for (const line of match[1]!.split(/\\[rn]|\s+/).filter((part) => part.length >= 16))
      found.push({ name: 'private key (PEM line)', value: line });
  }
  for (const match of text.matchAll(FAKE_TOKEN)) found.push({ name: 'token (acc-/ref-<n>-<nonce>)', value: match[0] });
  for (const match of text.matchAll(EMULATOR_TOKEN)) found.push({ name: 'token (acc_/ref_<hex>)', value: match[0] });
  for (const match of text.matchAll(BASIC_VALUE)) {
    const decoded = Buffer.from(match[1]!, 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    // A real encoding round-trips; "Basic auth" decodes to bytes that do not.
    if (
      colon > 0 &&
      Buffer.from(decoded, 'utf8').toString('base64').replace(/=+$/, '') === match[1]!.replace(/=+$/, '')
    ) {
      found.push({ name: 'Basic value (base64 of user:password)', value: match[1]! });
    }
  }
  for (const match of text.matchAll(BASE64URL_RUN)) {
    const segments = match[0].split('.');
    for (let i = 0; i + 2 < segments.length; i += 1) {
      if (segments[i + 1]!.length >= 2 && isJwtHeader(segments[i]!)) {
        found.push({ name: 'JWT', value: `${segments[i]}.${segments[i + 1]}.${segments[i + 2]}` });
        i += 2;
      }
    }
  }
  return found;
}

/** At most this much of a secret is printed. */
export function preview(secret: string): string {
  return `${JSON.stringify(secret.slice(0, Math.min(4, Math.floor(secret.length / 4))))}… (${secret.length} chars)`;
}

/** Every file under `folder`, byte for byte: what a file store keeps at rest, for {@link secretsAtRest}. */
export async function filesUnder(folder: string): Promise<PlaceAtRest[]> {
  const places: PlaceAtRest[] = [];
  for (const name of await readdir(folder, { recursive: true })) {
    const file = join(folder, name);
    if ((await stat(file)).isFile()) places.push({ where: file, bytes: await readFile(file) });
  }
  return places;
}
