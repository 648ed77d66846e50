// A real OpenID Provider for the interop tests: panva's oidc-provider, unchanged, on a free loopback port. It is
// ESM only and jest runs the tests as CommonJS, so harness/oauth2/oidc.ts starts this file in a child process and
// talks to it over HTTP. The provider's own code answers every grant; this file only configures it (the clients
// the test passes as argv[2], short interactions for the sign-in, refresh tokens that rotate, introspection and
// revocation on) and records each call of the token endpoint, which the test reads at GET /__harness/token-calls,
// and of the revocation endpoint, at GET /__harness/revocations.
// With `dpop` in its argument, DPoP (RFC 9449) hands out nonces and, with `dpop.requireNonce`, requires them.
// With `tls` ({ key, cert, ca }, PEM), it serves HTTPS and asks every client for a certificate, for mutual TLS
// (RFC 8705): tls_client_auth against that CA, self_signed_tls_client_auth, and access tokens bound to the certificate.
// With `recordClientAuth`, each token call's record also says how the client authenticated, its assertion's jti and
// its certificate's thumbprint. A client assertion whose jti the provider has seen is refused (invalid_client) by
// oidc-provider itself, until the assertion's exp: its ReplayDetection model, on the default in-memory adapter.
//
// It prints one line, {"issuer": "http://127.0.0.1:<port>"} (https with `tls`), once it listens, and exits when its
// stdin closes (the test's process ended) or on SIGTERM.
import { Buffer } from 'node:buffer';
import { createHash, randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { URLSearchParams } from 'node:url';
import { calculateJwkThumbprint, decodeJwt, decodeProtectedHeader } from 'jose';
import Provider from 'oidc-provider';

const { clients, accessTokenTtlSec = 600, dpop, tls, recordClientAuth = false } = JSON.parse(process.argv[2] ?? '{}');

// Every client is asked for a certificate, and one the CA did not issue still reaches the provider (rejectUnauthorized
// false): the provider decides, by the client's registration, whether a certificate is needed and which.
const server = tls
  ? createHttpsServer({ key: tls.key, cert: tls.cert, ca: tls.ca, requestCert: true, rejectUnauthorized: false })
  : createServer();
await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
const issuer = `${tls ? 'https' : 'http'}://127.0.0.1:${server.address().port}`;

/** The TLS peer's certificate (a crypto.X509Certificate, which oidc-provider takes), or undefined: none, or no TLS. */
const peerCertificate = (ctx) => ctx.socket.getPeerX509Certificate?.() ?? undefined;

/** A certificate's subject as RFC 4514 writes it, the last RDN first (Node lists them first to last, one a line). */
const subjectDn = (certificate) => certificate.subject.split('\n').reverse().join(',');

const provider = new Provider(issuer, {
  clients,
  // Any sign-in name is an account; the tests are about tokens, not users.
  findAccount: (_ctx, accountId) => ({ accountId, claims: () => ({ sub: accountId }) }),
  cookies: { keys: ['interop-test-cookie-key'] },
  // oidc-provider's default methods, and the two of mutual TLS when it serves TLS. A client registers one of them
  // (`token_endpoint_auth_method`, client_secret_basic when absent), and the provider accepts only that one, at the
  // token, introspection and revocation endpoints alike.
  clientAuthMethods: [
    'client_secret_basic',
    'client_secret_post',
    'client_secret_jwt',
    'private_key_jwt',
    'none',
    ...(tls ? ['tls_client_auth', 'self_signed_tls_client_auth'] : []),
  ],
  features: {
    devInteractions: { enabled: true },
    clientCredentials: { enabled: true },
    // The resource endpoint asks the provider whether a token is active, as a resource server does.
    introspection: { enabled: true, allowedPolicy: async (_ctx, client) => client.clientId === 'resource-server' },
    revocation: { enabled: true, allowedPolicy: async (_ctx, client, token) => token.clientId === client.clientId },
    // oidc-provider 9 has DPoP on by default, without nonces. A nonce secret (32 bytes) makes it hand out DPoP-Nonce
    // values (HKDF of the secret and the minute, good for a few minutes); requireNonce (asked per request) makes a
    // proof without one fail with 400 use_dpop_nonce; allowReplay false refuses a proof's jti seen before.
    ...(dpop && {
      dPoP: {
        enabled: true,
        nonceSecret: randomBytes(32),
        requireNonce: () => dpop.requireNonce,
        allowReplay: false,
      },
    }),
    // RFC 8705. tls_client_auth: a certificate the CA issued (the socket says whether it chains to it), whose subject is
    // the client's registered tls_client_auth_subject_dn (the one subject value this harness matches); the others
    // (SAN DNS, IP, URI, email) never match. self_signed_tls_client_auth: a certificate among the client's jwks (x5c).
    // Certificate-bound tokens carry the certificate's thumbprint, cnf["x5t#S256"], for the clients that register
    // tls_client_certificate_bound_access_tokens.
    ...(tls && {
      mTLS: {
        enabled: true,
        certificateBoundAccessTokens: true,
        tlsClientAuth: true,
        selfSignedTlsClientAuth: true,
        getCertificate: peerCertificate,
        certificateAuthorized: (ctx) => ctx.socket.authorized === true,
        certificateSubjectMatches: (ctx, property, expected) =>
          property === 'tls_client_auth_subject_dn' && subjectDn(peerCertificate(ctx)) === expected,
      },
    }),
  },
  // Every refresh_token grant consumes the refresh token and issues a new one; a consumed one is refused
  // ("refresh token already used") and its whole grant revoked.
  rotateRefreshToken: true,
  ttl: {
    AccessToken: accessTokenTtlSec,
    ClientCredentials: accessTokenTtlSec,
    AuthorizationCode: 60,
    IdToken: 3600,
    Interaction: 600,
    Session: 600,
    Grant: 3600,
    RefreshToken: 3600,
  },
});

/**
 * Every call of the token endpoint: its grant, the refresh token it sent, the client, the status answered; with
 * `dpop`, whether it carried a DPoP proof and the thumbprint of the key in the proof's header (null when unreadable);
 * with `recordClientAuth`, how the client authenticated (see `clientAuthOf`).
 */
const tokenCalls = [];
/** Every call of the revocation endpoint: the token and its hint, the client and how it authenticated, the status. */
const revocations = [];
/** Every client assertion received at either endpoint, whole, so that a test can read its claims or replay it. */
const assertions = [];
/** How many of the next token calls to answer 503 before the provider sees them (POST /__harness/fail-token-calls). */
let failing = 0;

async function proofOf(header) {
  if (!header) return { dpopProof: false, dpopJkt: null };
  try {
    return { dpopProof: true, dpopJkt: await calculateJwkThumbprint(decodeProtectedHeader(header).jwk) };
  } catch {
    return { dpopProof: true, dpopJkt: null };
  }
}

/**
 * How a call presented its client, read from the call itself (so also for one the provider never saw, or refused),
 * in oidc-provider's order: `client_secret` in the form (client_secret_post), an `Authorization: Basic` header
 * (client_secret_basic), a `client_assertion` (client_secret_jwt when signed with HS*, private_key_jwt otherwise), a
 * TLS certificate alone (tls_client_auth when it chains to the CA, self_signed_tls_client_auth when not), else none.
 * Whether the provider accepted it is the call's status: it takes only the method the client registered. With the
 * assertion's `jti` (null without one, or unreadable), and the thumbprint of the TLS peer's certificate (null: none).
 */
function clientAuthOf(ctx, params) {
  const certificate = peerCertificate(ctx);
  const found = { assertionJti: null, certificate: certificate ? thumbprint(certificate) : null };
  if (params.client_secret) return { clientAuthMethod: 'client_secret_post', ...found };
  if (/^basic /i.test(ctx.get('Authorization'))) return { clientAuthMethod: 'client_secret_basic', ...found };
  if (typeof params.client_assertion === 'string') {
    let header = {};
    try {
      header = decodeProtectedHeader(params.client_assertion);
      found.assertionJti = decodeJwt(params.client_assertion).jti ?? null;
    } catch {
      // Unreadable: the provider refuses it too (invalid_request), which the status shows.
    }
    const method = String(header.alg).startsWith('HS') ? 'client_secret_jwt' : 'private_key_jwt';
    return { clientAuthMethod: method, ...found };
  }
  if (certificate) {
    const method = ctx.socket.authorized ? 'tls_client_auth' : 'self_signed_tls_client_auth';
    return { clientAuthMethod: method, ...found };
  }
  return { clientAuthMethod: 'none', ...found };
}

/** RFC 8705 §3.1: the base64url SHA-256 of the certificate's DER, as a bound token's cnf["x5t#S256"]. */
function thumbprint(certificate) {
  return createHash('sha256').update(certificate.raw).digest('base64url');
}

/** The client a call names, authenticated or not: its form's client_id, its Basic user, its assertion's subject. */
function clientIdOf(ctx, params) {
  if (params.client_id) return params.client_id;
  const basic = /^basic (\S+)$/i.exec(ctx.get('Authorization'))?.[1];
  if (basic) {
    const user = Buffer.from(basic, 'base64').toString('utf8').split(':')[0];
    return decodeURIComponent(user.replace(/\+/g, '%20'));
  }
  try {
    return decodeJwt(params.client_assertion).sub ?? null;
  } catch {
    return null;
  }
}

/** Keeps an assertion a call carried, and which endpoint it went to. */
function keepAssertion(endpoint, params) {
  if (typeof params.client_assertion !== 'string') return;
  try {
    const jwt = params.client_assertion;
    assertions.push({ endpoint, jwt, header: decodeProtectedHeader(jwt), claims: decodeJwt(jwt) });
  } catch {
    assertions.push({ endpoint, jwt: params.client_assertion, header: null, claims: null });
  }
}

/** A form body read whole, for a call answered before the provider (which would have parsed it) sees it. */
async function formOf(req) {
  const chunks = [];
  for await (const chunk of req) chunks.push(chunk);
  return Object.fromEntries(new URLSearchParams(Buffer.concat(chunks).toString('utf8')));
}

function tokenCall(ctx, params, extra) {
  return {
    grantType: params.grant_type ?? null,
    refreshToken: params.refresh_token ?? null,
    clientId: clientIdOf(ctx, params),
    status: ctx.status,
    error: ctx.body?.error ?? null,
    ...extra,
    ...(recordClientAuth && clientAuthOf(ctx, params)),
  };
}

function harness(ctx) {
  if (ctx.method === 'POST' && ctx.path === '/__harness/fail-token-calls') {
    failing = Number(ctx.query.count ?? 1);
    ctx.body = { failing };
    return;
  }
  const bodies = {
    '/__harness/token-calls': tokenCalls,
    '/__harness/revocations': revocations,
    '/__harness/assertions': assertions,
  };
  ctx.status = bodies[ctx.path] ? 200 : 404;
  ctx.body = bodies[ctx.path] ?? { error: 'not_found' };
}

provider.use(async (ctx, next) => {
  if (ctx.path.startsWith('/__harness/')) {
    harness(ctx);
    return;
  }
  const isTokenCall = ctx.method === 'POST' && ctx.path === '/token';
  // Read before the call, so that each record is pushed as its answer leaves, in the order the calls ended.
  const proof = dpop && isTokenCall ? await proofOf(ctx.get('DPoP')) : {};
  if (isTokenCall && failing > 0) {
    // As a gateway in front of a provider under load: the provider never sees the call, so its assertion's jti is not
    // spent, and the client is told to come back.
    failing -= 1;
    const params = await formOf(ctx.req);
    keepAssertion('token', params);
    ctx.status = 503;
    ctx.body = { error: 'temporarily_unavailable', error_description: 'the harness failed this call' };
    tokenCalls.push(tokenCall(ctx, params, proof));
    return;
  }
  await next();
  const params = ctx.oidc?.params ?? {};
  if (isTokenCall) {
    keepAssertion('token', params);
    tokenCalls.push(tokenCall(ctx, params, proof));
  }
  if (ctx.method === 'POST' && ctx.path === '/token/revocation') {
    keepAssertion('revocation', params);
    revocations.push({
      token: params.token ?? null,
      tokenTypeHint: params.token_type_hint ?? null,
      clientId: clientIdOf(ctx, params),
      ...clientAuthOf(ctx, params),
      status: ctx.status,
      error: ctx.body?.error ?? null,
    });
  }
});

server.on('request', provider.callback());
process.stdout.write(`${JSON.stringify({ issuer })}\n`);

const stop = () => {
  server.closeAllConnections();
  server.close(() => process.exit(0));
};
process.on('SIGTERM', stop);
process.stdin.on('end', stop);
process.stdin.resume();
