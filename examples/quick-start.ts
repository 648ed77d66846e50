// Try it on the emulator that ships with the package: `npx axios-token-keeper-emulator` in one terminal (in a clone
// of this repository, `npm run emulator`), then, with this file saved as quick-start.ts, in another:
// API_URL=http://127.0.0.1:8080 API_USERNAME=demo API_PASSWORD=demo-password npx tsx quick-start.ts
import axios from 'axios';
import { attachTokenAuth } from 'axios-token-keeper';

// When the token service lives on another host, pass `authBaseURL` too.
const api = axios.create({ baseURL: process.env.API_URL ?? 'https://api.example.com' });

const auth = attachTokenAuth(api, {
  // Asked for only when a login is needed.
  credentials: async () => ({ username: process.env.API_USERNAME ?? 'jane', password: process.env.API_PASSWORD ?? '' }),
});

async function listOrders(): Promise<unknown> {
  // Logs in on first use, attaches the token, renews it on 401 and replays the request.
  const { data } = await api.get('/allocation/api/v1/tracking/order-list');
  return data;
}

listOrders().then(
  (orders) => console.log(orders, auth.stats()),
  (error: unknown) => {
    console.error(error instanceof Error ? error.message : error);
    process.exitCode = 1;
  },
);
