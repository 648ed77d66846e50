// A Next.js route handler (app/api/orders/route.ts) on Vercel, in the Node runtime or the edge runtime alike: axios
// with its `fetch` adapter, and the pair shared by every instance through Upstash's REST Redis (Vercel's marketplace
// Redis). Middleware (middleware.ts) imports `api` from a module like this one the same way. It is not a script: Next.js
// imports it. It reads API_URL, API_USERNAME, API_PASSWORD, UPSTASH_REDIS_REST_URL and UPSTASH_REDIS_REST_TOKEN.
import axios from 'axios';
import { Redis } from '@upstash/redis';
import { attachTokenAuth } from 'axios-token-keeper';
import { RedisTokenStore } from 'axios-token-keeper/redis-store';

// 'nodejs' works the same; on 'edge' the store's module needs no Node built-in.
export const runtime = 'edge';

const store = new RedisTokenStore(Redis.fromEnv(), { prefix: `tokens:${process.env.API_USERNAME ?? ''}` });
export const api = axios.create({ baseURL: process.env.API_URL, adapter: 'fetch' });
const auth = attachTokenAuth(api, {
  credentials: () => ({ username: process.env.API_USERNAME ?? '', password: process.env.API_PASSWORD ?? '' }),
  store,
});

export async function GET(request: Request): Promise<Response> {
  const page = new URL(request.url).searchParams.get('page') ?? '0';
  const { data } = await api.get<unknown>('/allocation/api/v1/tracking/order-list', { params: { page } });
  // Written before the function may be frozen (on Vercel, `waitUntil(auth.flush())` does it after the answer).
  await auth.flush();
  return Response.json(data);
}
