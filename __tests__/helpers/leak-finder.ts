// Where a secret can show (see scan-secrets.ts): what a logger prints of a value (util.inspect, JSON.stringify,
// String, per link of its cause chain), and, for a test that asks, anywhere the value can reach; and the findings,
// each located by property path, with no more of a secret than a short prefix.
import util from 'node:util';
import { AxiosHeaders } from 'axios';
import { preview, tokenShapedIn } from './test-secrets.js';
import type { Secret } from './test-secrets.js';

/** Runs a renderer that may throw on exotic values, as a logger would survive it. */
export function safely<T>(render: () => T): T | undefined {
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
