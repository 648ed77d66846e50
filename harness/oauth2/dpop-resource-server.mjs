// A resource server that accepts DPoP-bound access tokens only (RFC 9449 §7), for the interop tests. jose (ESM only,
// so this runs in a child process that harness/oauth2/dpop-resource.ts starts) verifies each proof; the token's key
// binding (`cnf.jkt`) comes from RFC 7662 introspection at the provider, as the `resource-server` client. Every answer
// carries this server's current nonce in `DPoP-Nonce`, and a proof must carry it.
//
// Its argument (argv[2], JSON): { issuer, resourceServerSecret, iatWindowSec }. It prints {"url": "http://127.0.0.1:<port>"}
// once it listens, and exits when its stdin closes or on SIGTERM. The test reads GET /__harness/counts (accepted, and
// refused by reason), GET /__harness/requests (each request's method, path, status, reason, the proof's key thumbprint and alg), GET
// /__harness/nonce, and rotates the nonce with POST /__harness/nonce.
/* global fetch */
import { Buffer } from 'node:buffer';
import { createHash, randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import { URL, URLSearchParams } from 'node:url';
import { calculateJwkThumbprint, EmbeddedJWK, jwtVerify } from 'jose';

const { issuer, resourceServerSecret, iatWindowSec = 300 } = JSON.parse(process.argv[2] ?? '{}');
const ALGORITHMS = ['ES256', 'EdDSA'];
const ALGS = `algs="${ALGORITHMS.join(' ')}"`;

const server = createServer();
await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
const origin = `http://127.0.0.1:${server.address().port}`;

let nonce = randomBytes(16).toString('base64url');
const jtis = new Set();
const counts = { accepted: 0, refused: {} };
const requests = [];

/** A request refused: the reason the test counts, and the RFC 9449 error code the client is told. */
class Refusal extends Error {
  constructor(reason, error) {
    super(reason);
    this.reason = reason;
    this.error = error;
  }
}

const refuse = (reason, error) => {
  throw new Refusal(reason, error);
};

/** The token of an `Authorization: DPoP <token>` header, or a refusal: no other scheme is accepted. */
function tokenOf(authorization) {
  const token = /^DPoP ([\w.~+/-]+=*)$/.exec(authorization ?? '')?.[1];
  return token ?? refuse('not_dpop_scheme', authorization ? 'invalid_token' : null);
}

/** RFC 9449 §4.3: the proof's signature by its own key, and its claims for this request; its key's thumbprint. */
async function checkProof(req, token) {
  const header = req.headers.dpop;
  // Node joins repeated headers with ", ", which a compact JWS never holds: one proof, and only one.
  if (typeof header !== 'string' || header === '' || header.includes(',')) refuse('no_proof', 'invalid_dpop_proof');
  let verified;
  try {
    verified = await jwtVerify(header, EmbeddedJWK, { typ: 'dpop+jwt', algorithms: ALGORITHMS });
  } catch {
    refuse('bad_proof', 'invalid_dpop_proof');
  }
  const { payload, protectedHeader } = verified;
  if (payload.htm !== req.method) refuse('htm_mismatch', 'invalid_dpop_proof');
  if (!sameTarget(payload.htu, req.url)) refuse('htu_mismatch', 'invalid_dpop_proof');
  const now = Math.floor(Date.now() / 1000);
  if (typeof payload.iat !== 'number' || Math.abs(now - payload.iat) > iatWindowSec)
    refuse('iat_not_recent', 'invalid_dpop_proof');
  if (typeof payload.jti !== 'string' || payload.jti === '' || jtis.has(payload.jti))
    refuse('jti_replayed', 'invalid_dpop_proof');
  jtis.add(payload.jti);
  if (payload.ath !== createHash('sha256').update(token).digest('base64url'))
    refuse('ath_mismatch', 'invalid_dpop_proof');
  if (payload.nonce !== nonce) refuse('use_dpop_nonce', 'use_dpop_nonce');
  return { jkt: await calculateJwkThumbprint(protectedHeader.jwk), alg: protectedHeader.alg };
}

/** Whether a proof's `htu` names this request's URL, without its query and fragment (RFC 9449 §4.3, 9). */
function sameTarget(htu, path) {
  try {
    const claimed = new URL(htu);
    const actual = new URL(path, origin);
    claimed.search = claimed.hash = actual.search = '';
    return claimed.href === actual.href;
  } catch {
    return false;
  }
}

/** RFC 7662 at the provider: the token must be active and bound to the proof's key. Its subject. */
async function checkBinding(token, jkt) {
  const auth = `${encodeURIComponent('resource-server')}:${encodeURIComponent(resourceServerSecret)}`;
  const answer = await fetch(`${issuer}/token/introspection`, {
    method: 'POST',
    headers: { Authorization: `Basic ${Buffer.from(auth).toString('base64')}` },
    body: new URLSearchParams({ token }),
  });
  if (!answer.ok) throw new Error(`introspection answered HTTP ${answer.status}`);
  const info = await answer.json();
  if (!info.active) refuse('inactive_token', 'invalid_token');
  if (typeof info.cnf?.jkt !== 'string') refuse('unbound_token', 'invalid_token');
  if (info.cnf.jkt !== jkt) refuse('jkt_mismatch', 'invalid_token');
  return info.sub ?? info.client_id;
}

function harness(req, res) {
  if (req.method === 'POST' && req.url === '/__harness/nonce') nonce = randomBytes(16).toString('base64url');
  const bodies = {
    '/__harness/counts': counts,
    '/__harness/requests': requests,
    '/__harness/nonce': { nonce },
  };
  const body = bodies[req.url];
  res.writeHead(body ? 200 : 404, { 'Content-Type': 'application/json' });
  res.end(JSON.stringify(body ?? { error: 'not_found' }));
}

async function answer(req, res) {
  // The body is read whole before answering, so that a replayed POST is seen as it was sent.
  const chunks = [];
  for await (const chunk of req) chunks.push(chunk);
  const seen = { method: req.method, path: req.url, status: 200, reason: null, jkt: null, alg: null };
  requests.push(seen);
  const headers = { 'Content-Type': 'application/json', 'Cache-Control': 'no-store', 'DPoP-Nonce': nonce };
  try {
    const token = tokenOf(req.headers.authorization);
    Object.assign(seen, await checkProof(req, token));
    const subject = await checkBinding(token, seen.jkt);
    counts.accepted += 1;
    res.writeHead(200, headers);
    res.end(JSON.stringify({ path: req.url, subject, jkt: seen.jkt, body: Buffer.concat(chunks).toString('utf8') }));
  } catch (error) {
    if (!(error instanceof Refusal)) {
      // Not the client's fault (the provider did not answer): no challenge, so that no client renews for it.
      Object.assign(seen, { status: 500, reason: 'server_error' });
      res.writeHead(500, headers);
      res.end(JSON.stringify({ error: 'server_error' }));
      return;
    }
    Object.assign(seen, { status: 401, reason: error.reason });
    counts.refused[error.reason] = (counts.refused[error.reason] ?? 0) + 1;
    const challenge = error.error ? `DPoP error="${error.error}", ${ALGS}` : `DPoP ${ALGS}`;
    res.writeHead(401, { ...headers, 'WWW-Authenticate': challenge });
    res.end(JSON.stringify({ error: error.error ?? 'invalid_request' }));
  }
}

server.on('request', (req, res) => {
  if (req.url.startsWith('/__harness/')) harness(req, res);
  else void answer(req, res);
});
process.stdout.write(`${JSON.stringify({ url: origin })}\n`);

const stop = () => {
  server.closeAllConnections();
  server.close(() => process.exit(0));
};
process.on('SIGTERM', stop);
process.stdin.on('end', stop);
process.stdin.resume();
