// The emulator's DPoP mode (RFC 9449), its proofs, over real HTTP with bare axios: each rule a proof must keep on the
// login (typ, alg, a public jwk, the signature, htm, htu, iat, a fresh jti, the nonce), the nonce's rotation, the
// counters and the call log, the mode off by default, and its command-line flags. Proofs are the client's own
// (lib/dpop), or forged with node:crypto where a rule needs a proof the client would never make.
import { generateKeyPairSync, randomUUID, sign } from 'node:crypto';
import type { KeyObject } from 'node:crypto';
import { join } from 'node:path';
import type { AxiosResponse } from 'axios';
import { EMULATOR_FLAGS, emulatorOptions } from '../lib/emulator/command.js';
import { readCommandLine } from '../lib/emulator/command-line.js';
import type { EmulatorOptions, TokenServiceEmulator } from '../lib/emulator/index.js';
import { createDpopKey } from '../lib/dpop/key.js';
import type { DpopAlgorithm, DpopKey } from '../lib/dpop/key.js';
import { DpopProofs } from '../lib/dpop/proof.js';
import { closeEmulatorsAfterEach, emulator } from './helpers/emulator.js';
import { basic, LOGIN, LOGOUT, raw, TOKEN } from './helpers/emulator-http.js';
import { root, runScript } from './helpers/scripts.js';

closeEmulatorsAfterEach();

const NOW = Date.parse('2026-11-28T12:00:00Z');
const at = (ms: number) => () => ms;
const DEMO = { demo: 'demo-password' };

let key: DpopKey;
beforeAll(async () => {
  key = await createDpopKey('ES256');
});

function start(options: EmulatorOptions = {}): Promise<TokenServiceEmulator> {
  return emulator({ users: DEMO, clock: at(NOW), dpop: true, ...options });
}

/** A login carrying `proof` (none when undefined). */
function loginWith(service: TokenServiceEmulator, proof: string | undefined, path = LOGIN): Promise<AxiosResponse> {
  const headers = { Authorization: basic('demo', 'demo-password'), ...(proof !== undefined && { DPoP: proof }) };
  return raw(service.url).post(path, undefined, { headers });
}

/** A proof of the client's for a login on `service`, by `proofs` (their clock, their nonces) and `signer`. */
function loginProof(service: TokenServiceEmulator, proofs = new DpopProofs(at(NOW)), signer = key): Promise<string> {
  return proofs.proof(signer, { server: 'token', method: 'POST', url: `${service.url}${LOGIN}` });
}

const segment = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');

/** A proof made by node:crypto: any header and claims, signed by `privateKey` (ES256). */
function forge(header: object, claims: object, privateKey: KeyObject): string {
  const input = `${segment(header)}.${segment(claims)}`;
  const signature = sign('sha256', Buffer.from(input), { key: privateKey, dsaEncoding: 'ieee-p1363' });
  return `${input}.${signature.toString('base64url')}`;
}

const refusal = (detail: RegExp) => ({ error: 'invalid_dpop_proof', detail: expect.stringMatching(detail) as string });

describe.each<DpopAlgorithm>(['ES256', 'EdDSA'])('a DPoP login with a proof by a key of %s', (algorithm) => {
  it('is accepted, and its tokens are said to be DPoP; the call log keeps the key’s thumbprint', async () => {
    const service = await start();
    const signer = await createDpopKey(algorithm);

    const answer = await loginWith(service, await loginProof(service, undefined, signer));

    expect(answer.status).toBe(200);
    expect(Object.keys(answer.data as object).sort()).toEqual(['access', 'refresh', 'token_type']);
    expect((answer.data as { token_type: string }).token_type).toBe('DPoP');
    expect(service.calls.map((call) => call.dpop)).toEqual([
      { outcome: 'accepted', jkt: signer.thumbprint, nonce: false, ath: false },
    ]);
    expect(service.dpopCounters).toEqual({ accepted: 1, nonce: 0, invalid: 0, wrongKey: 0 });
    expect(service.counters).toMatchObject({ logins: 1, rejected: 0 });
  });
});

describe('the emulator’s DPoP proofs', () => {
  it('are not asked for without the option: nothing changes', async () => {
    const service = await emulator({ users: DEMO, clock: at(NOW) });

    const answer = await loginWith(service, undefined);

    expect(answer.status).toBe(200);
    expect(Object.keys(answer.data as object).sort()).toEqual(['access', 'refresh']);
    expect(answer.headers['dpop-nonce']).toBeUndefined();
    expect(service.calls[0]!.dpop).toBeUndefined();
    expect(service.dpopCounters).toEqual({ accepted: 0, nonce: 0, invalid: 0, wrongKey: 0 });
    expect(service.dpopNonce).toBeUndefined();
    expect(() => service.rotateDpopNonce()).toThrow('not in DPoP mode');
  });

  it('refuse a login without a proof, 400 invalid_dpop_proof, before its credentials are looked at', async () => {
    const service = await start();

    const answer = await loginWith(service, undefined);

    expect([answer.status, answer.data]).toEqual([400, refusal(/no DPoP header/)]);
    expect(service.counters).toMatchObject({ logins: 0, rejected: 0, tokenCalls: 1 });
    expect(service.dpopCounters).toEqual({ accepted: 0, nonce: 0, invalid: 1, wrongKey: 0 });
    expect(service.calls[0]!.dpop).toMatchObject({ outcome: 'invalid', jkt: undefined, error: 'invalid_dpop_proof' });
  });

  it('refuse a proof whose signature does not verify with its jwk', async () => {
    const service = await start();
    const [header, , signature] = (await loginProof(service)).split('.');
    const claims = { jti: randomUUID(), htm: 'POST', htu: `${service.url}${LOGIN}`, iat: NOW / 1000 };

    const answer = await loginWith(service, `${header}.${segment(claims)}.${signature}`);

    expect([answer.status, answer.data]).toEqual([400, refusal(/signature does not verify/)]);
    expect(service.dpopCounters).toMatchObject({ accepted: 0, invalid: 1 });
  });

  describe('refuse a header that is not a DPoP proof’s', () => {
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const jwk = publicKey.export({ format: 'jwk' });
    const privateJwk = privateKey.export({ format: 'jwk' });

    it.each<[string, object, RegExp | undefined]>([
      ['a forged proof that keeps every rule (accepted)', { typ: 'dpop+jwt', alg: 'ES256', jwk }, undefined],
      ['a jwk with its private member d', { typ: 'dpop+jwt', alg: 'ES256', jwk: privateJwk }, /private member/],
      ['typ JWT', { typ: 'JWT', alg: 'ES256', jwk }, /typ is not dpop\+jwt/],
      ['alg ES384', { typ: 'dpop+jwt', alg: 'ES384', jwk }, /alg is neither ES256 nor EdDSA/],
      ['alg none', { typ: 'dpop+jwt', alg: 'none', jwk }, /alg is neither ES256 nor EdDSA/],
      ['alg EdDSA with a P-256 jwk', { typ: 'dpop+jwt', alg: 'EdDSA', jwk }, /not a public key of EdDSA/],
      ['no jwk', { typ: 'dpop+jwt', alg: 'ES256' }, /no jwk/],
    ])('%s', async (_, header, refused) => {
      const service = await start();
      const claims = { jti: randomUUID(), htm: 'POST', htu: `${service.url}${LOGIN}`, iat: NOW / 1000 };

      const answer = await loginWith(service, forge(header, claims, privateKey));

      if (refused === undefined) expect(answer.status).toBe(200);
      else expect([answer.status, answer.data]).toEqual([400, refusal(refused)]);
      expect(service.counters.logins).toBe(refused ? 0 : 1);
      // The call log keeps what the proof came to, never the private key it should not have carried.
      expect(JSON.stringify(service.calls)).not.toContain(privateJwk.d);
    });
  });

  it.each<[string, (url: string) => { method: string; url: string }, number, RegExp | undefined]>([
    ['htm GET for a POST', (url) => ({ method: 'GET', url: `${url}${LOGIN}` }), NOW, /htm is not the request's method/],
    ['htu of another path', (url) => ({ method: 'POST', url: `${url}${TOKEN}` }), NOW, /htu is not the request's URL/],
    ['htu of https', (url) => ({ method: 'POST', url: `${url.replace('http:', 'https:')}${LOGIN}` }), NOW, /htu/],
    ['htu of another port', (url) => ({ method: 'POST', url: `${url.replace(/\d+$/, '1')}${LOGIN}` }), NOW, /htu/],
    ['iat 61 s old', (url) => ({ method: 'POST', url: `${url}${LOGIN}` }), NOW - 61_000, /iat is more than 60 s/],
    ['iat 61 s ahead', (url) => ({ method: 'POST', url: `${url}${LOGIN}` }), NOW + 61_000, /iat is more than 60 s/],
    ['iat 59 s old (accepted)', (url) => ({ method: 'POST', url: `${url}${LOGIN}` }), NOW - 59_000, undefined],
    ['iat 59 s ahead (accepted)', (url) => ({ method: 'POST', url: `${url}${LOGIN}` }), NOW + 59_000, undefined],
  ])('check the claims against the request: %s', async (_, target, proofTime, refused) => {
    const service = await start();
    const { method, url } = target(service.url);

    const answer = await loginWith(
      service,
      await new DpopProofs(at(proofTime)).proof(key, { server: 'token', method, url }),
    );

    if (refused === undefined) expect(answer.status).toBe(200);
    else expect([answer.status, answer.data]).toEqual([400, refusal(refused)]);
    expect(service.dpopCounters).toMatchObject(refused ? { accepted: 0, invalid: 1 } : { accepted: 1, invalid: 0 });
  });

  it('take the htu as the client reached the emulator: its Host header', async () => {
    const service = await start();
    const port = new URL(service.url).port;
    const proofFor = (origin: string) =>
      new DpopProofs(at(NOW)).proof(key, { server: 'token', method: 'POST', url: `${origin}${LOGIN}` });
    const headers = (proof: string) => ({
      Host: `emulator.test:${port}`,
      DPoP: proof,
      Authorization: basic('demo', 'demo-password'),
    });

    const byName = await raw(service.url).post(LOGIN, undefined, {
      headers: headers(await proofFor(`http://emulator.test:${port}`)),
    });
    const byAddress = await raw(service.url).post(LOGIN, undefined, { headers: headers(await proofFor(service.url)) });

    expect(byName.status).toBe(200);
    expect([byAddress.status, byAddress.data]).toEqual([
      400,
      refusal(/htu is not the request's URL, http:\/\/emulator\.test:/),
    ]);
  });

  it('ignore the query of the request the proof goes with, as its htu has none', async () => {
    const service = await start();

    const answer = await loginWith(service, await loginProof(service), `${LOGIN}?next=%2Fhome`);

    expect(answer.status).toBe(200);
  });

  it('refuse a proof sent again: its jti was seen', async () => {
    const service = await start();
    const proof = await loginProof(service);

    const first = await loginWith(service, proof);
    const again = await loginWith(service, proof);

    expect(first.status).toBe(200);
    expect([again.status, again.data]).toEqual([400, refusal(/jti was used before/)]);
    expect(service.counters.logins).toBe(1);
    expect(service.dpopCounters).toEqual({ accepted: 1, nonce: 0, invalid: 1, wrongKey: 0 });
  });
});

describe('the emulator’s DPoP nonce, with requireNonce', () => {
  it('is asked for by a 400 use_dpop_nonce that gives it, and accepted once the client learned it', async () => {
    const service = await start({ dpop: { requireNonce: true } });
    const proofs = new DpopProofs(at(NOW));

    const first = await loginWith(service, await loginProof(service, proofs));
    const learned = proofs.learn('token', service.url, first.headers['dpop-nonce']);
    const second = await loginWith(service, await loginProof(service, proofs));

    expect([first.status, first.data]).toEqual([
      400,
      { error: 'use_dpop_nonce', detail: expect.stringMatching(/no nonce/) as string },
    ]);
    expect(first.headers['dpop-nonce']).toBe(service.dpopNonce);
    expect(learned).toBe(true);
    expect(second.status).toBe(200);
    expect(service.calls.map((call) => [call.dpop?.outcome, call.dpop?.nonce])).toEqual([
      ['nonce', false],
      ['accepted', true],
    ]);
    expect(service.dpopCounters).toEqual({ accepted: 1, nonce: 1, invalid: 0, wrongKey: 0 });
    expect(service.counters).toMatchObject({ logins: 1, rejected: 0 });
  });

  it('is on every answer of the emulator: a refusal, a login, a logout, a data call, an injected fault', async () => {
    const service = await start({ dpop: { requireNonce: true } });
    service.inject('data', { status: 503 });
    const api = raw(service.url);

    const answers = [
      await loginWith(service, undefined),
      await api.post(LOGOUT, {}),
      await api.get('/orders'),
      await api.get('/orders'),
    ];

    expect(answers.map((answer) => answer.status)).toEqual([400, 200, 503, 401]);
    expect(answers.map((answer) => answer.headers['dpop-nonce'] as unknown)).toEqual(
      Array<unknown>(4).fill(service.dpopNonce),
    );
  });

  it('is asked for only of a proof that keeps every other rule: a broken one is invalid first', async () => {
    const service = await start({ dpop: { requireNonce: true } });

    const proof = await new DpopProofs(at(NOW)).proof(key, {
      server: 'token',
      method: 'GET',
      url: `${service.url}${LOGIN}`,
    });
    const answer = await loginWith(service, proof);

    expect([answer.status, answer.data]).toEqual([400, refusal(/htm is not the request's method/)]);
    expect(answer.headers['dpop-nonce']).toBe(service.dpopNonce);
    expect(service.dpopCounters).toEqual({ accepted: 0, nonce: 0, invalid: 1, wrongKey: 0 });
  });

  it('is not sent, nor asked for, without requireNonce', async () => {
    const service = await start();

    const answer = await loginWith(service, await loginProof(service));

    expect(answer.status).toBe(200);
    expect(answer.headers['dpop-nonce']).toBeUndefined();
    expect(service.dpopNonce).toBeUndefined();
  });

  it('rotates: a proof with the old nonce is answered with the new one, which then works', async () => {
    const service = await start({ dpop: { requireNonce: true } });
    const proofs = new DpopProofs(at(NOW));
    proofs.learn('token', service.url, service.dpopNonce);
    const before = await loginWith(service, await loginProof(service, proofs));

    const old = service.dpopNonce;
    const rotated = service.rotateDpopNonce();
    const stale = await loginWith(service, await loginProof(service, proofs));
    proofs.learn('token', service.url, stale.headers['dpop-nonce']);
    const after = await loginWith(service, await loginProof(service, proofs));

    expect(before.status).toBe(200);
    expect(rotated).not.toBe(old);
    expect(service.dpopNonce).toBe(rotated);
    expect([stale.status, stale.data]).toEqual([
      400,
      { error: 'use_dpop_nonce', detail: expect.stringMatching(/nonce is not the current one/) as string },
    ]);
    expect(stale.headers['dpop-nonce']).toBe(rotated);
    expect(after.status).toBe(200);
    expect(service.dpopCounters).toEqual({ accepted: 2, nonce: 1, invalid: 0, wrongKey: 0 });
  });
});

describe('the emulator command’s DPoP flags', () => {
  const optionsOf = (args: string[]) => emulatorOptions(readCommandLine(EMULATOR_FLAGS, args)!);

  it('turns --dpop on, --dpop-nonce on with requireNonce, both off by default', () => {
    expect(optionsOf(['--dpop']).dpop).toBe(true);
    expect(optionsOf(['--dpop-nonce']).dpop).toEqual({ requireNonce: true });
    expect(optionsOf(['--dpop', '--dpop-nonce']).dpop).toEqual({ requireNonce: true });
    expect(optionsOf([]).dpop).toBe(false);
  });

  it('documents them in --help', async () => {
    const { code, stdout } = await runScript(join(root, 'demo', 'emulator.ts'), ['--help']);

    expect(code).toBe(0);
    expect(stdout).toMatch(/^ {2}--dpop {16}require DPoP proofs \(RFC 9449\)/m);
    expect(stdout).toMatch(/^ {2}--dpop-nonce {10}--dpop, and every proof must carry the nonce/m);
  });
});
