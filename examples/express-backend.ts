// One shared instance for a whole Express backend: every route and every concurrent request share its tokens,
// so the backend logs in once and renews once per expiry, however busy it is.
import axios from 'axios';
import express from 'express';
import type { NextFunction, Request, Response } from 'express';
import { attachTokenAuth, isTokenAuthError } from 'axios-token-keeper';

const upstream = axios.create({ baseURL: process.env.API_URL ?? 'https://api.example.com', timeout: 10_000 });

export const auth = attachTokenAuth(upstream, {
  credentials: () => ({ username: process.env.API_USERNAME ?? '', password: process.env.API_PASSWORD ?? '' }),
});

export const app = express();

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

if (require.main === module) app.listen(Number(process.env.PORT ?? 3000), '127.0.0.1');
