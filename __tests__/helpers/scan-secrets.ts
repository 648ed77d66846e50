/**
 * The leak scanner: finds test secrets in what a user of the plugin could see. One scanner, used two ways.
 *
 * As jest's setup file (setupFilesAfterEnv), which every test file gets, it records everything a user could see while
 * the file runs, and fails the file if any of it holds a test secret. Recorded:
 *  - rejections of requests made through an axios instance with the plugin attached: the reason when it is a
 *    TokenAuthError, or an AxiosError whose `config` carries one of the plugin's per-request symbols (description
 *    `axios-token-keeper.*`, see lib/attach.ts). Errors of plain instances (tests talking to the emulator directly,
 *    the plugin's private token-call instance) do not count;
 *  - what `attachTokenAuth` throws, and rejections of `auth.login()`, `auth.refresh()`, `auth.logout()` and
 *    `auth.accessToken()` (whose value is the token, by design);
 *  - every payload passed to `Emitter.prototype.emit` (lib/support/emitter.ts), whether or not anyone listens;
 *  - every console.log/info/warn/error/debug/trace call (still passed through).
 * Scanned (afterAll of the file, and again after each later afterAll hook for what those produced) through what a
 * logger would print (`renderings` below), and the formatted console line. Secrets are the known test passwords, the
 * Basic value of each known or sent username:password, any `Basic <base64 of user:password>`, token-shaped strings
 * (`acc-<n>-<nonce>`, `ref-<n>-<nonce>`, `acc_<hex>`, `ref_<hex>`, JWTs), and the tokens the token service handed out
 * during the file.
 *
 * From a test (secrets.test.ts), with the secrets the test knows: `expectNoLeaks` also walks the value, and counts a
 * secret anywhere it can be reached, even where no logger would print it (a non-enumerable property, a symbol key, a
 * getter, a byte buffer).
 *
 * This file must not import nock (helpers/service.ts does): loading it would patch Node's http in every test file,
 * and some suites test connection errors over real sockets.
 */
import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import util from 'node:util';
import axios, { AxiosHeaders } from 'axios';
import type { AxiosResponse } from 'axios';
import { Emitter } from '../../lib/support/emitter';
import type { TokenAuth, TokenAuthEvents } from '../../lib/index.js';
import { E2E_PASSWORD, E2E_USER } from '../../harness/account.js';
import { PASSWORD, USERNAME } from './credentials.js';

// ---------------------------------------------------------------------------------------------------------------
// The secrets
// ---------------------------------------------------------------------------------------------------------------

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
  ['jane', 'wr0ng: pässwort'], // secrets.test.ts, a wrong password that is sent
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
function isSearchablePassword(password: string): boolean {
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

/** Token-shaped strings in a text: the test services' formats, JWTs, and Basic values of user:password. */
export function tokenShapedIn(text: string): Secret[] {
  const found: Secret[] = [];
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

// ---------------------------------------------------------------------------------------------------------------
// Where a secret can show: as a logger prints the value, and anywhere in it
// ---------------------------------------------------------------------------------------------------------------

/** Runs a renderer that may throw on exotic values, as a logger would survive it. */
function safely<T>(render: () => T): T | undefined {
  try {
    return render();
  } catch {
    return undefined;
  }
}

/** JSON.stringify as a structured logger would run it, with cycles dropped and bigints written out. */
function jsonOf(value: unknown): string | undefined {
  const seen = new WeakSet<object>();
  return safely(() =>
    JSON.stringify(value, (_key, item: unknown) => {
      if (typeof item === 'bigint') return item.toString();
      if (typeof item === 'object' && item !== null) {
        if (seen.has(item)) return '[Circular]';
        seen.add(item);
      }
      return item;
    }),
  );
}

/** The value and each `cause` below it, cycle-safe, at most `limit` links. */
export function causeChain(value: unknown, limit = 10): unknown[] {
  const chain: unknown[] = [];
  for (let link = value; !chain.includes(link) && chain.length < limit;) {
    chain.push(link);
    if ((typeof link !== 'object' && typeof link !== 'function') || link === null) break;
    link = safely(() => (link as { cause?: unknown }).cause);
    if (link === undefined || link === null) break;
  }
  return chain;
}

interface View {
  where: string;
  text: string;
}

/**
 * The value as loggers print it: util.inspect (depth 8, no hidden properties) and a cycle-safe JSON.stringify of the
 * value and of each link of its cause chain, and String(value). For console arguments, each Error among them with
 * its cause chain too: a cause is rendered on its own, so that depth 8 applies from it.
 */
function renderings(value: unknown): View[] {
  const views: View[] = [];
  const roots: Array<[string, unknown]> = [['<value>', value]];
  if (Array.isArray(value))
    value.forEach((item, index) => item instanceof Error && roots.push([`<value>[${index}]`, item]));
  roots.forEach(([rootName, root], rootIndex) => {
    causeChain(root).forEach((link, index) => {
      if (rootIndex > 0 && index === 0) return; // already inside the rendering of the whole value
      const label = `${rootName}${'.cause'.repeat(index)}`;
      const inspected = safely(() => util.inspect(link, { depth: 8, showHidden: false }));
      if (inspected !== undefined) views.push({ where: `util.inspect(${label})`, text: inspected });
      const json = jsonOf(link);
      if (json !== undefined) views.push({ where: `JSON.stringify(${label})`, text: json });
    });
  });
  const text = safely(() => String(value));
  if (text !== undefined) views.push({ where: 'String(<value>)', text });
  return views;
}

/** How far a walk goes. A leaked Node ClientRequest or socket is a large graph; breadth first finds shallow leaks before the budget runs out. */
const MAX_DEPTH = 16;
const MAX_NODES = 50_000;

function describeKey(key: string | symbol): string {
  if (typeof key === 'symbol') return `[${key.toString()}]`;
  return /^[A-Za-z_$][\w$]*$/.test(key) ? `.${key}` : `[${JSON.stringify(key)}]`;
}

/** Reads a property without letting a throwing getter stop the walk. */
function read(target: object, key: string | symbol): { value: unknown } | undefined {
  try {
    return { value: Reflect.get(target, key) };
  } catch {
    return undefined;
  }
}

/**
 * Calls `visit` with every text reachable from `value` and the property path to it: strings, numbers, symbol
 * descriptions, property names, own properties (enumerable or not, string or symbol keys, getters included), Error
 * message/stack/cause, AxiosHeaders, URLs, Map and Set entries, and the bytes of binary buffers. Functions keep their
 * secrets in closures, which no one can read; their properties are library code.
 */
function walk(value: unknown, visit: (text: string, where: string) => void): void {
  const seen = new Set<object>();
  const queue: Array<{ item: unknown; path: string; depth: number }> = [{ item: value, path: '<value>', depth: 0 }];
  for (let next = 0; next < queue.length && seen.size < MAX_NODES; next += 1) {
    const { item, path, depth } = queue[next]!;
    if (typeof item === 'string') {
      visit(item, path);
      continue;
    }
    if (typeof item === 'symbol') {
      if (item.description !== undefined) visit(item.description, `${path}.description`);
      continue;
    }
    if (typeof item === 'bigint' || typeof item === 'number') {
      visit(String(item), path);
      continue;
    }
    if (typeof item !== 'object' || item === null || seen.has(item) || depth > MAX_DEPTH) continue;
    seen.add(item);
    const child = (childItem: unknown, childPath: string) =>
      queue.push({ item: childItem, path: childPath, depth: depth + 1 });

    if (ArrayBuffer.isView(item)) {
      visit(Buffer.from(item.buffer, item.byteOffset, item.byteLength).toString('utf8'), `${path} (bytes)`);
      continue;
    }
    if (item instanceof ArrayBuffer) {
      visit(Buffer.from(item).toString('utf8'), `${path} (bytes)`);
      continue;
    }
    if (item instanceof Error) {
      for (const key of ['message', 'stack', 'cause'] as const) {
        const got = read(item, key);
        if (got) child(got.value, `${path}.${key}`);
      }
    }
    if (item instanceof AxiosHeaders) child(item.toJSON(), `${path}.toJSON()`);
    if (item instanceof URLSearchParams || item instanceof URL) visit(item.toString(), path);
    if (item instanceof Map) {
      let index = 0;
      for (const [key, entry] of item) {
        child(key, `${path}<key ${index}>`);
        child(entry, `${path}<value ${index}>`);
        index += 1;
      }
    }
    if (item instanceof Set) {
      let index = 0;
      for (const entry of item) child(entry, `${path}<item ${index++}>`);
    }
    for (const key of Reflect.ownKeys(item)) {
      if (typeof key === 'string') visit(key, `${path} (key ${JSON.stringify(key)})`);
      else if (key.description !== undefined) visit(key.description, `${path} (key ${key.toString()})`);
      const got = read(item, key);
      if (got) child(got.value, `${path}${describeKey(key)}`);
    }
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Finding leaks
// ---------------------------------------------------------------------------------------------------------------

export interface Finding {
  /** What leaked, as `name "abcd…" (n chars)`: never more of the secret than a short prefix. */
  secret: string;
  /** Which renderings showed it: `util.inspect`, `JSON.stringify`, `String`, `console line`, each per cause link. */
  seenIn: string[];
  /** Property paths from the scanned value to the texts holding it (empty when only a rendering shows it). */
  paths: string[];
}

export interface ScanOptions {
  /** Console output as rendered, searched too. */
  lines?: readonly string[];
  /**
   * Count a secret anywhere it can be reached from the value (see `walk`), not only where a rendering shows it.
   * @default false: the walk only locates what a rendering showed
   */
  reachable?: boolean;
  /** Texts found clean before, skipped; clean texts are added. Many records render alike. */
  cleanTexts?: Set<string>;
}

/** Property paths listed per finding. */
const MAX_PATHS = 12;

/** At most this much of a secret is printed. */
export function preview(secret: string): string {
  return `${JSON.stringify(secret.slice(0, Math.min(4, Math.floor(secret.length / 4))))}… (${secret.length} chars)`;
}

/**
 * The secrets in `value`: `secrets` searched as text, and token-shaped strings found by their form, in what a logger
 * would print of it (`renderings`) and in `lines`; with `reachable`, anywhere in it too. Each is located by property
 * path.
 */
export function findLeaks(value: unknown, secrets: readonly Secret[], options: ScanOptions = {}): Finding[] {
  const { lines = [], reachable = false, cleanTexts } = options;
  const found = new Map<string, { name: string; seenIn: Set<string>; paths: Set<string> }>();
  const note = (secret: Secret) => {
    const hit = found.get(secret.value) ?? { name: secret.name, seenIn: new Set<string>(), paths: new Set<string>() };
    if (!hit.name.split(' / ').includes(secret.name)) hit.name = `${hit.name} / ${secret.name}`;
    found.set(secret.value, hit);
    return hit;
  };
  const secretsIn = (text: string): Secret[] => [
    ...secrets.filter((secret) => secret.value !== '' && text.includes(secret.value)),
    ...tokenShapedIn(text),
  ];

  const views: View[] = lines.map((text, index) => ({
    where: lines.length === 1 ? 'console line' : `console line ${index}`,
    text,
  }));
  for (const { where, text } of [...views, ...renderings(value)]) {
    if (cleanTexts?.has(text)) continue;
    const here = secretsIn(text);
    for (const secret of here) note(secret).seenIn.add(where);
    if (here.length === 0) cleanTexts?.add(text);
  }

  const shown = [...found].map(([secretValue, { name }]) => ({ name, value: secretValue }));
  if (reachable || shown.length > 0) {
    walk(value, (text, where) => {
      const here = reachable ? secretsIn(text) : shown.filter((secret) => text.includes(secret.value));
      for (const secret of here) {
        const { paths } = note(secret);
        if (paths.size < MAX_PATHS) paths.add(where);
      }
    });
  }

  return [...found].map(([secretValue, { name, seenIn, paths }]) => ({
    secret: `${name} ${preview(secretValue)}`,
    seenIn: [...seenIn],
    paths: [...paths],
  }));
}

/** Fails the test, naming each place, when a secret can be reached from `value`. */
export function expectNoLeaks(value: unknown, secrets: readonly Secret[]): void {
  expect(findLeaks(value, secrets, { reachable: true })).toEqual([]);
}

// ---------------------------------------------------------------------------------------------------------------
// What a test listens to
// ---------------------------------------------------------------------------------------------------------------

export const EVENT_NAMES = ['login', 'refresh', 'load', 'replay', 'failure', 'logout'] as const satisfies ReadonlyArray<
  keyof TokenAuthEvents
>;

export interface Recorded {
  event: keyof TokenAuthEvents;
  payload: unknown;
}

/** Listens to every event of `auth`; the returned array fills as they are emitted. */
export function recordEvents(auth: TokenAuth): Recorded[] {
  const recorded: Recorded[] = [];
  for (const event of EVENT_NAMES) auth.on(event, (payload) => void recorded.push({ event, payload }));
  return recorded;
}

const CONSOLE_METHODS = ['log', 'info', 'warn', 'error', 'debug', 'trace'] as const;

/** Captures (and silences) console output; undo with `jest.restoreAllMocks()` after the test. */
export function captureConsole(): unknown[][] {
  const calls: unknown[][] = [];
  for (const method of CONSOLE_METHODS) {
    jest.spyOn(console, method).mockImplementation((...args: unknown[]) => void calls.push(args));
  }
  return calls;
}

// ---------------------------------------------------------------------------------------------------------------
// Recording (installed once per test file, in the file's module registry)
// ---------------------------------------------------------------------------------------------------------------

export interface ScanRecord {
  kind: 'rejection' | 'throw' | 'event' | 'console';
  /** e.g. `GET request rejected with TokenAuthError LOGIN_REJECTED`, `event "failure"`, `console.warn`; no secret in them. */
  labels: string[];
  /** The test running when it was recorded, if any. */
  test: string | undefined;
  value: unknown;
  /** Console output as rendered. */
  lines?: string[];
}

const PLUGIN_SYMBOL_PREFIX = 'axios-token-keeper.';
/** Records not scanned yet, and those of the running scan; scanned ones are let go (see scanPending). */
const records: ScanRecord[] = [];
/** Numbers the records across scans, for the report. */
let released = 0;
const recordedValues = new WeakMap<object, ScanRecord>();
/** Secrets seen going over the wire during this file: Basic values sent, tokens the token service answered. */
const harvested = new Map<string, string>();
let scanned = 0;
/** SCAN_SECRETS_DEBUG=1 prints, per file, what was recorded: to check that the recording works. */
const DEBUG = Boolean(process.env.SCAN_SECRETS_DEBUG);
const tally: Record<string, number> = {};

/** The records of this file not scanned yet. */
export function scanRecords(): readonly ScanRecord[] {
  return records;
}

/**
 * The test the code that produced a record runs for. Jest 30 tracks it through async work (the context of an
 * afterAll hook has none); `currentTestName` is the fallback, and may name the last test during an afterAll.
 */
function currentTest(): string | undefined {
  return safely(() => {
    const state = expect.getState() as { currentConcurrentTestName?: unknown; currentTestName?: string };
    return typeof state.currentConcurrentTestName === 'function'
      ? (state.currentConcurrentTestName as () => string | undefined)()
      : state.currentTestName;
  });
}

function record(kind: ScanRecord['kind'], label: string, value: unknown, lines?: string[]): void {
  if (typeof value === 'object' && value !== null && kind !== 'console') {
    const known = recordedValues.get(value);
    if (known) {
      if (!known.labels.includes(label)) known.labels.push(label);
      return;
    }
  }
  const entry: ScanRecord = { kind, labels: [label], test: currentTest(), value, ...(lines ? { lines } : {}) };
  records.push(entry);
  if (DEBUG) tally[label.replace(/ with .*/, '')] = (tally[label.replace(/ with .*/, '')] ?? 0) + 1;
  if (typeof value === 'object' && value !== null && kind !== 'console') recordedValues.set(value, entry);
}

function isTokenAuthError(value: unknown): boolean {
  return typeof value === 'object' && value !== null && (value as { name?: unknown }).name === 'TokenAuthError';
}

function carriesPluginSymbol(config: unknown): boolean {
  if (typeof config !== 'object' || config === null) return false;
  return Object.getOwnPropertySymbols(config).some(
    (symbol) => symbol.description?.startsWith(PLUGIN_SYMBOL_PREFIX) === true,
  );
}

/** Whether a request's rejection is one the plugin hands to the caller (see the top of the file). */
export function isPluginRejection(reason: unknown): boolean {
  if (isTokenAuthError(reason)) return true;
  return axios.isAxiosError(reason) && carriesPluginSymbol(reason.config);
}

function describeError(reason: unknown): string {
  const { name, code } = (reason ?? {}) as { name?: unknown; code?: unknown };
  return `${typeof name === 'string' ? name : typeof reason}${typeof code === 'string' ? ` ${code}` : ''}`;
}

function headerValue(headers: unknown, wanted: string): unknown {
  if (typeof headers !== 'object' || headers === null) return undefined;
  for (const [name, value] of Object.entries(headers)) if (name.toLowerCase() === wanted) return value;
  return undefined;
}

function harvestRequest(config: unknown): void {
  if (typeof config !== 'object' || config === null) return;
  const { headers, auth } = config as { headers?: unknown; auth?: { username?: unknown; password?: unknown } };
  const authorization = headerValue(headers, 'authorization');
  if (typeof authorization === 'string') {
    const basic = /^Basic\s+(\S{4,})$/.exec(authorization)?.[1];
    if (basic) {
      harvested.set(basic, 'Basic value sent in a request');
      const decoded = Buffer.from(basic, 'base64').toString('utf8');
      const password = decoded.slice(decoded.indexOf(':') + 1);
      if (decoded.includes(':') && isSearchablePassword(password))
        harvested.set(password, 'password sent in a Basic header');
    }
  }
  if (auth && typeof auth.username === 'string' && typeof auth.password === 'string') {
    harvested.set(basicOf(auth.username, auth.password), 'Basic value of an `auth` option');
    if (isSearchablePassword(auth.password)) harvested.set(auth.password, 'password of an `auth` option');
  }
}

const TOKEN_KEYS = /^(access|refresh|token|id_token|(access|refresh)(_token|Token))$/;

/** Tokens in a token-service answer: strings under token keys, at the top level or under `data`. */
function harvestAnswer(body: unknown, depth = 0): void {
  if (typeof body !== 'object' || body === null || depth > 2) return;
  for (const [key, value] of Object.entries(body)) {
    if (typeof value === 'string' && value.length >= 8 && TOKEN_KEYS.test(key))
      harvested.set(value, `token the token service answered (${key})`);
    else if (key === 'data') harvestAnswer(value, depth + 1);
  }
}

type RequestFn = (this: unknown, configOrUrl: unknown, config?: unknown) => Promise<AxiosResponse>;

function installAxios(): void {
  const proto = axios.Axios.prototype as unknown as { request: RequestFn };
  const original = proto.request;
  proto.request = function request(this: unknown, configOrUrl: unknown, config?: unknown) {
    harvestRequest(typeof configOrUrl === 'string' ? config : configOrUrl);
    return original.call(this, configOrUrl, config).then(
      (response) => {
        harvestAnswer(response?.data);
        return response;
      },
      (reason: unknown) => {
        if (axios.isAxiosError(reason)) harvestAnswer(reason.response?.data);
        if (isPluginRejection(reason)) {
          const method =
            (axios.isAxiosError(reason) ? reason.config?.method : undefined) ??
            (configOrUrl as { method?: string } | undefined)?.method ??
            'get';
          record('rejection', `${method.toUpperCase()} request rejected with ${describeError(reason)}`, reason);
        }
        throw reason;
      },
    );
  };
}

function installEvents(): void {
  const proto = Emitter.prototype as unknown as { emit: (event: unknown, payload: unknown) => void };
  const original = proto.emit;
  proto.emit = function emit(this: unknown, event: unknown, payload: unknown) {
    record('event', `event ${JSON.stringify(String(event))}`, payload);
    return original.call(this, event, payload);
  };
}

type AttachFn = (...args: unknown[]) => Record<string, unknown>;

/** `attachTokenAuth`'s own throws, and rejections of the handle's methods that renew, reach the caller too. */
function installAttach(): void {
  // Patched on the module's exports: lib/index.ts re-exports it through a getter, so every importer sees the patch.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const attachModule = require('../../lib/attach') as { attachTokenAuth: AttachFn };
  const original = attachModule.attachTokenAuth;
  attachModule.attachTokenAuth = function attachTokenAuth(this: unknown, ...args: unknown[]) {
    let handle: Record<string, unknown>;
    try {
      handle = original.apply(this, args);
    } catch (error) {
      record('throw', `attachTokenAuth threw ${describeError(error)}`, error);
      throw error;
    }
    for (const method of ['login', 'refresh', 'logout', 'accessToken'] as const) {
      const call = handle[method];
      if (typeof call !== 'function') continue;
      handle[method] = (...callArgs: unknown[]) =>
        (call as (...a: unknown[]) => Promise<unknown>)(...callArgs).catch((reason: unknown) => {
          record('rejection', `auth.${method}() rejected with ${describeError(reason)}`, reason);
          throw reason;
        });
    }
    return handle;
  };
}

/**
 * Wraps a console method. Under each console line jest shows the first frame of the call's stack, which would be
 * this wrapper, so every line would point at this file. The wrapper is therefore compiled with a sourceURL that
 * jest's stack filter takes for a Node internal, and the location shown stays the caller's. It does nothing but
 * hand the arguments to `note` and pass the call through.
 */
// eslint-disable-next-line @typescript-eslint/no-implied-eval -- compiled from a string to carry the sourceURL above
const wrapConsoleMethod = new Function(
  'original',
  'note',
  `return function (...args) { note(args); return original.apply(this === undefined || this === globalThis ? console : this, args); };
//# sourceURL=node:internal/scan-secrets-console-pass-through`,
) as (original: (...args: unknown[]) => void, note: (args: unknown[]) => void) => (...args: unknown[]) => void;

function installConsole(): void {
  const target = console as unknown as Record<string, (...args: unknown[]) => void>;
  for (const method of CONSOLE_METHODS) {
    target[method] = wrapConsoleMethod(target[method]!, (args) =>
      record('console', `console.${method}`, args, [safely(() => util.format(...args)) ?? '']),
    );
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Scanning
// ---------------------------------------------------------------------------------------------------------------

function testFile(): string {
  const path = safely(() => expect.getState().testPath) ?? '<unknown test file>';
  return path.replace(/^.*?(__tests__\/)/, '$1');
}

/** Findings listed in a failure; the rest are counted. */
const MAX_REPORTED = 12;

/** Scans the records not scanned yet; returns the failure report, or undefined when clean. */
export function scanPending(): string | undefined {
  const literals = literalSecrets(KNOWN_CREDENTIALS, KNOWN_LITERALS, harvested);
  const problems: string[] = [];
  // Many records render alike (one error shared by a burst of waiters, the same event over and over).
  const cleanTexts = new Set<string>();
  for (; scanned < records.length; scanned += 1) {
    const entry = records[scanned]!;
    const findings = findLeaks(entry.value, literals, { ...(entry.lines && { lines: entry.lines }), cleanTexts });
    if (findings.length === 0) continue;
    const where = `record #${released + scanned} [${entry.labels.join('; ')}]${entry.test ? ` in test "${entry.test}"` : ' (outside a test)'}`;
    for (const finding of findings) {
      problems.push(
        `  ${where}\n    ${finding.secret}\n    seen in: ${finding.seenIn.join(', ')}\n    at: ${finding.paths.length ? finding.paths.join(', ') : '(no property path; only a serialiser shows it)'}`,
      );
    }
  }
  // Let the scanned values go: a jest worker may keep a test file's module registry alive after the file (through
  // sockets of Node's shared http module, say), and with it every error and payload recorded here.
  released += records.length;
  records.length = 0;
  scanned = 0;
  if (problems.length === 0) return undefined;
  const shown = problems.slice(0, MAX_REPORTED);
  const more = problems.length > shown.length ? `\n  … and ${problems.length - shown.length} more findings` : '';
  return `Secrets reached user-visible output in ${testFile()} (errors, event payloads or console output):\n${shown.join('\n')}${more}`;
}

function assertClean(): void {
  const report = scanPending();
  if (report !== undefined) {
    const error = new Error(report);
    error.stack = ''; // the report is the whole story: no frames of this file
    throw error;
  }
}

type Hook = (fn: (...args: never[]) => unknown, timeout?: number) => void;

function debugSummary(scanMs: number): void {
  if (!DEBUG) return;
  process.stderr.write(
    `[scan-secrets] ${testFile()}: ${released + records.length} records, ${harvested.size} harvested secrets, scanned in ${Math.round(scanMs)} ms ${JSON.stringify(tally)}\n`,
  );
}

function installHooks(): void {
  afterAll(() => {
    const started = performance.now();
    try {
      assertClean();
    } finally {
      debugSummary(performance.now() - started);
    }
  });
  // The afterAll hooks of the test file run after this one: rescan after each for what it produced.
  const globals = globalThis as unknown as { afterAll: Hook };
  const original = globals.afterAll;
  globals.afterAll = (fn, timeout) => {
    if (fn.length > 0) return original(fn, timeout); // a done callback: leave it as it is
    original(async () => {
      await fn();
      assertClean();
    }, timeout);
  };
}

const INSTALLED = Symbol.for('scan-secrets.installed');
const registry = globalThis as { [INSTALLED]?: true };
if (!registry[INSTALLED]) {
  registry[INSTALLED] = true;
  installAxios();
  installEvents();
  installAttach();
  installConsole();
  installHooks();
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
