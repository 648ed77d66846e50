/**
 * A stand-in of a Django REST framework service with djangorestframework-simplejwt, over node:http on a loopback
 * port, for end-to-end tests of the `simpleJwt()` preset. No npm package serves SimpleJWT's endpoints, so this one
 * mimics what SimpleJWT documents and answers, with ROTATE_REFRESH_TOKENS and BLACKLIST_AFTER_ROTATION on:
 *
 * - `POST /api/token/` (TokenObtainPairView), JSON or form `{ username, password }`: 200 `{ refresh, access }`; a
 *   missing field 400 `{ "<field>": ["This field is required."] }`; wrong credentials 401
 *   `{ "detail": "No active account found with the given credentials" }`.
 * - `POST /api/token/refresh/` (TokenRefreshView), `{ refresh }`: 200 `{ access, refresh }`, the refresh token sent
 *   blacklisted and a new one (new `jti`, `iat`, `exp`) issued; a bad, expired or wrong-type token 401
 *   `{ "detail": "Token is invalid or expired", "code": "token_not_valid" }`; a blacklisted one 401
 *   `{ "detail": "Token is blacklisted", "code": "token_not_valid" }`.
 * - Any other path under `/api/` behind JWTAuthentication: `Authorization: Bearer <access>`, else 401 with
 *   `WWW-Authenticate: Bearer realm="api"` and `{ "detail": "Given token not valid for any token type", "code":
 *   "token_not_valid", "messages": [...] }` (or, without a token, `{ "detail": "Authentication credentials were not
 *   provided." }`).
 *
 * Tokens are HS256 JWTs with SimpleJWT's claims (`token_type`, `exp`, `iat`, `jti`, `user_id`); `exp` is whole
 * seconds, and a token counts as expired from its `exp` on, as PyJWT checks it.
 */
import { createHmac, randomUUID, timingSafeEqual } from 'node:crypto';
import { createServer } from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { listenOnLoopback } from './loopback.js';

export interface SimpleJwtOptions {
  /** Accounts: username → password. */
  users: Record<string, string>;
  /** ACCESS_TOKEN_LIFETIME, in seconds. @default 300 */
  accessLifetimeSec?: number;
  /** REFRESH_TOKEN_LIFETIME, in seconds. @default 86_400 */
  refreshLifetimeSec?: number;
  /** The service's time in epoch milliseconds; a test may share one with the plugin. @default Date.now */
  clock?: () => number;
}

/** One call the service answered. */
export interface SimpleJwtCall {
  route: 'obtain' | 'refresh' | 'api';
  status: number;
  /** For `refresh`: the refresh token the call sent. */
  refresh?: string;
  /** For `api`: the access token the call carried. */
  access?: string;
}

export interface SimpleJwtService {
  /** `http://127.0.0.1:<port>`. */
  readonly url: string;
  /** Every call answered, oldest first. */
  readonly calls: SimpleJwtCall[];
  /** Every token issued, for leak checks. */
  readonly issued: string[];
  /** Blacklists every refresh token issued so far, as a logout everywhere (the token_blacklist admin) would. */
  blacklistAll(): void;
  stop(): Promise<void>;
}

interface Claims {
  token_type: 'access' | 'refresh';
  exp: number;
  iat: number;
  jti: string;
  user_id: string;
}

const NOT_VALID = { detail: 'Token is invalid or expired', code: 'token_not_valid' };

export async function startSimpleJwt(options: SimpleJwtOptions): Promise<SimpleJwtService> {
  const { users, accessLifetimeSec = 300, refreshLifetimeSec = 86_400, clock = Date.now } = options;
  // SIGNING_KEY: Django's SECRET_KEY by default; any secret of the service's own.
  const key = randomUUID();
  const blacklist = new Set<string>();
  const calls: SimpleJwtCall[] = [];
  const issued: string[] = [];
  const refreshJtis = new Set<string>();

  const sign = (claims: Claims): string => {
    const segment = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
    const unsigned = `${segment({ alg: 'HS256', typ: 'JWT' })}.${segment(claims)}`;
    const token = `${unsigned}.${createHmac('sha256', key).update(unsigned).digest('base64url')}`;
    issued.push(token);
    return token;
  };
  const mint = (type: Claims['token_type'], userId: string): string => {
    const now = clock() / 1000;
    const jti = randomUUID().replace(/-/g, '');
    if (type === 'refresh') refreshJtis.add(jti);
    const lifetime = type === 'access' ? accessLifetimeSec : refreshLifetimeSec;
    return sign({ token_type: type, exp: Math.floor(now + lifetime), iat: Math.floor(now), jti, user_id: userId });
  };
  /** The claims of a token of this type that is well signed and not expired, else undefined. */
  const verify = (token: string, type: Claims['token_type']): Claims | undefined => {
    const [header, payload, signature] = token.split('.');
    if (!header || !payload || !signature) return undefined;
    const expected = createHmac('sha256', key).update(`${header}.${payload}`).digest();
    const given = Buffer.from(signature, 'base64url');
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined;
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as Claims;
    return claims.token_type === type && clock() / 1000 < claims.exp ? claims : undefined;
  };

  const obtain = (body: Record<string, unknown>): [number, unknown] => {
    const missing = ['username', 'password'].filter((field) => typeof body[field] !== 'string' || body[field] === '');
    if (missing.length > 0)
      return [400, Object.fromEntries(missing.map((field) => [field, ['This field is required.']]))];
    const username = body.username as string;
    if (users[username] === undefined || users[username] !== body.password)
      return [401, { detail: 'No active account found with the given credentials' }];
    return [200, { refresh: mint('refresh', username), access: mint('access', username) }];
  };

  const refresh = (body: Record<string, unknown>): [number, unknown] => {
    if (typeof body.refresh !== 'string' || body.refresh === '') return [400, { refresh: ['This field is required.'] }];
    const claims = verify(body.refresh, 'refresh');
    if (!claims) return [401, NOT_VALID];
    if (blacklist.has(claims.jti)) return [401, { detail: 'Token is blacklisted', code: 'token_not_valid' }];
    // ROTATE_REFRESH_TOKENS with BLACKLIST_AFTER_ROTATION: the refresh token sent works once.
    blacklist.add(claims.jti);
    return [200, { access: mint('access', claims.user_id), refresh: mint('refresh', claims.user_id) }];
  };

  const api = (req: IncomingMessage, path: string, text: string): [number, unknown, Record<string, string>?] => {
    const challenge = { 'WWW-Authenticate': 'Bearer realm="api"' };
    const access = /^Bearer (\S+)$/.exec(req.headers.authorization ?? '')?.[1];
    if (access === undefined) return [401, { detail: 'Authentication credentials were not provided.' }, challenge];
    const claims = verify(access, 'access');
    if (!claims) {
      const messages = [{ token_class: 'AccessToken', token_type: 'access', message: 'Token is invalid or expired' }];
      return [
        401,
        { detail: 'Given token not valid for any token type', code: 'token_not_valid', messages },
        challenge,
      ];
    }
    return [200, { user_id: claims.user_id, path, body: text }];
  };

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const text = Buffer.concat(chunks).toString('utf8');
    const path = new URL(req.url ?? '/', 'http://127.0.0.1').pathname;
    let body: Record<string, unknown> = {};
    if (req.headers['content-type']?.startsWith('application/x-www-form-urlencoded'))
      body = Object.fromEntries(new URLSearchParams(text));
    else if (text !== '') {
      try {
        body = JSON.parse(text) as Record<string, unknown>;
      } catch {
        body = {};
      }
    }
    let answer: [number, unknown, Record<string, string>?];
    let call: SimpleJwtCall;
    if (req.method === 'POST' && path === '/api/token/') {
      answer = obtain(body);
      call = { route: 'obtain', status: answer[0] };
    } else if (req.method === 'POST' && path === '/api/token/refresh/') {
      answer = refresh(body);
      call = {
        route: 'refresh',
        status: answer[0],
        ...(typeof body.refresh === 'string' && { refresh: body.refresh }),
      };
    } else if (path.startsWith('/api/')) {
      answer = api(req, path, text);
      const access = /^Bearer (\S+)$/.exec(req.headers.authorization ?? '')?.[1];
      call = { route: 'api', status: answer[0], ...(access !== undefined && { access }) };
    } else {
      res.writeHead(404, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify({ detail: 'Not found.' }));
      return;
    }
    calls.push(call);
    const [status, payload, headers = {}] = answer;
    res.writeHead(status, { ...headers, 'Content-Type': 'application/json' });
    res.end(JSON.stringify(payload));
  };

  return {
    ...(await listenOnLoopback(createServer((req, res) => void handle(req, res)))),
    calls,
    issued,
    blacklistAll: () => {
      for (const jti of refreshJtis) blacklist.add(jti);
    },
  };
}
