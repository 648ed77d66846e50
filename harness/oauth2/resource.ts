import { createServer } from 'node:http';
import type { Server } from 'node:http';
import { listenOnLoopback } from '../loopback.js';

/** What the resource server learnt of a bearer token from the authorization server. */
export interface TokenInfo {
  active: boolean;
  /** Whom the token was issued for (a user, or the client itself), echoed in the answer. */
  subject?: string | undefined;
}

/** A resource server on a loopback port: every path answers 200 to an active bearer token, 401 otherwise. */
export interface ResourceServer {
  /** `http://127.0.0.1:<port>`. */
  readonly url: string;
  /** Requests answered 200 and 401 so far. */
  readonly counts: { accepted: number; refused: number };
  /** Each request's bearer token (or null) and the status answered, oldest first. */
  readonly seen: Array<{ token: string | null; status: number }>;
  stop(): Promise<void>;
}

/**
 * A tiny API that trusts no token of its own: it asks the authorization server about each one (`validate`, e.g. RFC
 * 7662 introspection) and answers as RFC 6750 says, `401` with `WWW-Authenticate: Bearer error="invalid_token"`.
 */
export async function startResourceServer(validate: (token: string) => Promise<TokenInfo>): Promise<ResourceServer> {
  const counts = { accepted: 0, refused: 0 };
  const seen: ResourceServer['seen'] = [];
  const server: Server = createServer((req, res) => {
    void (async () => {
      // The body is read whole before answering, so that a replayed POST is seen as it was sent.
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      const token = /^Bearer (\S+)$/.exec(req.headers.authorization ?? '')?.[1] ?? null;
      let info: TokenInfo = { active: false };
      try {
        if (token !== null) info = await validate(token);
      } catch {
        info = { active: false };
      }
      seen.push({ token, status: info.active ? 200 : 401 });
      if (!info.active) {
        counts.refused += 1;
        res.writeHead(401, {
          'Content-Type': 'application/json',
          'WWW-Authenticate': token === null ? 'Bearer' : 'Bearer error="invalid_token"',
        });
        res.end(JSON.stringify({ error: 'invalid_token' }));
        return;
      }
      counts.accepted += 1;
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify({ path: req.url, subject: info.subject, body: Buffer.concat(chunks).toString('utf8') }));
    })();
  });
  return {
    ...(await listenOnLoopback(server)),
    counts,
    seen,
  };
}
