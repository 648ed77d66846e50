// An AWS Lambda function (or a Netlify or Vercel Node function) that shares the account's pair with every other
// instance through Upstash's REST Redis: a cold start finds the pair there and logs in only when no instance has yet.
// It is not a script: the platform imports it and calls `handler`. It reads API_URL, API_USERNAME, API_PASSWORD,
// UPSTASH_REDIS_REST_URL and UPSTASH_REDIS_REST_TOKEN.
import axios from 'axios';
import { Redis } from '@upstash/redis';
import { attachTokenAuth } from 'axios-token-keeper';
import { RedisTokenStore } from 'axios-token-keeper/redis-store';

// Module scope: made once per cold start, kept while the instance stays warm. No `subscriber`: REST has no pub/sub.
const store = new RedisTokenStore(Redis.fromEnv(), { prefix: `tokens:${process.env.API_USERNAME ?? ''}` });
const api = axios.create({ baseURL: process.env.API_URL });
const auth = attachTokenAuth(api, {
  credentials: () => ({ username: process.env.API_USERNAME ?? '', password: process.env.API_PASSWORD ?? '' }),
  store,
});

export async function handler(event: { page?: number }): Promise<{ statusCode: number; body: string }> {
  const { data } = await api.get<unknown>('/allocation/api/v1/tracking/order-list', {
    params: { page: event.page ?? 0 },
  });
  // The platform freezes the instance once the handler returns: the pair goes to the store before.
  await auth.flush();
  return { statusCode: 200, body: JSON.stringify(data) };
}
