// The suite-wide scan (see scan-secrets.ts, the setup file that loads this): records what a user of the plugin could
// see while a test file runs (rejections, throws, event payloads, console lines), harvests the secrets that go over
// the wire, and fails the file from its afterAll hooks when a record holds one. Installed once per test file, in the
// file's module registry.
import util from 'node:util';
import axios from 'axios';
import type { AxiosResponse } from 'axios';
import { Emitter } from '../../lib/support/emitter';
import { findLeaks, safely } from './leak-finder.js';
import { CONSOLE_METHODS } from './listeners.js';
import { basicOf, isSearchablePassword, KNOWN_CREDENTIALS, KNOWN_LITERALS, literalSecrets } from './test-secrets.js';

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

/** Whether a request's rejection is one the plugin hands to the caller (see scan-secrets.ts). */
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
