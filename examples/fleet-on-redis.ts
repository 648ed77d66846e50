// A fleet (replicas, containers, hosts) that shares one account: every process keeps the pair in one Redis, so the
// fleet logs in once and renews once per expiry. A module for your service to import, not a script; it reads API_URL,
// API_USERNAME, API_PASSWORD and REDIS_URL. examples/redis-fleet.ts is the same as a script that npm test runs.
import axios from 'axios';
import Redis from 'ioredis';
import { attachTokenAuth } from 'axios-token-keeper';
import { RedisTokenStore } from 'axios-token-keeper/redis-store';

// Fail fast when Redis is down; the plugin bounds a silent one (`storeTimeoutMs`).
const redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379', { maxRetriesPerRequest: 1 });

export const api = axios.create({ baseURL: process.env.API_URL ?? 'https://api.example.com' });
export const auth = attachTokenAuth(api, {
  credentials: () => ({ username: process.env.API_USERNAME ?? '', password: process.env.API_PASSWORD ?? '' }),
  // One prefix per account. The second connection (pub/sub) hands each new pair to every process at once.
  store: new RedisTokenStore(redis, { prefix: 'tokens:orders-api', subscriber: redis.duplicate() }),
  // Redis down as a token falls due: no process generates one without it; renewals wait for it, up to 15 s.
  whenStoreDown: 'wait', // the default; 'go-alone' serves every request instead, at one login per process
});
