// An AWS Lambda function in a VPC that shares the account's pair with every other instance through ElastiCache
// (Redis or Valkey) over ioredis. It is not a script: Lambda imports it and calls `handler`. It reads API_URL,
// API_USERNAME, API_PASSWORD and REDIS_URL (`rediss://…` for ElastiCache with TLS).
import axios from 'axios';
import Redis from 'ioredis';
import { attachTokenAuth } from 'axios-token-keeper';
import { RedisTokenStore } from 'axios-token-keeper/redis-store';

// Module scope: one connection per instance, kept while it stays warm. No `subscriber`: a frozen instance hears
// nothing anyway, and the store reads the pair where a request would renew. A connection lost while frozen comes back
// on its own; one retry, so that a request never waits long on a Redis that is gone.
const redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379', { maxRetriesPerRequest: 1 });
const store = new RedisTokenStore(redis, { prefix: `tokens:${process.env.API_USERNAME ?? ''}` });
const api = axios.create({ baseURL: process.env.API_URL });
const auth = attachTokenAuth(api, {
  credentials: () => ({ username: process.env.API_USERNAME ?? '', password: process.env.API_PASSWORD ?? '' }),
  store,
});

export async function handler(event: { page?: number }): Promise<{ statusCode: number; body: string }> {
  const { data } = await api.get<unknown>('/allocation/api/v1/tracking/order-list', {
    params: { page: event.page ?? 0 },
  });
  await auth.flush();
  return { statusCode: 200, body: JSON.stringify(data) };
}

/** For a test or a local run: closes the connection, which Lambda never needs to. */
export function close(): void {
  redis.disconnect();
}
