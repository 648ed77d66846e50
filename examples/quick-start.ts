// A service account in Node: the credentials come from the environment. On the emulator that ships with the package
// (`npx axios-token-keeper-emulator` in another terminal), with this file saved as quick-start.ts:
// API_URL=http://127.0.0.1:8080 API_USERNAME=demo API_PASSWORD=demo-password npx tsx quick-start.ts
import axios from 'axios';
import { attachTokenAuth } from 'axios-token-keeper';

// When the token service lives on another host than the API, pass `authBaseURL` too.
const api = axios.create({ baseURL: process.env.API_URL ?? 'https://api.example.com' });
const auth = attachTokenAuth(api, {
  // Asked for only when a login is needed, so a rotated secret is read without a restart.
  credentials: () => ({ username: process.env.API_USERNAME ?? '', password: process.env.API_PASSWORD ?? '' }),
});

// Logs in on first use, puts the token on, renews it when due or refused, and replays the request.
api.get('/allocation/api/v1/tracking/order-list').then(
  ({ data }) => console.log(data, auth.stats()),
  (error: unknown) => {
    console.error(error instanceof Error ? error.message : error);
    process.exitCode = 1;
  },
);
