// Your own axios-retry on the same instance. The order of the two does not matter: a retry goes through the plugin
// again and gets the current token, and the plugin's token calls never pass through your retries (they have
// retries of their own). Run it against the emulator: `npm run emulator`, then
// API_URL=http://127.0.0.1:8080 API_USERNAME=demo API_PASSWORD=demo-password npx tsx examples/with-axios-retry.ts
import axios from 'axios';
import axiosRetry, { isNetworkOrIdempotentRequestError } from 'axios-retry';
import { attachTokenAuth } from 'axios-token-keeper';

const api = axios.create({ baseURL: process.env.API_URL ?? 'https://api.example.com' });

axiosRetry(api, {
  retries: 2,
  retryDelay: (count) => count * 50,
  retryCondition: (error) => isNetworkOrIdempotentRequestError(error),
  onRetry: (count, error) => console.log(`retry ${count} after ${error.response?.status ?? error.code}`),
});

const auth = attachTokenAuth(api, {
  credentials: { username: process.env.API_USERNAME ?? 'jane', password: process.env.API_PASSWORD ?? '' },
});

api.get('/allocation/api/v1/tracking/order-list').then(
  ({ status }) => console.log(`answered ${status}`, auth.stats()),
  (error: unknown) => {
    console.error(error instanceof Error ? error.message : error);
    process.exitCode = 1;
  },
);
