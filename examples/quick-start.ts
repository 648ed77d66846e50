import axios from 'axios';
import { attachTokenAuth } from 'axios-token-keeper';

const api = axios.create({ baseURL: 'https://api.example.com' });

const auth = attachTokenAuth(api, {
  // Asked for only when a login is needed.
  credentials: async () => ({ username: 'jane', password: process.env.SERVICE_PASSWORD ?? '' }),
  // The token service may live elsewhere; its origin also receives the token.
  authBaseURL: 'https://auth.example.com',
});

export async function listOrders(): Promise<unknown> {
  // Logs in on first use, attaches the token, renews it on 401 and replays the request.
  const { data } = await api.get('/allocation/api/v1/tracking/order-list');
  return data;
}

export { auth };
