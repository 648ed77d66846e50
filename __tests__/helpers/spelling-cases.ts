// The cases of the property of secret-spellings-*.test.ts: every way a secret travels to the token service (a
// transport, set up as a user would write it) × every way the call can fail (an outcome), and secrets drawn from the
// whole of Unicode, the characters that encodings change weighted in; and every spelling of a case's secrets, as the
// test itself spells them (not as the library does).
import fc from 'fast-check';
import type { TokenAuthOptions } from '../../lib/index.js';
import { oauth2ClientCredentials, oauth2Password } from '../../lib/presets.js';
import { formEncoded, pairSpellings, spellingsOf } from './scan-secrets.js';
import type { Secret } from './scan-secrets.js';

/** How many cases a property runs: SPELLING_RUNS=2000 for a longer run. */
export const RUNS = Number(process.env.SPELLING_RUNS ?? 300);

export const LOGIN = '/auth/login';
export const TOKEN = '/auth/token';
export const USER = 'jane';
/** The password of the logins that must succeed (refresh-token rows): known, and checked too. */
export const GOOD_PASSWORD = 'good-Pa55word-for-refresh-rows';

/** How the secret travels: in a login (the password, or an OAuth2 client secret) or in a token call (the refresh token). */
export const TRANSPORTS = [
  'login: Basic header',
  'login: JSON object',
  'login: JSON string',
  'login: form object serialised by axios',
  'login: form string',
  'login: URLSearchParams',
  'login: query params',
  'login: multipart FormData',
  'login: oauth2Password() form',
  'login: oauth2 client secret in the form',
  'login: oauth2 client secret in Basic',
  'login: oauth2ClientCredentials() client secret',
  'refresh: JSON body',
  'refresh: form body',
  'refresh: header',
  'refresh: cookie',
  'data: Bearer header',
  'data: custom header',
  'data: query param',
] as const;
export type Transport = (typeof TRANSPORTS)[number];

/** What the token service does with the call that carries the secret. */
export const OUTCOMES = [
  '401',
  '400 echoing the request',
  '500 echoing the request',
  'network error',
  'timeout',
  'redirect',
] as const;
export type Outcome = (typeof OUTCOMES)[number];

export type Role = 'login' | 'refresh' | 'data';

/** Which call carries the secret: a login (the password, a client secret), a token call (the refresh token) or a
 * request of the app (the access token, put on by the plugin). */
export function roleOf(transport: Transport): Role {
  return transport.split(':')[0] as Role;
}

/** The code of the failure the call under test causes; a data request's error reaches the caller as axios's own. */
export const CODES: Record<Outcome, Record<'login' | 'refresh', string>> = {
  '401': { login: 'LOGIN_REJECTED', refresh: 'REFRESH_REJECTED' },
  '400 echoing the request': { login: 'LOGIN_REJECTED', refresh: 'REFRESH_REJECTED' },
  '500 echoing the request': { login: 'TOKEN_SERVICE_UNAVAILABLE', refresh: 'TOKEN_SERVICE_UNAVAILABLE' },
  'network error': { login: 'TOKEN_SERVICE_UNAVAILABLE', refresh: 'TOKEN_SERVICE_UNAVAILABLE' },
  timeout: { login: 'TOKEN_SERVICE_UNAVAILABLE', refresh: 'TOKEN_SERVICE_UNAVAILABLE' },
  redirect: { login: 'TOKEN_SERVICE_UNAVAILABLE', refresh: 'TOKEN_SERVICE_UNAVAILABLE' },
};

/** Characters that some encoding changes, weighted in beside any code point. */
const TRICKY = [
  ':',
  ' ',
  '+',
  '%',
  '&',
  '=',
  '"',
  '\\',
  '/',
  '?',
  '#',
  ';',
  "'",
  '\n',
  '\t',
  '\u0000',
  '\u007f',
  'ü',
  '密',
  '😀',
];

/** Any code point, the characters that some encoding changes weighted in. */
export const anyChar = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...TRICKY) },
  { weight: 4, arbitrary: fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }) },
);
/** Printable ASCII only: what an HTTP header can carry (Node refuses the rest before sending). */
const headerChar = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...TRICKY.filter((char) => /^[\x20-\x7e]$/.test(char))) },
  {
    weight: 4,
    arbitrary: fc.string({
      unit: fc.integer({ min: 0x20, max: 0x7e }).map((code) => String.fromCharCode(code)),
      minLength: 1,
      maxLength: 1,
    }),
  },
);

let serial = 0;
/** A number no other secret of the file has had: the marker a secret is built around. */
export const nextSerial = (): number => (serial += 1);

/**
 * A secret around a marker no other text of the test holds, so that a match is the secret and nothing else; the
 * characters around it are drawn from `char`.
 */
export const secretOf = (char: fc.Arbitrary<string>) =>
  fc
    .tuple(fc.string({ unit: char, maxLength: 12 }), fc.string({ unit: char, maxLength: 12 }))
    .map(([before, after]) => `${before}Zq${nextSerial()}X${after}`);

function isHeaderTransport(transport: Transport): boolean {
  return (
    transport === 'refresh: header' ||
    transport === 'refresh: cookie' ||
    transport === 'login: oauth2 client secret in Basic' ||
    transport.startsWith('data')
  );
}

export interface Case {
  transport: Transport;
  outcome: Outcome;
  secret: string;
}

/** A case of the property: a transport, an outcome, and a secret of characters the transport can carry. */
export const cases: fc.Arbitrary<Case> = fc
  .tuple(fc.constantFrom(...TRANSPORTS), fc.constantFrom(...OUTCOMES))
  .chain(([transport, outcome]) =>
    (isHeaderTransport(transport) ? secretOf(headerChar) : secretOf(anyChar)).map((secret) => ({
      transport,
      outcome,
      secret,
    })),
  );

const FORM = { 'Content-Type': 'application/x-www-form-urlencoded' };

export function optionsFor(transport: Transport, secret: string): Partial<TokenAuthOptions> {
  const credentials = { username: USER, password: transport.startsWith('login') ? secret : GOOD_PASSWORD };
  const client = { tokenPath: LOGIN, clientId: 'orders:web' };
  switch (transport) {
    case 'login: Basic header':
      return { credentials };
    case 'login: JSON object':
      return { credentials, loginRequest: ({ username, password }) => ({ data: { username, password } }) };
    case 'login: JSON string':
      return {
        credentials,
        loginRequest: ({ username, password }) => ({
          data: JSON.stringify({ username, password }),
          headers: { 'Content-Type': 'application/json' },
        }),
      };
    case 'login: form object serialised by axios':
      return {
        credentials,
        loginRequest: ({ username, password }) => ({
          data: { grant_type: 'password', username, password },
          headers: FORM,
        }),
      };
    case 'login: form string':
      return {
        credentials,
        loginRequest: ({ username, password }) => ({
          data: `grant_type=password&username=${encodeURIComponent(username)}&password=${encodeURIComponent(password)}`,
          headers: FORM,
        }),
      };
    case 'login: URLSearchParams':
      return {
        credentials,
        loginRequest: ({ username, password }) => ({
          data: new URLSearchParams({ grant_type: 'password', username, password }),
        }),
      };
    case 'login: query params':
      return { credentials, loginRequest: ({ username, password }) => ({ params: { username, password } }) };
    case 'login: multipart FormData':
      return {
        credentials,
        loginRequest: ({ username, password }) => {
          const form = new FormData();
          form.append('username', username);
          form.append('password', password);
          return { data: form };
        },
      };
    case 'login: oauth2Password() form':
      return { ...oauth2Password({ ...client, clientSecret: 'client-secret-of-the-property' }), credentials };
    case 'login: oauth2 client secret in the form':
      return {
        ...oauth2Password({ ...client, clientSecret: secret, clientAuthentication: 'body' }),
        credentials: { username: USER, password: GOOD_PASSWORD },
      };
    case 'login: oauth2 client secret in Basic':
      return {
        ...oauth2Password({ ...client, clientSecret: secret }),
        credentials: { username: USER, password: GOOD_PASSWORD },
      };
    case 'login: oauth2ClientCredentials() client secret':
      return oauth2ClientCredentials({ ...client, clientSecret: secret, clientAuthentication: 'body' });
    case 'refresh: JSON body':
      return { credentials };
    case 'refresh: form body':
      return {
        credentials,
        refreshRequest: (refresh) => ({ data: { grant_type: 'refresh_token', refresh }, headers: FORM }),
      };
    case 'refresh: header':
      return { credentials, refreshRequest: (refresh) => ({ headers: { 'X-Refresh-Token': refresh } }) };
    case 'refresh: cookie':
      return { credentials, refreshRequest: (refresh) => ({ headers: { Cookie: `refresh_token=${refresh}` } }) };
    case 'data: Bearer header':
      return { credentials };
    case 'data: custom header':
      return { credentials, applyToken: (config, access) => void config.headers.set('X-Access-Token', access) };
    case 'data: query param':
      return {
        credentials,
        applyToken: (config, access) => {
          config.params = { ...(config.params as object), access_token: access };
        },
      };
  }
}

/** Every spelling of every secret of the case, as the test itself spells them (not as the library does). */
export function secretsOfCase({ transport, secret }: Case): Secret[] {
  const secrets = [...spellingsOf('the secret', secret), ...spellingsOf('the good password', GOOD_PASSWORD)];
  if (transport === 'login: Basic header') secrets.push(...pairSpellings('username:secret', USER, secret));
  if (transport === 'login: oauth2 client secret in Basic')
    secrets.push(...pairSpellings('client id:secret, form-encoded', formEncoded('orders:web'), formEncoded(secret)));
  return secrets;
}
