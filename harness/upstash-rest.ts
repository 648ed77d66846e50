/**
 * A small bridge of Upstash's documented REST protocol over a real redis-server, so that the real `@upstash/redis`
 * client can be tested (and benchmarked) against a Redis we run, on 127.0.0.1:
 *
 * - `POST /` with a JSON array, one command (`["SET", "k", "v"]`): `{ "result": … }`, or `{ "error": "…" }` with 400;
 * - `POST /pipeline` with an array of commands, run in order (not atomically): an array of `{ result }` or `{ error }`,
 *   one per command, with 200;
 * - `POST /multi-exec` likewise, run as one MULTI/EXEC transaction;
 * - `Authorization: Bearer <token>` (or `?_token=`) on every request, 401 `{ "error": "Unauthorized" }` without it;
 * - `Upstash-Encoding: base64`: every string of the result base64-encoded (the client's default), but for a reply that
 *   is `OK` itself, which the client reads as it is.
 *
 * It counts what it was sent (HTTP requests, and commands by name), which is what a REST Redis bills. For the tests and
 * the fleet benchmark; no jest here.
 *
 * @example
 * const bridge = await startUpstashBridge({ redisUrl: server.url });
 * const redis = new Redis({ url: bridge.url, token: bridge.token }); // from '@upstash/redis'
 */
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import Redis from 'ioredis';
import { listenOnLoopback } from './loopback.js';

/** A reply of Redis as the bridge relays it: strings as bytes, integers, nil, nested arrays. */
type Reply = Buffer | string | number | null | Reply[];

/** What the bridge was sent since it started (or since `resetCounts()`). */
export interface UpstashBridgeCounts {
  /** HTTP requests that passed authentication: what a REST Redis bills as requests. */
  requests: number;
  /** Commands run, a pipeline's and a transaction's each counted: what a REST Redis bills as commands. */
  commands: number;
  /** Commands run by name, lower case (`eval`, `evalsha`, `get`, …). */
  byCommand: Map<string, number>;
  /** Requests refused for a missing or wrong token. */
  unauthorized: number;
}

export interface UpstashBridge {
  /** `http://127.0.0.1:<port>`: the client's `url`. */
  readonly url: string;
  /** The bearer token the bridge accepts: the client's `token`. */
  readonly token: string;
  counts(): UpstashBridgeCounts;
  resetCounts(): void;
  /**
   * Holds the answer to the next request holding a command that `matches` (run in Redis already), until `release()`:
   * `held` resolves once such a request came. For a test that must freeze a client between a command and its answer.
   */
  holdNext(matches: (command: readonly string[]) => boolean): { held: Promise<void>; release(): void };
  /** Closes the server and its connections to Redis. */
  stop(): Promise<void>;
}

export interface UpstashBridgeOptions {
  /** The redis-server to relay to (`redis://127.0.0.1:<port>`). */
  redisUrl: string;
  /** @default a random one */
  token?: string;
}

/** Starts the bridge on a free loopback port. */
export async function startUpstashBridge(options: UpstashBridgeOptions): Promise<UpstashBridge> {
  const token = options.token ?? randomBytes(16).toString('hex');
  // One connection for single commands and pipelines (ioredis keeps their order), one for transactions, whose
  // MULTI … EXEC must not interleave with other commands; transactions take turns on it.
  const commands = new Redis(options.redisUrl, { maxRetriesPerRequest: 1 });
  const transactions = new Redis(options.redisUrl, { maxRetriesPerRequest: 1 });
  let turn: Promise<unknown> = Promise.resolve();
  let counts = fresh();
  let hold: { matches: (command: readonly string[]) => boolean; came: () => void; released: Promise<void> } | undefined;
  /** Waits, before an answer, while a hold matches one of the request's commands. */
  const held = async (body: readonly (readonly string[])[]): Promise<void> => {
    const current = hold;
    if (!current || !body.some((command) => current.matches(command))) return;
    hold = undefined;
    current.came();
    await current.released;
  };

  const run = (connection: Redis, command: readonly string[]): Promise<Reply> => {
    const [name, ...args] = command;
    return connection.callBuffer(name!, ...args) as Promise<Reply>;
  };

  const server = createServer((request, response) => {
    void handle(request, response).catch((error: unknown) => {
      if (!response.headersSent) answer(response, 500, { error: String(error) });
    });
  });

  async function handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const url = new URL(request.url ?? '/', 'http://bridge');
    if (request.method !== 'POST') return answer(response, 405, { error: 'Method Not Allowed' });
    if (request.headers.authorization !== `Bearer ${token}` && url.searchParams.get('_token') !== token) {
      counts.unauthorized += 1;
      return answer(response, 401, { error: 'Unauthorized' });
    }
    const body = await read(request);
    const base64 = String(request.headers['upstash-encoding'] ?? '').toLowerCase() === 'base64';
    counts.requests += 1;
    switch (url.pathname) {
      case '/': {
        if (!isCommand(body)) return answer(response, 400, { error: 'ERR the body must be a JSON array of strings' });
        count(body);
        let reply: { result: unknown } | { error: string };
        try {
          reply = { result: encode(await run(commands, body), base64, true) };
        } catch (error) {
          reply = { error: messageOf(error) };
        }
        await held([body]);
        return answer(response, 'error' in reply ? 400 : 200, reply);
      }
      case '/pipeline': {
        if (!Array.isArray(body) || !body.every(isCommand))
          return answer(response, 400, { error: 'ERR the body must be a JSON array of commands' });
        body.forEach(count);
        const settled = await Promise.allSettled(body.map((command) => run(commands, command)));
        await held(body);
        return answer(
          response,
          200,
          settled.map((outcome) => item(outcome, base64)),
        );
      }
      case '/multi-exec': {
        if (!Array.isArray(body) || !body.every(isCommand))
          return answer(response, 400, { error: 'ERR the body must be a JSON array of commands' });
        body.forEach(count);
        const exec = turn.then(() => transaction(body));
        turn = exec.catch(() => undefined);
        try {
          const results = await exec;
          return answer(
            response,
            200,
            results.map((outcome) => item(outcome, base64)),
          );
        } catch (error) {
          return answer(response, 400, { error: messageOf(error) });
        }
      }
      default:
        return answer(response, 404, { error: `ERR no such endpoint ${url.pathname}` });
    }
  }

  /** MULTI, the commands, EXEC on the transactions' connection: each command's outcome, or the EXEC's error. */
  async function transaction(body: readonly (readonly string[])[]): Promise<PromiseSettledResult<Reply>[]> {
    const multi = transactions.multi();
    for (const [name, ...args] of body) multi.callBuffer(name!, ...args);
    const results = await multi.exec();
    if (!results) throw new Error('EXECABORT Transaction discarded');
    return results.map(([error, value]) =>
      error ? { status: 'rejected', reason: error } : { status: 'fulfilled', value: value as Reply },
    );
  }

  function count(command: readonly string[]): void {
    counts.commands += 1;
    const name = command[0]!.toLowerCase();
    counts.byCommand.set(name, (counts.byCommand.get(name) ?? 0) + 1);
  }

  const listening = await listenOnLoopback(server);
  return {
    url: listening.url,
    token,
    counts: () => ({ ...counts, byCommand: new Map(counts.byCommand) }),
    resetCounts: () => void (counts = fresh()),
    holdNext(matches) {
      let came!: () => void;
      let release!: () => void;
      const heldNow = new Promise<void>((resolve) => (came = resolve));
      const released = new Promise<void>((resolve) => (release = resolve));
      hold = { matches, came, released };
      return { held: heldNow, release };
    },
    async stop() {
      await listening.stop();
      // quit(), not disconnect(): an ioredis connection that is disconnected keeps a timer of 2 s to destroy it.
      await Promise.all([commands, transactions].map((connection) => connection.quit().catch(() => undefined)));
    },
  };
}

function fresh(): UpstashBridgeCounts {
  return { requests: 0, commands: 0, byCommand: new Map(), unauthorized: 0 };
}

function isCommand(value: unknown): value is string[] {
  // The client sends every argument as JSON: strings, and numbers it did not stringify; Redis takes both as text.
  return (
    Array.isArray(value) &&
    value.length > 0 &&
    value.every((arg) => typeof arg === 'string' || typeof arg === 'number' || typeof arg === 'boolean')
  );
}

/** One entry of a pipeline's or a transaction's answer. */
function item(outcome: PromiseSettledResult<Reply>, base64: boolean): { result: unknown } | { error: string } {
  return outcome.status === 'fulfilled'
    ? { result: encode(outcome.value, base64, true) }
    : { error: messageOf(outcome.reason) };
}

/**
 * A reply as JSON: strings base64-encoded when asked, but `OK` as the whole result (the client reads it as it is,
 * and decodes every other string); integers as numbers; nil as null.
 */
function encode(reply: Reply, base64: boolean, whole: boolean): unknown {
  if (reply === null || typeof reply === 'number') return reply;
  if (Array.isArray(reply)) return reply.map((element) => encode(element, base64, false));
  const bytes = typeof reply === 'string' ? Buffer.from(reply) : reply;
  if (!base64) return bytes.toString('utf8');
  if (whole && bytes.toString('latin1') === 'OK') return 'OK';
  return bytes.toString('base64');
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

async function read(request: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown;
  } catch {
    return undefined;
  }
}

function answer(response: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  response.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  response.end(text);
}
