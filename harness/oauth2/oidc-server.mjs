// A real OpenID Provider for the interop tests: panva's oidc-provider, unchanged, on a free loopback port. It is
// ESM only and jest runs the tests as CommonJS, so harness/oauth2/oidc.ts starts this file in a child process and
// talks to it over HTTP. The provider's own code answers every grant; this file only configures it (the clients
// the test passes as argv[2], short interactions for the sign-in, refresh tokens that rotate, introspection and
// revocation on) and records each call of the token endpoint, which the test reads at GET /__harness/token-calls.
// With `dpop` in its argument, DPoP (RFC 9449) hands out nonces and, with `dpop.requireNonce`, requires them.
//
// It prints one line, {"issuer": "http://127.0.0.1:<port>"}, once it listens, and exits when its stdin closes (the
// test's process ended) or on SIGTERM.
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import { calculateJwkThumbprint, decodeProtectedHeader } from 'jose';
import Provider from 'oidc-provider';

const { clients, accessTokenTtlSec = 600, dpop } = JSON.parse(process.argv[2] ?? '{}');

const server = createServer();
await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
const issuer = `http://127.0.0.1:${server.address().port}`;

const provider = new Provider(issuer, {
  clients,
  // Any sign-in name is an account; the tests are about tokens, not users.
  findAccount: (_ctx, accountId) => ({ accountId, claims: () => ({ sub: accountId }) }),
  cookies: { keys: ['interop-test-cookie-key'] },
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
 * `dpop`, whether it carried a DPoP proof and the thumbprint of the key in the proof's header (null when unreadable).
 */
const tokenCalls = [];

async function proofOf(header) {
  if (!header) return { dpopProof: false, dpopJkt: null };
  try {
    return { dpopProof: true, dpopJkt: await calculateJwkThumbprint(decodeProtectedHeader(header).jwk) };
  } catch {
    return { dpopProof: true, dpopJkt: null };
  }
}

provider.use(async (ctx, next) => {
  if (ctx.method === 'GET' && ctx.path === '/__harness/token-calls') {
    ctx.body = tokenCalls;
    return;
  }
  // Read before the call, so that each record is pushed as its answer leaves, in the order the calls ended.
  const proof = dpop && ctx.method === 'POST' && ctx.path === '/token' ? await proofOf(ctx.get('DPoP')) : {};
  await next();
  if (ctx.method === 'POST' && ctx.path === '/token') {
    const params = ctx.oidc?.params ?? {};
    tokenCalls.push({
      grantType: params.grant_type ?? null,
      refreshToken: params.refresh_token ?? null,
      clientId: ctx.oidc?.client?.clientId ?? null,
      status: ctx.status,
      error: ctx.body?.error ?? null,
      ...proof,
    });
  }
});

server.on('request', provider.callback());
process.stdout.write(`${JSON.stringify({ issuer })}\n`);

const stop = () => server.close(() => process.exit(0));
process.on('SIGTERM', stop);
process.stdin.on('end', stop);
process.stdin.resume();
