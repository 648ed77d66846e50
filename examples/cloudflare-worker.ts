// A Cloudflare Worker whose isolates share the account's pair through Upstash's REST Redis (Workers cannot open a TCP
// connection to Redis): axios with its `fetch` adapter, and no `nodejs_compat` flag needed for the plugin. It is
// not a script: workerd imports it (`wrangler deploy`). Its bindings (`env`): API_URL, API_USERNAME, API_PASSWORD (a
// secret), UPSTASH_REDIS_REST_URL and UPSTASH_REDIS_REST_TOKEN (a secret).
import axios from 'axios';
import type { AxiosInstance } from 'axios';
import { Redis } from '@upstash/redis/cloudflare';
import { attachTokenAuth } from 'axios-token-keeper';
import type { TokenAuth } from 'axios-token-keeper';
import { RedisTokenStore } from 'axios-token-keeper/redis-store';

export interface Env {
  API_URL: string;
  API_USERNAME: string;
  API_PASSWORD: string;
  UPSTASH_REDIS_REST_URL: string;
  UPSTASH_REDIS_REST_TOKEN: string;
}

/** One per isolate, made at its first request (a Worker sees its bindings only then), kept while it lives. */
let client: { api: AxiosInstance; auth: TokenAuth } | undefined;

function clientOf(env: Env): { api: AxiosInstance; auth: TokenAuth } {
  if (client) return client;
  const redis = new Redis({ url: env.UPSTASH_REDIS_REST_URL, token: env.UPSTASH_REDIS_REST_TOKEN });
  const api = axios.create({ baseURL: env.API_URL, adapter: 'fetch' });
  const auth = attachTokenAuth(api, {
    credentials: { username: env.API_USERNAME, password: env.API_PASSWORD },
    store: new RedisTokenStore(redis, { prefix: `tokens:${env.API_USERNAME}` }),
  });
  return (client = { api, auth });
}

export default {
  async fetch(request: Request, env: Env, context: { waitUntil(promise: Promise<unknown>): void }): Promise<Response> {
    const { api, auth } = clientOf(env);
    const page = new URL(request.url).searchParams.get('page') ?? '0';
    const { data } = await api.get<unknown>('/allocation/api/v1/tracking/order-list', { params: { page } });
    // The store's writes after the answer, which the isolate is kept alive for.
    context.waitUntil(auth.flush());
    return Response.json(data);
  },
};
