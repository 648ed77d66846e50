// A resource server for certificate-bound access tokens (RFC 8705 §3), over HTTPS with client certificates asked for:
// on every request it learns the token's binding from the provider (RFC 7662 introspection) and checks it against
// the certificate the TLS connection came with. It runs in the test's process: node:https and node:crypto are all it
// needs.
import { createHash } from 'node:crypto';
import { createServer } from 'node:https';
import type { Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { TLSSocket } from 'node:tls';
import type { Introspection } from './oidc.js';

/**
 * Why a request was refused, checked in this order: no `Bearer` token, a token the provider says is not active, a
 * token not bound to a certificate (no `cnf["x5t#S256"]`), no client certificate on the connection, a certificate
 * whose thumbprint is not the token's.
 */
export type MtlsRefusal = 'no_token' | 'inactive_token' | 'unbound_token' | 'no_certificate' | 'certificate_mismatch';

/** One request as the resource server saw it. */
export interface MtlsResourceRequest {
  method: string;
  path: string;
  /** 200, 401, or 500 (introspection failed, which is no client's fault). */
  status: number;
  reason: MtlsRefusal | 'server_error' | null;
  /** The thumbprint of the connection's client certificate, or null: none. */
  certificate: string | null;
  /** The thumbprint the token is bound to, or null: not learnt (no token, inactive, unbound). */
  bound: string | null;
}

/** Requests accepted, and refused by reason (a reason never seen is absent). */
export interface MtlsResourceCounts {
  accepted: number;
  refused: Partial<Record<MtlsRefusal, number>>;
}

/**
 * Every path answers 200 `{ path, subject, body }` to `Authorization: Bearer <token>` for an active token bound to the
 * certificate of the request's connection, and 401 `WWW-Authenticate: Bearer error="invalid_token"` otherwise, as RFC
 * 8705 §3 says (a request without a token: `Bearer` alone).
 */
export interface MtlsResourceServer {
  /** `https://127.0.0.1:<port>`. */
  readonly url: string;
  /** Requests accepted and refused so far. */
  readonly counts: MtlsResourceCounts;
  /** Every request so far, oldest first. */
  readonly requests: MtlsResourceRequest[];
  stop(): Promise<void>;
}

/** A refused request's reason, thrown from the checks. */
class Refusal extends Error {
  constructor(readonly reason: MtlsRefusal) {
    super(reason);
  }
}

/**
 * Starts the resource server on 127.0.0.1 with `tls` (its key and certificate, and the CA it asks client certificates
 * of). A connection without a certificate, or with one the CA did not issue, is still let in: the refusal is then this
 * server's, a 401 the test counts, not a failed handshake. `introspect` asks the provider about a token (`introspector`
 * of oidc.ts).
 */
export async function startMtlsResourceServer(options: {
  tls: { key: string; cert: string; ca: string };
  introspect: (token: string) => Promise<Introspection>;
}): Promise<MtlsResourceServer> {
  const counts: MtlsResourceCounts = { accepted: 0, refused: {} };
  const requests: MtlsResourceRequest[] = [];
  const { key, cert, ca } = options.tls;
  const server: Server = createServer({ key, cert, ca, requestCert: true, rejectUnauthorized: false }, (req, res) => {
    void (async () => {
      // The body is read whole before answering, so that a replayed POST is seen as it was sent.
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      const peer = (req.socket as TLSSocket).getPeerX509Certificate();
      const seen: MtlsResourceRequest = {
        method: req.method ?? 'GET',
        path: req.url ?? '/',
        status: 200,
        reason: null,
        certificate: peer ? createHash('sha256').update(peer.raw).digest('base64url') : null,
        bound: null,
      };
      requests.push(seen);
      const token = /^Bearer (\S+)$/.exec(req.headers.authorization ?? '')?.[1];
      try {
        if (token === undefined) throw new Refusal('no_token');
        const info = await options.introspect(token);
        if (!info.active) throw new Refusal('inactive_token');
        seen.bound = info.cnf?.['x5t#S256'] ?? null;
        if (seen.bound === null) throw new Refusal('unbound_token');
        if (seen.certificate === null) throw new Refusal('no_certificate');
        if (seen.certificate !== seen.bound) throw new Refusal('certificate_mismatch');
        counts.accepted += 1;
        res.writeHead(200, { 'Content-Type': 'application/json' });
        res.end(
          JSON.stringify({
            path: req.url,
            subject: info.sub ?? info.client_id,
            body: Buffer.concat(chunks).toString('utf8'),
          }),
        );
      } catch (error) {
        if (!(error instanceof Refusal)) {
          // Not the client's fault (the provider did not answer): no challenge, so that no client renews for it.
          Object.assign(seen, { status: 500, reason: 'server_error' });
          res.writeHead(500, { 'Content-Type': 'application/json' });
          res.end(JSON.stringify({ error: 'server_error' }));
          return;
        }
        Object.assign(seen, { status: 401, reason: error.reason });
        counts.refused[error.reason] = (counts.refused[error.reason] ?? 0) + 1;
        res.writeHead(401, {
          'Content-Type': 'application/json',
          'WWW-Authenticate': error.reason === 'no_token' ? 'Bearer' : 'Bearer error="invalid_token"',
        });
        res.end(JSON.stringify({ error: 'invalid_token' }));
      }
    })();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `https://127.0.0.1:${port}`,
    counts,
    requests,
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
