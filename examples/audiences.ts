// One user, a token per audience: an identity provider that issues each API behind a gateway a token of its own (an
// `audience`, as Auth0 and Keycloak name it) sees one login per audience. Each audience is an account of one instance,
// with its own pair and renewal; the login adds the audience, and no token goes to another audience's API. It reads
// API_URL, API_USERNAME and API_PASSWORD. Against the emulator (which issues tokens whatever the audience):
// `npm run emulator`, then
// API_URL=http://127.0.0.1:8080 API_USERNAME=demo API_PASSWORD=demo-password npx tsx examples/audiences.ts
import axios from 'axios';
import { attachTokenAuth } from 'axios-token-keeper';

const api = axios.create({ baseURL: process.env.API_URL ?? 'https://gateway.example.com' });
const auth = attachTokenAuth(api, {
  credentials: () => ({ username: process.env.API_USERNAME ?? '', password: process.env.API_PASSWORD ?? '' }),
  // The audience of a request, from its path: its account. A request may also name one, `{ account: 'billing' }`.
  accountOf: (config) => (config.url?.startsWith('/billing/') ? 'billing' : 'orders'),
  // The whole login, as it adds to HTTP Basic: the audience the token is for, the account's name.
  loginRequest: ({ username, password }, audience) => ({
    headers: { Authorization: `Basic ${Buffer.from(`${username}:${password}`).toString('base64')}` },
    params: audience === undefined ? {} : { audience },
  }),
});

async function main(): Promise<void> {
  // Five requests to each API at once: one login per audience.
  const pages = await Promise.all([
    ...Array.from({ length: 5 }, () => api.get('/allocation/api/v1/tracking/order-list')),
    ...Array.from({ length: 5 }, () => api.get('/billing/api/v1/invoices')),
  ]);
  console.log(`${pages.length} pages`);
  for (const audience of ['orders', 'billing']) console.log(audience, auth.account(audience).stats());
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exitCode = 1;
});
