// The REST Redis of serverless and edge platforms: an `@upstash/redis` client (`new Redis({ url, token })`, from
// `@upstash/redis`, `/cloudflare` or `/fastly`; Vercel KV's is one too), behind the store's one vocabulary. Each
// command is one HTTPS request (or shares one, with the client's automatic pipelining); there is no connection to keep
// and no pub/sub, so the store polls where it would listen (see RedisTokenStore and docs/stores.md). The library is
// not imported: the client is recognised by its shape.
import { reply, text } from './commands.js';
import type { RedisCommands } from './commands.js';

/** An `@upstash/redis` client, as the store uses it: its scripts, and `GET`. */
export interface UpstashClientLike {
  /**
   * A script the client runs by `EVALSHA`, sending it again by `EVAL` when Redis does not know it yet (`NOSCRIPT`):
   * one command per run once loaded, the script's text sent once per Redis.
   */
  createScript(script: string): UpstashScriptLike;
  /** `EVALSHA`, which the scripts use. */
  evalsha(sha1: string, keys: string[], args: string[]): Promise<unknown>;
  /** `GET`; the client parses JSON it finds there unless made with `automaticDeserialization: false`. */
  get(key: string): Promise<unknown>;
  /** `pipeline()`: what tells a client (which runs commands) from one of its pipelines (which queues them). */
  pipeline(): unknown;
}

/** A script of an `@upstash/redis` client, as `createScript()` makes it. */
export interface UpstashScriptLike {
  /** Runs the script with its keys and arguments: `EVALSHA`, then `EVAL` once when Redis answers `NOSCRIPT`. */
  exec(keys: string[], args: string[]): Promise<unknown>;
}

/** The fields an `@upstash/redis` client is told apart by (all read, none called, before it is accepted). */
interface RestShape {
  createScript?: unknown;
  evalsha?: unknown;
  get?: unknown;
  pipeline?: unknown;
  exec?: unknown;
  status?: unknown;
  isOpen?: unknown;
}

/** Whether `value` is shaped as an `@upstash/redis` client (or a pipeline of one, which is refused). */
export function looksLikeRestClient(value: unknown): boolean {
  if (value === null || typeof value !== 'object') return false;
  const shape = value as RestShape;
  // ioredis has `status`, node-redis `isOpen`: both have `get`, neither `createScript`, but a mixin could.
  if (shape.status !== undefined || shape.isOpen !== undefined) return false;
  return typeof shape.evalsha === 'function' && typeof shape.get === 'function';
}

/**
 * The refusal of an `@upstash/redis`-shaped object the store cannot use, or undefined for one it can: a pipeline or a
 * transaction (`redis.pipeline()`, `redis.multi()`, which queue commands until `exec()` instead of running them), or a
 * client without scripts (`createScript`, from @upstash/redis 1.0).
 */
export function restClientProblem(value: unknown): string | undefined {
  const shape = value as RestShape;
  if (typeof shape.exec === 'function' && typeof shape.pipeline !== 'function') {
    return (
      'RedisTokenStore: the first argument is an @upstash/redis pipeline or transaction (`redis.pipeline()`, ' +
      '`redis.multi()`), which queues commands until `exec()`: pass the client itself, `new Redis({ url, token })`.'
    );
  }
  if (typeof shape.createScript !== 'function' || typeof shape.pipeline !== 'function') {
    return (
      'RedisTokenStore: the first argument looks like a REST Redis client, but has no `createScript()` and ' +
      '`pipeline()`, which the store runs its scripts with: pass an @upstash/redis client (1.0 or later), ' +
      '`new Redis({ url, token })`.'
    );
  }
  return undefined;
}

/** What the store tells a user who passes a `subscriber` with a REST client. */
export const REST_HAS_NO_PUBSUB =
  'RedisTokenStore: `subscriber` cannot be used with an @upstash/redis client: its REST protocol keeps no ' +
  'connection to listen on. Leave `subscriber` out: the store reads the pair where a request would renew, and polls ' +
  'the lock every `pollMs` while another holder renews (docs/stores.md says what that costs).';

/** A reply of the REST client: what JSON gives (the client may have parsed a stored string as JSON). */
export type RestReply = unknown;

/** The store's two commands on a REST client: each script run by EVALSHA (EVAL once), and GET; errors cleaned. */
export function restCommands(client: UpstashClientLike): {
  eval(script: string, keys: readonly string[], args: readonly (string | number)[]): Promise<RestReply>;
  get(key: string): Promise<RestReply>;
} {
  // One Script per text: its SHA-1 is computed once (WebCrypto, in the client), and it is loaded once per Redis.
  const scripts = new Map<string, ReturnType<UpstashClientLike['createScript']>>();
  const scriptOf = (text: string) => {
    let script = scripts.get(text);
    if (!script) scripts.set(text, (script = client.createScript(text)));
    return script;
  };
  return {
    eval: (script, keys, args) => cleaned(scriptOf(script).exec([...keys], args.map(String))),
    get: (key) => cleaned(client.get(key)),
  };
}

/**
 * The client's error without the command it ran: @upstash/redis appends `, command was: [...]` to the error of a
 * command it sent alone, and the store's writes carry the tokens.
 */
async function cleaned<T>(answer: Promise<T>): Promise<T> {
  try {
    return await answer;
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    const cut = message.indexOf(', command was:');
    // A body that was not JSON is in the message too: only that it was not is kept.
    const kept = message.startsWith('Unable to parse response body')
      ? 'Unable to parse response body'
      : cut === -1
        ? message
        : message.slice(0, cut);
    // eslint-disable-next-line preserve-caught-error -- no cause on purpose: the client's error holds the command
    throw new Error(kept);
  }
}

/**
 * The adapter of @upstash/redis: each script by EVALSHA (see restCommands). A write does not wait for a replica: the
 * REST endpoint answers for its database, whose replication is Upstash's.
 */
export function upstashCommands(client: UpstashClientLike): RedisCommands {
  const rest = restCommands(client);
  const evaluate = async (script: string, keys: readonly string[], args: readonly (string | number)[]) =>
    reply(await rest.eval(script, keys, args));
  return {
    eval: evaluate,
    write: (script, keys, args) => evaluate(script, keys, args),
    get: async (key) => text(await rest.get(key)),
  };
}
