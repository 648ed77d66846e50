// A server that renders pages for its signed-in users (server-side rendering): each user is an account of one axios
// instance, with a pair, a renewal and a budget of their own, and the code that renders a page names nobody: an
// AsyncLocalStorage says whose page it is. It reads API_URL, API_USERNAME and API_PASSWORD (the server's own account,
// for visitors' pages) and PORT (3000). Against the emulator:
// `npm run emulator -- --user demo:demo-password --user alice:alice-password --user bob:bob-password`, then
// API_URL=http://127.0.0.1:8080 API_USERNAME=demo API_PASSWORD=demo-password npx tsx examples/ssr-server.ts
import { AsyncLocalStorage } from 'node:async_hooks';
import { randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import axios from 'axios';
import express from 'express';
import type { NextFunction, Request, Response } from 'express';
import { attachTokenAuth, isTokenAuthError } from 'axios-token-keeper';

/** Whose page is being rendered: the signed-in user, or undefined for a visitor. */
const pageUser = new AsyncLocalStorage<string | undefined>();

const api = axios.create({ baseURL: process.env.API_URL ?? 'https://api.example.com', timeout: 10_000 });
const auth = attachTokenAuth(api, {
  // A request that names no account is for the page's user; a visitor's page uses the default account, the server's.
  accountOf: () => pageUser.getStore(),
  // Only the server's own account has credentials: a user's password serves one login and is not kept, so a session
  // that cannot be renewed fails with NO_CREDENTIALS, "sign in again".
  credentials: (account) =>
    account === undefined
      ? { username: process.env.API_USERNAME ?? '', password: process.env.API_PASSWORD ?? '' }
      : undefined,
  // Users held at once; past it the least recently used idle one is dropped (with this memory store: signed out).
  maxAccounts: 10_000,
});

/** Deep in the render: no account named, no token in sight. */
async function listOrders(): Promise<unknown> {
  return (await api.get('/allocation/api/v1/tracking/order-list')).data;
}

/** Your session store: session id → user. A Map here; Redis or a signed cookie in a server of several processes. */
const sessions = new Map<string, string>();
const sessionOf = (request: Request): string | undefined =>
  /(?:^|;\s*)sid=([\w-]+)/.exec(request.get('cookie') ?? '')?.[1];

const app = express();
app.use(express.json());
// Everything a request does from here on runs as its user.
app.use((request: Request, _response: Response, next: NextFunction) => {
  const sid = sessionOf(request);
  pageUser.run(sid === undefined ? undefined : sessions.get(sid), next);
});

app.post('/sign-in', async (request: Request, response: Response) => {
  const { username, password } = (request.body ?? {}) as { username?: string; password?: string };
  if (!username || !password) return void response.status(400).json({ error: 'username and password, please' });
  // The password a person typed: one login, never refused by tokenBudget, and a wrong one pauses nothing.
  await auth.account(username).login({ username, password });
  const sid = randomUUID();
  sessions.set(sid, username);
  response.cookie('sid', sid, { httpOnly: true, sameSite: 'lax' }).json({ user: username });
});

app.post('/sign-out', async (request: Request, response: Response) => {
  const user = pageUser.getStore();
  if (user !== undefined) await auth.account(user).logout();
  sessions.delete(sessionOf(request) ?? '');
  response.clearCookie('sid').json({});
});

app.get('/orders', async (_request: Request, response: Response) => {
  response.json({ orders: await listOrders() }); // your renderer here
});

// A session the plugin cannot renew, or a refused sign-in, is the user's to fix; other token trouble is the server's.
app.use((error: unknown, _request: Request, response: Response, next: NextFunction) => {
  if (!isTokenAuthError(error)) return next(error);
  const signInAgain = ['NO_CREDENTIALS', 'LOGGED_OUT', 'LOGIN_REJECTED'].includes(error.code);
  response.status(signInAgain ? 401 : 503).json({ error: error.code });
});

const server = app.listen(Number(process.env.PORT ?? 3000), '127.0.0.1', (error) => {
  if (error) {
    console.error(error.message);
    process.exitCode = 1;
  } else console.log(`listening on http://127.0.0.1:${(server.address() as AddressInfo).port}`);
});
