import { createServer } from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import OAuth2Server from '@node-oauth/oauth2-server';
import type { TokenCall } from './token-call.js';
import { listenOnLoopback } from '../loopback.js';

export interface NodeOAuthClient {
  id: string;
  secret: string;
  grants: string[];
}

export interface NodeOAuthUser {
  username: string;
  password: string;
}

/**
 * @node-oauth/oauth2-server on a loopback port: its token endpoint at `/oauth/token` (the password and refresh_token
 * grants, a new refresh token on every refresh, the used one revoked), and an API under `/api/` that its
 * `authenticate()` guards. The server's logic is the package's; the model, the storage it asks for, lives here in
 * memory, and the harness reaches into it only to age or revoke tokens as time or an administrator would.
 */
export interface NodeOAuthServer {
  /** `http://127.0.0.1:<port>`. */
  readonly url: string;
  /** Every call of the token endpoint, oldest first. */
  readonly tokenCalls: TokenCall[];
  /** API requests the server's `authenticate()` accepted and refused. */
  readonly api: { accepted: number; refused: number };
  /** Ends the life of every access token issued so far, as their `accessTokenLifetime` would. */
  expireAccessTokens(): void;
  /** Revokes every refresh token issued so far, as an administrator ending the user's sessions would. */
  revokeRefreshTokens(): void;
  /** Whether the server still holds this refresh token (it revokes each one the refresh_token grant uses). */
  holdsRefreshToken(token: string): boolean;
  stop(): Promise<void>;
}

export async function startNodeOAuthServer(options: {
  clients: NodeOAuthClient[];
  users: NodeOAuthUser[];
  accessTokenLifetimeSec: number;
}): Promise<NodeOAuthServer> {
  const accessTokens = new Map<string, OAuth2Server.Token>();
  const refreshTokens = new Map<string, OAuth2Server.RefreshToken>();
  const clientOf = (entry: NodeOAuthClient): OAuth2Server.Client => ({ id: entry.id, grants: entry.grants });

  // The model is the storage the server asks for; in memory, so each answers at once.
  const model: OAuth2Server.PasswordModel & OAuth2Server.RefreshTokenModel = {
    getClient: (clientId: string, clientSecret: string | null) => {
      const entry = options.clients.find((client) => client.id === clientId && client.secret === clientSecret);
      return Promise.resolve(entry ? clientOf(entry) : false);
    },
    getUser: (username: string, password: string) => {
      const user = options.users.find((entry) => entry.username === username && entry.password === password);
      return Promise.resolve(user ? { username: user.username } : false);
    },
    saveToken: (token, client, user) => {
      const saved = { ...token, client, user };
      accessTokens.set(token.accessToken, saved);
      if (token.refreshToken) {
        refreshTokens.set(token.refreshToken, {
          refreshToken: token.refreshToken,
          refreshTokenExpiresAt: token.refreshTokenExpiresAt,
          scope: token.scope,
          client,
          user,
        });
      }
      return Promise.resolve(saved);
    },
    getAccessToken: (accessToken: string) => Promise.resolve(accessTokens.get(accessToken) ?? false),
    getRefreshToken: (refreshToken: string) => Promise.resolve(refreshTokens.get(refreshToken) ?? false),
    revokeToken: (token) => Promise.resolve(refreshTokens.delete(token.refreshToken)),
  };
  const oauth = new OAuth2Server({ model, accessTokenLifetime: options.accessTokenLifetimeSec });
  const tokenCalls: TokenCall[] = [];
  const api = { accepted: 0, refused: 0 };

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const text = Buffer.concat(chunks).toString('utf8');
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const form = Object.fromEntries(new URLSearchParams(text));
    const request = new OAuth2Server.Request({
      method: req.method ?? 'GET',
      headers: req.headers as Record<string, string>,
      query: Object.fromEntries(url.searchParams),
      body: req.headers['content-type']?.startsWith('application/x-www-form-urlencoded') ? form : {},
    });
    const response = new OAuth2Server.Response();
    if (req.method === 'POST' && url.pathname === '/oauth/token') {
      try {
        await oauth.token(request, response);
      } catch {
        // The server put its error answer (status, body, WWW-Authenticate) in `response`.
      }
      tokenCalls.push({
        grantType: form.grant_type ?? null,
        refreshToken: form.refresh_token ?? null,
        clientId: namedClient(req.headers.authorization) ?? form.client_id ?? null,
        status: response.status ?? 500,
        error: (response.body as { error?: string } | undefined)?.error ?? null,
      });
    } else if (url.pathname.startsWith('/api/')) {
      try {
        const token = await oauth.authenticate(request, response);
        api.accepted += 1;
        response.status = 200;
        response.body = { path: url.pathname, subject: (token.user as { username: string }).username, body: text };
      } catch (error) {
        api.refused += 1;
        const { code, name } = error as { code?: number; name?: string };
        response.status = code ?? 500;
        response.body = { error: name };
      }
    } else {
      response.status = 404;
      response.body = { error: 'not_found' };
    }
    res.writeHead(response.status ?? 500, { ...response.headers, 'content-type': 'application/json' });
    res.end(JSON.stringify(response.body ?? {}));
  };

  return {
    ...(await listenOnLoopback(createServer((req, res) => void handle(req, res)))),
    tokenCalls,
    api,
    expireAccessTokens: () => {
      for (const token of accessTokens.values()) token.accessTokenExpiresAt = new Date(Date.now() - 1000);
    },
    revokeRefreshTokens: () => refreshTokens.clear(),
    holdsRefreshToken: (token) => refreshTokens.has(token),
  };
}

/** The client id of a Basic header (RFC 6749 §2.3.1: form-encoded before it was joined), if there is one. */
function namedClient(authorization: string | undefined): string | undefined {
  const encoded = /^Basic (\S+)$/.exec(authorization ?? '')?.[1];
  if (!encoded) return undefined;
  const decoded = Buffer.from(encoded, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  return colon < 0 ? undefined : decodeURIComponent(decoded.slice(0, colon).replace(/\+/g, ' '));
}
