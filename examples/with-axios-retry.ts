// Your own axios-retry on the same instance. The order of the two does not matter: a retry goes through the plugin
// again and gets the current token, and the plugin's token calls never pass through your retries (they have
// retries of their own).
import axios from 'axios';
import axiosRetry, { isNetworkOrIdempotentRequestError } from 'axios-retry';
import { attachTokenAuth } from 'axios-token-keeper';

export const api = axios.create({ baseURL: process.env.API_URL ?? 'https://api.example.com' });

axiosRetry(api, {
  retries: 2,
  retryDelay: (count) => count * 50,
  retryCondition: (error) => isNetworkOrIdempotentRequestError(error),
});

export const auth = attachTokenAuth(api, {
  credentials: { username: process.env.API_USERNAME ?? 'jane', password: process.env.API_PASSWORD ?? '' },
});
