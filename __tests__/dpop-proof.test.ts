// DPoP proofs (lib/dpop/): made with WebCrypto, checked here with node:crypto's own verifier, so that a proof is one
// that a server's JOSE library accepts: the JWS, its header (typ, alg, the public JWK and nothing private), its claims
// (htm, htu without query or fragment, iat from the clock, a fresh jti, the origin's nonce, ath) and the thumbprint.
import { createHash, createPublicKey, verify } from 'node:crypto';
import { createDpopKey, thumbprintOf } from '../lib/dpop/key.js';
import type { DpopAlgorithm, DpopKey } from '../lib/dpop/key.js';
import { DpopProofs, isNonceChallenge } from '../lib/dpop/proof.js';
import type { Server } from '../lib/dpop/proof.js';

const NOW = Date.UTC(2026, 10, 28, 12, 0, 0);

interface Decoded {
  header: { typ: string; alg: string; jwk: Record<string, string> };
  payload: { jti: string; htm: string; htu: string; iat: number; nonce?: string; ath?: string };
}

/** The proof's header and claims, after its signature was checked against the JWK it carries, by node:crypto. */
function verified(proof: string): Decoded {
  const [header, payload, signature] = proof.split('.') as [string, string, string];
  const decode = (segment: string) => JSON.parse(Buffer.from(segment, 'base64url').toString('utf8')) as unknown;
  const decoded = { header: decode(header), payload: decode(payload) } as Decoded;
  const key = createPublicKey({ key: decoded.header.jwk, format: 'jwk' });
  const input = Buffer.from(`${header}.${payload}`);
  const ok =
    decoded.header.alg === 'ES256'
      ? verify('sha256', input, { key, dsaEncoding: 'ieee-p1363' }, Buffer.from(signature, 'base64url'))
      : verify(null, input, key, Buffer.from(signature, 'base64url'));
  if (!ok) throw new Error('The proof’s signature does not verify with its own JWK.');
  return decoded;
}

describe.each<DpopAlgorithm>(['ES256', 'EdDSA'])('a DPoP proof by a key of %s', (algorithm) => {
  let key: DpopKey;
  beforeAll(async () => {
    key = await createDpopKey(algorithm);
  });

  it('is a JWS of typ dpop+jwt, signed by the key whose public JWK it carries, with no private member', async () => {
    const proof = await new DpopProofs(() => NOW).proof(key, {
      server: 'token',
      method: 'post',
      url: 'https://auth.test/auth/api/v1/accounts/token',
    });
    const { header, payload } = verified(proof);
    expect(header).toEqual({ typ: 'dpop+jwt', alg: algorithm, jwk: key.publicJwk });
    expect(Object.keys(header.jwk).sort()).toEqual(
      algorithm === 'ES256' ? ['crv', 'kty', 'x', 'y'] : ['crv', 'kty', 'x'],
    );
    const { jti, ...claims } = payload;
    expect(jti).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(claims).toEqual({
      htm: 'POST',
      htu: 'https://auth.test/auth/api/v1/accounts/token',
      iat: NOW / 1000,
    });
  });

  it('names the URL without its query or fragment, and carries a fresh jti each time', async () => {
    const proofs = new DpopProofs(() => NOW);
    const target = { server: 'api', method: 'GET', url: 'https://api.test/orders/7?fields=id#top' } as const;
    const decoded = await Promise.all(Array.from({ length: 50 }, () => proofs.proof(key, target)));
    const payloads = decoded.map((proof) => verified(proof).payload);
    expect(new Set(payloads.map((payload) => payload.htu))).toEqual(new Set(['https://api.test/orders/7']));
    expect(new Set(payloads.map((payload) => payload.jti)).size).toBe(50);
  });

  it('carries the hash of the access token beside it (ath), the token’s own', async () => {
    const proofs = new DpopProofs(() => NOW);
    const ath = (token: string) => createHash('sha256').update(token, 'ascii').digest('base64url');
    const first = verified(
      await proofs.proof(key, { server: 'api', method: 'GET', url: 'https://api.test/a', accessToken: 'tok-1' }),
    );
    const again = verified(
      await proofs.proof(key, { server: 'api', method: 'GET', url: 'https://api.test/b', accessToken: 'tok-1' }),
    );
    const next = verified(
      await proofs.proof(key, { server: 'api', method: 'GET', url: 'https://api.test/c', accessToken: 'tok-2' }),
    );
    expect([first.payload.ath, again.payload.ath, next.payload.ath]).toEqual([
      ath('tok-1'),
      ath('tok-1'),
      ath('tok-2'),
    ]);
  });

  it('keeps a private key that cannot be exported, unless asked for one a sealed store can carry', async () => {
    const crypto = globalThis.crypto;
    await expect(crypto.subtle.exportKey('jwk', key.privateKey)).rejects.toThrow();
    const carried = await createDpopKey(algorithm, true);
    expect(await crypto.subtle.exportKey('jwk', carried.privateKey)).toHaveProperty('d');
  });

  it('has the thumbprint of RFC 7638: the SHA-256 of the required members in order', () => {
    const members = algorithm === 'ES256' ? ['crv', 'kty', 'x', 'y'] : ['crv', 'kty', 'x'];
    const jwk = key.publicJwk as unknown as Record<string, string>;
    const canonical = `{${members.map((name) => `"${name}":"${jwk[name]}"`).join(',')}}`;
    expect(key.thumbprint).toBe(createHash('sha256').update(canonical).digest('base64url'));
  });
});

describe('DPoP nonces and thumbprints', () => {
  it('gives the thumbprint of RFC 8037’s Ed25519 example', async () => {
    const jwk = { kty: 'OKP', crv: 'Ed25519', x: '11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo' } as const;
    expect(await thumbprintOf(jwk)).toBe('kPrK_qmxVWaYVA9wwBF6Iuo3vVzz7TxHCTwXBygrS4k');
  });

  it('puts the latest nonce of its server at the URL’s origin in the proof: none for another origin, nor for the other server on the same origin', async () => {
    const key = await createDpopKey();
    const proofs = new DpopProofs(() => NOW);
    expect(proofs.learn('token', 'https://auth.test/token', 'n-1')).toBe(true);
    expect(proofs.learn('token', 'https://auth.test/other', 'n-1')).toBe(false);
    expect(proofs.learn('token', 'https://auth.test/token', 'n-2')).toBe(true);
    expect(proofs.learn('token', 'https://auth.test/token', undefined)).toBe(false);
    expect(proofs.learn('api', 'https://auth.test/orders', 'api-1')).toBe(true);
    const nonceFor = async (server: Server, url: string) =>
      verified(await proofs.proof(key, { server, method: 'POST', url })).payload.nonce;
    expect(await nonceFor('token', 'https://auth.test/auth/api/v1/accounts/token')).toBe('n-2');
    expect(await nonceFor('api', 'https://auth.test/orders/7')).toBe('api-1');
    expect(proofs.nonceFor('api', 'https://auth.test/x')).toBe('api-1');
    expect(await nonceFor('token', 'https://api.test/orders')).toBeUndefined();
    expect(await nonceFor('api', 'https://api.test/orders')).toBeUndefined();
    // Until the API at an origin gives a nonce of its own, its proofs carry the token service's there, and back.
    expect(proofs.learn('token', 'https://gateway.test/token', 'g-1')).toBe(true);
    expect(await nonceFor('api', 'https://gateway.test/orders')).toBe('g-1');
    expect(proofs.learn('api', 'https://both.test/orders', 'b-1')).toBe(true);
    expect(await nonceFor('token', 'https://both.test/token')).toBe('b-1');
  });

  it('tells a refusal that asks for the nonce from any other', () => {
    expect(isNonceChallenge(400, undefined, { error: 'use_dpop_nonce' })).toBe(true);
    expect(isNonceChallenge(400, undefined, { error: 'invalid_grant' })).toBe(false);
    expect(
      isNonceChallenge(401, 'DPoP error="use_dpop_nonce", error_description="Resource server requires nonce"', ''),
    ).toBe(true);
    expect(isNonceChallenge(401, 'Bearer realm="api", DPoP algs="ES256", error="use_dpop_nonce"', '')).toBe(true);
    expect(isNonceChallenge(401, 'DPoP error="invalid_token"', '')).toBe(false);
    expect(isNonceChallenge(401, 'Bearer error="use_dpop_nonce"', '')).toBe(false);
    expect(isNonceChallenge(401, 'DPoP algs="ES256", Bearer error="use_dpop_nonce"', '')).toBe(false);
    expect(isNonceChallenge(403, 'DPoP error="use_dpop_nonce"', '')).toBe(false);
  });
});
