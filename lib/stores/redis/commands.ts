// The one vocabulary RedisTokenStore speaks to Redis, whatever the client: the commands it sends, the subscriptions it
// holds, and the replies as it reads them. Each family's adapter (ioredis.ts, node-redis.ts, rest.ts) speaks it;
// adapters.ts picks the adapter of a client.
import type { ReplicaWaits, RedisNode } from './replicas.js';

/** A reply as the store reads it, whatever the client and the protocol: no Buffer, no undefined, no bigint. */
export type RedisReply = string | number | null | RedisReply[];

/** The commands the store sends, in one vocabulary whatever the client. */
export interface RedisCommands {
  /** Runs `script` with its keys and arguments; the reply normalised. */
  eval(script: string, keys: readonly string[], args: readonly (string | number)[]): Promise<RedisReply>;
  /**
   * Runs `script`, a write that answers 1 when it wrote, as `eval` does; when it wrote, waits up to `waitMs` for a
   * replica of the node that took it to have it (see ReplicaWaits), on the same connection, before answering.
   */
  write(
    script: string,
    keys: readonly string[],
    args: readonly (string | number)[],
    waitMs: number,
  ): Promise<RedisReply>;
  /** The value of `key`, or null. */
  get(key: string): Promise<string | null>;
}

/** The channels listened to on the subscriber connection, each with one listener of its messages. */
export interface RedisSubscription {
  /**
   * Subscribes to `channel` and calls `onMessage` with each of its messages; when SUBSCRIBE fails, it listens no more.
   * A channel listened to already is not listened to twice: the caller holds one listener per channel.
   */
  listen(channel: string, onMessage: (message: string) => void): Promise<void>;
  /** Stops listening to `channel`. */
  stop(channel: string): Promise<void>;
}

/** A write's reply, once a replica of the node that took it has it (or `waitMs` passed), when it wrote (1). */
export async function replicated(
  answer: RedisReply,
  node: () => RedisNode | undefined,
  replicas: ReplicaWaits,
  waitMs: number,
): Promise<RedisReply> {
  const taken = answer === 1 || answer === '1' ? node() : undefined;
  if (taken) await replicas.after(taken, waitMs);
  return answer;
}

/** A text reply: a string, from a Buffer too (a client that returns them); null for none, whichever way it came. */
export function text(value: unknown): string | null {
  if (value === null || value === undefined) return null;
  if (typeof value === 'string') return value;
  if (value instanceof Uint8Array) return UTF8.decode(value);
  // A number or a boolean where text was expected (RESP3 has both); anything else as JSON, never "[object Object]",
  // which is also how a record @upstash/redis parsed as JSON (its `automaticDeserialization`) is given back.
  if (typeof value === 'number' || typeof value === 'bigint' || typeof value === 'boolean') return String(value);
  return JSON.stringify(value);
}

/** A script's reply as RESP2 and RESP3 both give it, in plain strings, numbers and arrays. */
export function reply(value: unknown): RedisReply {
  if (Array.isArray(value)) return value.map(reply);
  if (typeof value === 'number') return value;
  if (typeof value === 'bigint') return Number(value);
  return text(value);
}

/** Decodes the byte replies: one decoder for them all. */
const UTF8 = new TextDecoder();

/** An integer reply, whether the client gave it as a number or as a string (ioredis' `stringNumbers`). */
export function integer(reply: RedisReply | undefined): number {
  return typeof reply === 'number' ? reply : Number(reply);
}
