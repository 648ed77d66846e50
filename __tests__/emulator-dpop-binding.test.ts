// The emulator's DPoP mode (RFC 9449), its bound tokens, over real HTTP with bare axios: the tokens a DPoP login and
// token call issue are bound to the proof's key, a refresh token is renewed only by its key (a dead one is refused as
// without DPoP), and a data call takes `Authorization: DPoP` with a proof by the token's key that carries its hash,
// refusing a Bearer, a proof without or with another ath, another key, and a stale nonce with a DPoP challenge.
import type { AxiosResponse } from 'axios';
import type { EmulatorOptions, TokenServiceEmulator } from '../lib/emulator/index.js';
import { createDpopKey } from '../lib/dpop/key.js';
import type { DpopKey } from '../lib/dpop/key.js';
import { DpopProofs, isNonceChallenge } from '../lib/dpop/proof.js';
import { closeEmulatorsAfterEach, emulator } from './helpers/emulator.js';
import { basic, LOGIN, raw, TOKEN } from './helpers/emulator-http.js';
import { manualClock } from './helpers/flow.js';

closeEmulatorsAfterEach();

const DATA = '/orders/7';

let mine: DpopKey;
let other: DpopKey;
beforeAll(async () => {
  [mine, other] = await Promise.all([createDpopKey('ES256'), createDpopKey('EdDSA')]);
});

interface Rig {
  service: TokenServiceEmulator;
  proofs: DpopProofs;
  clock: ReturnType<typeof manualClock>;
}

async function start(options: EmulatorOptions = {}): Promise<Rig> {
  const clock = manualClock();
  const service = await emulator({ users: { demo: 'demo-password' }, clock: clock.now, dpop: true, ...options });
  return { service, proofs: new DpopProofs(clock.now), clock };
}

interface Call {
  method?: string;
  path: string;
  /** Signs the proof; none is sent when null. */
  key?: DpopKey | null;
  authorization?: string;
  /** The access token the proof's ath is the hash of. */
  ath?: string;
  data?: unknown;
}

/** The emulator gives one nonce for all its calls: the client here keeps one, as for one server. */
const ONE_SERVER = 'api';

/** A call with the client's proof for it, learning the nonce its answer gives. */
async function send({ service, proofs }: Rig, call: Call): Promise<AxiosResponse> {
  const method = call.method ?? 'POST';
  const url = `${service.url}${call.path}`;
  const signer = call.key === undefined ? mine : call.key;
  const proof =
    signer === null
      ? undefined
      : await proofs.proof(signer, { server: ONE_SERVER, method, url, accessToken: call.ath });
  const headers = { ...(proof && { DPoP: proof }), ...(call.authorization && { Authorization: call.authorization }) };
  const answer = await raw(service.url).request({ method, url: call.path, data: call.data, headers });
  proofs.learn(ONE_SERVER, url, answer.headers['dpop-nonce']);
  return answer;
}

async function signIn(rig: Rig, key = mine): Promise<{ access: string; refresh: string; token_type: string }> {
  const answer = await send(rig, { path: LOGIN, key, authorization: basic('demo', 'demo-password') });
  expect(answer.status).toBe(200);
  return answer.data as { access: string; refresh: string; token_type: string };
}

const renew = (rig: Rig, refresh: string, key = mine) =>
  send(rig, { path: TOKEN, key, data: { refresh_token: refresh } });

const dataCall = (rig: Rig, access: string, call: Partial<Call> = {}) =>
  send(rig, { method: 'GET', path: DATA, authorization: `DPoP ${access}`, ath: access, ...call });

describe('tokens issued in DPoP mode', () => {
  it('are bound to the proof’s key: the token call with a proof by that key renews them, said to be DPoP', async () => {
    const rig = await start();
    const login = await signIn(rig);

    const renewed = await renew(rig, login.refresh);

    expect(login.token_type).toBe('DPoP');
    expect([renewed.status, renewed.data]).toEqual([
      200,
      {
        status: true,
        data: {
          access_token: expect.stringMatching(/^acc_/) as string,
          refresh_token: expect.stringMatching(/^ref_/) as string,
          token_type: 'DPoP',
        },
      },
    ]);
    expect(rig.service.calls.map((call) => call.dpop?.jkt)).toEqual([mine.thumbprint, mine.thumbprint]);
    expect(rig.service.dpopCounters).toEqual({ accepted: 2, nonce: 0, invalid: 0, wrongKey: 0 });
  });

  it('refuse a refresh with a proof by another key, a rejection, and keep the refresh token for its own key', async () => {
    const rig = await start();
    const { refresh } = await signIn(rig);

    const stolen = await renew(rig, refresh, other);
    const owned = await renew(rig, refresh);

    expect([stolen.status, stolen.data]).toEqual([
      400,
      {
        error: 'invalid_grant',
        detail: expect.stringMatching(/refresh token is bound to another DPoP key/) as string,
      },
    ]);
    expect(owned.status).toBe(200);
    expect(rig.service.counters).toMatchObject({ refreshes: 1, rejected: 1 });
    expect(rig.service.dpopCounters).toEqual({ accepted: 2, nonce: 0, invalid: 0, wrongKey: 1 });
    expect(rig.service.calls[1]!.dpop).toMatchObject({ outcome: 'wrong-key', jkt: other.thumbprint });
  });

  it('refuse a rotated-out refresh token as without DPoP, by its key or another', async () => {
    const rig = await start();
    const { refresh } = await signIn(rig);
    expect((await renew(rig, refresh)).status).toBe(200);

    const again = [await renew(rig, refresh), await renew(rig, refresh, other)];

    expect(again.map((answer) => [answer.status, answer.data as unknown])).toEqual(
      Array<unknown>(2).fill([401, { detail: 'Token is invalid or expired', code: 'token_not_valid' }]),
    );
    expect(rig.service.counters).toMatchObject({ refreshes: 1, rejected: 2 });
    expect(rig.service.dpopCounters).toEqual({ accepted: 4, nonce: 0, invalid: 0, wrongKey: 0 });
  });
});

describe('the emulator in DPoP mode, with cors', () => {
  it('lets a page send a DPoP proof, and read DPoP-Nonce and WWW-Authenticate', async () => {
    const { service } = await start({ cors: true, dpop: { requireNonce: true } });
    const headers = { Origin: 'http://app.test', 'Access-Control-Request-Method': 'POST' };

    const preflight = await raw(service.url).options(LOGIN, { headers });
    const answer = await raw(service.url).get(DATA, { headers: { Origin: 'http://app.test' } });

    expect(preflight.status).toBe(204);
    expect(preflight.headers['access-control-allow-headers']).toBe(
      'Authorization, Content-Type, X-Request-Id, X-Requested-With, DPoP',
    );
    expect(answer.status).toBe(401);
    expect(answer.headers['access-control-expose-headers']).toBe('DPoP-Nonce, WWW-Authenticate');
    expect(answer.headers['dpop-nonce']).toBe(service.dpopNonce);
  });
});

describe('a data call in DPoP mode', () => {
  it('is served for Authorization: DPoP with a proof by the token’s key that carries its hash', async () => {
    const rig = await start();
    const { access } = await signIn(rig);

    const answer = await dataCall(rig, access, { path: `${DATA}?fields=id` });

    expect(answer.data).toEqual({
      method: 'GET',
      path: `${DATA}?fields=id`,
      user: 'demo',
      contentType: null,
      body: '',
    });
    expect(rig.service.calls[1]).toMatchObject({
      route: 'data',
      user: 'demo',
      dpop: { outcome: 'accepted', jkt: mine.thumbprint, nonce: false, ath: true },
    });
  });

  it.each<[string, (access: string) => Partial<Call>, string, RegExp, 'invalid' | 'wrongKey']>([
    [
      'the token as a Bearer',
      (access) => ({ authorization: `Bearer ${access}` }),
      'invalid_token',
      /Authorization: DPoP/,
      'invalid',
    ],
    ['no Authorization', () => ({ authorization: undefined }), 'invalid_token', /Authorization: DPoP/, 'invalid'],
    ['no proof', () => ({ key: null }), 'invalid_dpop_proof', /no DPoP header/, 'invalid'],
    ['a proof without ath', () => ({ ath: undefined }), 'invalid_dpop_proof', /no ath/, 'invalid'],
    [
      'a proof for another token',
      () => ({ ath: 'acc_another' }),
      'invalid_dpop_proof',
      /ath is not the hash/,
      'invalid',
    ],
    ['a proof by another key', () => ({ key: other }), 'invalid_token', /access token is bound to another/, 'wrongKey'],
  ])('is refused 401 with a DPoP challenge for %s', async (_, call, error, detail, counter) => {
    const rig = await start();
    const { access } = await signIn(rig);

    const answer = await dataCall(rig, access, call(access));

    expect(answer.status).toBe(401);
    expect(answer.headers['www-authenticate']).toMatch(new RegExp(`^DPoP error="${error}", error_description="[^"]+"`));
    expect(answer.data).toEqual(
      error === 'invalid_token'
        ? { detail: expect.stringMatching(detail) as string, code: 'token_not_valid' }
        : { error, detail: expect.stringMatching(detail) as string },
    );
    expect(rig.service.counters).toMatchObject({ dataCalls: 1, unauthorized: 1 });
    expect(rig.service.dpopCounters).toEqual({ accepted: 1, nonce: 0, invalid: 0, wrongKey: 0, [counter]: 1 });
  });

  it('is refused invalid_token for an expired token, even with a good proof, and counts the expiry', async () => {
    const rig = await start({ accessTtlMs: 60_000 });
    const { access } = await signIn(rig);
    rig.clock.advance(60_000);

    const answer = await dataCall(rig, access);

    expect(answer.status).toBe(401);
    expect(answer.headers['www-authenticate']).toMatch(/^DPoP error="invalid_token"/);
    expect(answer.data).toEqual({ detail: 'Given token not valid for any token type', code: 'token_not_valid' });
    expect(rig.service.counters).toMatchObject({ expiries: 1, unauthorized: 1 });
    expect(rig.service.dpopCounters).toEqual({ accepted: 2, nonce: 0, invalid: 0, wrongKey: 0 });
  });

  it('asks for the new nonce with a 401 DPoP challenge the client recognises, then serves', async () => {
    const rig = await start({ dpop: { requireNonce: true } });
    rig.proofs.learn(ONE_SERVER, rig.service.url, rig.service.dpopNonce);
    const { access } = await signIn(rig);
    const rotated = rig.service.rotateDpopNonce();

    const stale = await dataCall(rig, access);
    const fresh = await dataCall(rig, access);

    const challenge = stale.headers['www-authenticate'] as string;
    expect(stale.status).toBe(401);
    expect(challenge).toMatch(/^DPoP error="use_dpop_nonce", error_description="The proof's nonce is not the current/);
    expect(stale.headers['dpop-nonce']).toBe(rotated);
    expect(isNonceChallenge(stale.status, challenge, stale.data)).toBe(true);
    expect(fresh.status).toBe(200);
    expect(rig.service.counters).toMatchObject({ dataCalls: 2, unauthorized: 1 });
    expect(rig.service.dpopCounters).toEqual({ accepted: 2, nonce: 1, invalid: 0, wrongKey: 0 });
  });
});
