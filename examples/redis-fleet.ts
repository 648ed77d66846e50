// One replica of a service that runs as many containers on many hosts: every replica keeps the account's token
// pair in one Redis, renews under its lock, and hears of a new pair through pub/sub. However many replicas start,
// the account logs in once and renews once per expiry. It reads API_URL, API_USERNAME, API_PASSWORD and
// REDIS_URL (redis://127.0.0.1:6379). Against the emulator and a local redis-server: `npm run emulator`, then,
// as many times at once as you like:
// API_URL=http://127.0.0.1:8080 API_USERNAME=demo API_PASSWORD=demo-password npx tsx examples/redis-fleet.ts
import axios from 'axios';
import Redis from 'ioredis';
import { attachTokenAuth } from 'axios-token-keeper';
import { RedisTokenStore } from 'axios-token-keeper/redis-store';

async function main(): Promise<void> {
  const username = process.env.API_USERNAME ?? '';
  // Fail fast when Redis is down (one retry, reconnects 200 ms apart at most); a Redis that is up but silent is
  // bounded by the plugin's `storeTimeoutMs`. What each failure costs: docs/stores.md#when-the-store-is-down.
  const redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379', {
    maxRetriesPerRequest: 1,
    retryStrategy: (times) => Math.min(times * 50, 200),
  });
  const subscriber = redis.duplicate();
  // One prefix per account: the replicas of every service that uses this account share it.
  const store = new RedisTokenStore(redis, { prefix: `token-keeper:${username}`, subscriber });
  const api = axios.create({ baseURL: process.env.API_URL ?? 'https://api.example.com' });
  const auth = attachTokenAuth(api, {
    credentials: () => ({ username, password: process.env.API_PASSWORD ?? '' }),
    store,
  });
  try {
    const pages = await Promise.all(
      Array.from({ length: 25 }, (_, page) => api.get('/allocation/api/v1/tracking/order-list', { params: { page } })),
    );
    console.log(`replica ${process.pid}: ${pages.length} pages`, auth.stats());
  } finally {
    // The pair goes to Redis after the requests that waited for it: written before the connections close.
    await auth.flush();
    auth.eject();
    await store.close();
    redis.disconnect();
    subscriber.disconnect();
  }
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exitCode = 1;
});
