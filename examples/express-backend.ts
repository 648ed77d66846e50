// One shared instance for a whole Express backend: every route and every concurrent request share its tokens,
// so the backend logs in once and renews once per expiry, however busy it is. It reads API_URL, API_USERNAME,
// API_PASSWORD and PORT (3000). Against the emulator: `npm run emulator`, then
// API_URL=http://127.0.0.1:8080 API_USERNAME=demo API_PASSWORD=demo-password npx tsx examples/express-backend.ts
// and curl http://127.0.0.1:3000/orders
import type { AddressInfo } from 'node:net';
import axios from 'axios';
import express from 'express';
import type { NextFunction, Request, Response } from 'express';
import { attachTokenAuth, isTokenAuthError } from 'axios-token-keeper';

const upstream = axios.create({ baseURL: process.env.API_URL ?? 'https://api.example.com', timeout: 10_000 });

const auth = attachTokenAuth(upstream, {
  credentials: () => ({ username: process.env.API_USERNAME ?? '', password: process.env.API_PASSWORD ?? '' }),
});

const app = express();

app.get('/orders', async (request: Request, response: Response) => {
  const { data } = await upstream.get<unknown>('/allocation/api/v1/tracking/order-list', { params: request.query });
  response.json(data);
});

app.get('/health/tokens', (_request: Request, response: Response) => {
  response.json(auth.stats());
});

// Token trouble is the backend's, not the caller's: answer 503 with the code, never a secret.
app.use((error: unknown, _request: Request, response: Response, next: NextFunction) => {
  if (isTokenAuthError(error)) response.status(503).json({ error: error.code });
  else next(error);
});

const server = app.listen(Number(process.env.PORT ?? 3000), '127.0.0.1', (error) => {
  if (error) {
    console.error(error.message);
    process.exitCode = 1;
  } else console.log(`listening on http://127.0.0.1:${(server.address() as AddressInfo).port}`);
});
