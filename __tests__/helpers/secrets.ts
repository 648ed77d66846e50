import util from 'node:util';
import { AxiosHeaders } from 'axios';
import type { TokenAuth, TokenAuthEvents } from '../../lib/index.js';
import { PASSWORD, USERNAME } from './service.js';
import type { FakeTokenService } from './service.js';
import { jsonOf, safely } from './serialize.js';

/** Where a secret was found: a property path from the scanned value, or the output of a serialiser. */
export interface Leak {
  secret: string;
  where: string;
}

/** How far the walk goes. A leaked Node ClientRequest or socket is a large graph; breadth first finds shallow leaks before the budget runs out. */
const MAX_DEPTH = 16;
const MAX_NODES = 50_000;

/** The Basic header value the plugin sends for these credentials. */
export function basicHeader(username = USERNAME, password = PASSWORD): string {
  return `Basic ${Buffer.from(`${username}:${password}`, 'utf8').toString('base64')}`;
}

/**
 * Everything that must never reach the user: the password, the Basic header and its base64 part, every token the
 * service issued, and whatever else the test made the service say.
 */
export function secretsOf(
  service: FakeTokenService,
  extra: readonly string[] = [],
  password = PASSWORD,
  username = USERNAME,
): string[] {
  const basic = basicHeader(username, password);
  return [...new Set([password, basic, basic.slice('Basic '.length), ...service.issued, ...extra])].filter(
    (secret) => secret !== '',
  );
}

function describeKey(key: string | symbol): string {
  if (typeof key === 'symbol') return `[${key.toString()}]`;
  return /^[A-Za-z_$][\w$]*$/.test(key) ? `.${key}` : `[${JSON.stringify(key)}]`;
}

/** Reads a property without letting a throwing getter stop the scan. */
function read(target: object, key: string | symbol): { value: unknown } | undefined {
  try {
    return { value: Reflect.get(target, key) };
  } catch {
    return undefined;
  }
}

/**
 * Every place a secret occurs in `value`: own properties (enumerable or not, string or symbol keys, getters
 * included), Error message/stack/cause, AxiosHeaders, arrays, Maps, Sets, binary buffers, and the text of
 * `util.inspect` and `JSON.stringify`.
 */
export function findSecrets(value: unknown, secrets: readonly string[]): Leak[] {
  const wanted = secrets.filter((secret) => secret !== '');
  const leaks: Leak[] = [];
  const check = (text: string, where: string) => {
    for (const secret of wanted) {
      if (text.includes(secret) && !leaks.some((leak) => leak.secret === secret && leak.where === where))
        leaks.push({ secret, where });
    }
  };

  const seen = new Set<object>();
  const queue: Array<{ item: unknown; path: string; depth: number }> = [{ item: value, path: '<value>', depth: 0 }];
  for (let next = 0; next < queue.length && seen.size < MAX_NODES; next += 1) {
    const { item, path, depth } = queue[next]!;
    if (typeof item === 'string') {
      check(item, path);
      continue;
    }
    if (typeof item === 'symbol') {
      if (item.description !== undefined) check(item.description, `${path}.description`);
      continue;
    }
    if (typeof item === 'bigint' || typeof item === 'number') {
      check(String(item), path);
      continue;
    }
    // Functions keep their secrets in closures, which no one can read; their properties are library code.
    if (typeof item !== 'object' || item === null || seen.has(item) || depth > MAX_DEPTH) continue;
    seen.add(item);
    const visit = (child: unknown, childPath: string) => queue.push({ item: child, path: childPath, depth: depth + 1 });

    if (ArrayBuffer.isView(item)) {
      check(Buffer.from(item.buffer, item.byteOffset, item.byteLength).toString('utf8'), `${path} (bytes)`);
      continue;
    }
    if (item instanceof ArrayBuffer) {
      check(Buffer.from(item).toString('utf8'), `${path} (bytes)`);
      continue;
    }
    if (item instanceof Error) {
      for (const key of ['message', 'stack', 'cause'] as const) {
        const got = read(item, key);
        if (got) visit(got.value, `${path}.${key}`);
      }
    }
    if (item instanceof AxiosHeaders) visit(item.toJSON(), `${path}.toJSON()`);
    if (item instanceof URLSearchParams || item instanceof URL) check(item.toString(), path);
    if (item instanceof Map) {
      let index = 0;
      for (const [key, entry] of item) {
        visit(key, `${path}<key ${index}>`);
        visit(entry, `${path}<value ${index}>`);
        index += 1;
      }
    }
    if (item instanceof Set) {
      let index = 0;
      for (const entry of item) visit(entry, `${path}<item ${index++}>`);
    }
    for (const key of Reflect.ownKeys(item)) {
      if (typeof key === 'string') check(key, `${path} (key ${JSON.stringify(key)})`);
      else if (key.description !== undefined) check(key.description, `${path} (key ${key.toString()})`);
      const got = read(item, key);
      if (got) visit(got.value, `${path}${describeKey(key)}`);
    }
  }

  const inspected = safely(() => util.inspect(value, { depth: 8, showHidden: false }));
  if (inspected !== undefined) check(inspected, 'util.inspect(<value>)');
  const json = jsonOf(value);
  if (json !== undefined) check(json, 'JSON.stringify(<value>)');
  const text = safely(() => String(value));
  if (text !== undefined) check(text, 'String(<value>)');

  return leaks;
}

/** Fails the test, naming each place, when a secret is reachable from `value`. */
export function expectNoSecrets(value: unknown, secrets: readonly string[]): void {
  expect(findSecrets(value, secrets)).toEqual([]);
}

/** The error and every `cause` below it. */
export function causeChain(error: unknown): unknown[] {
  const chain: unknown[] = [];
  for (
    let link = error;
    link !== undefined && link !== null && !chain.includes(link);
    link = (link as { cause?: unknown }).cause
  ) {
    chain.push(link);
    if (typeof link !== 'object' && typeof link !== 'function') break;
  }
  return chain;
}

export const EVENT_NAMES = [
  'login',
  'refresh',
  'adopt',
  'replay',
  'failure',
  'logout',
] as const satisfies ReadonlyArray<keyof TokenAuthEvents>;

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
