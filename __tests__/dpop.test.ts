// `dpop: true` end to end, over real HTTP against the emulator in its DPoP mode, which verifies every proof with
// node:crypto, binds the tokens it issues to the proof's key and asks for its nonce: one login with one key for a burst,
// a refresh per expiry with that key, nonces learnt and asked for once more below everything else (no refusal, no
// renewal, no budget), and a pair whose key is lost costing one login with a new key, never a refresh.
import { isAxiosError } from 'axios';
import { MemoryTokenStore } from '../lib/index.js';
import { failureOf } from './helpers/settled.js';
import { closeEmulatorsAfterEach, e2e, refreshTokenCounts } from './helpers/emulator.js';
import type { TokenServiceEmulator } from '../lib/emulator/index.js';

closeEmulatorsAfterEach();

const NONCES = { dpop: { requireNonce: true } } as const;

/** The thumbprints of the keys the emulator saw on each route, each once. */
function keysSeen(service: TokenServiceEmulator, route: 'login' | 'token' | 'data'): string[] {
  const jkts = service.calls
    .filter((call) => (route === 'data' ? !['login', 'token', 'logout'].includes(call.route) : call.route === route))
    .map((call) => call.dpop?.jkt)
    .filter((jkt): jkt is string => jkt !== undefined);
  return [...new Set(jkts)];
}

describe('dpop: true against a service that asks for its nonce', () => {
  it('serves ten concurrent requests with one login by one key: the nonce asked for once, not a refusal, not spent from the budget', async () => {
    const { emulator: service, api, auth } = await e2e({ dpop: true }, NONCES);
    const answers = await Promise.all(Array.from({ length: 10 }, () => api.get('/orders')));

    expect(answers.map((answer) => answer.status)).toEqual(Array(10).fill(200));
    expect(service.counters).toMatchObject({ logins: 1, refreshes: 0, rejected: 0 });
    // The login's first proof had no nonce: asked for it once, then accepted; the data calls carried it.
    expect(service.dpopCounters).toEqual({ accepted: 11, nonce: 1, invalid: 0, wrongKey: 0 });
    const [key] = keysSeen(service, 'login');
    expect(keysSeen(service, 'data')).toEqual([key]);
    expect((await auth.getTokens())!.dpopKey!.thumbprint).toBe(key);
    expect(auth.stats()).toMatchObject({ logins: 1, refreshes: 0, replays: 0, failures: 0, budget: { login: 9 } });
  });

  it('renews each expiry with one token call by the same key, each refresh token sent once, for bursts of ten', async () => {
    const { emulator: service, api, auth } = await e2e({ dpop: true }, NONCES);
    await api.get('/orders');
    for (let expiry = 0; expiry < 3; expiry += 1) {
      service.expireAccessTokens();
      const answers = await Promise.all(Array.from({ length: 10 }, () => api.get('/orders')));
      expect(answers.every((answer) => answer.status === 200)).toBe(true);
    }

    expect(service.counters).toMatchObject({ logins: 1, refreshes: 3, rejected: 0 });
    expect(refreshTokenCounts(service)).toEqual({ calls: 3, distinct: 3 });
    const [key] = keysSeen(service, 'login');
    expect(keysSeen(service, 'token')).toEqual([key]);
    expect(keysSeen(service, 'data')).toEqual([key]);
    expect(service.dpopCounters).toMatchObject({ invalid: 0, wrongKey: 0 });
    expect(auth.stats()).toMatchObject({ logins: 1, refreshes: 3, failures: 0 });
  });

  it('sends a request refused for a new nonce once more with it: no token call, no replay, every request served', async () => {
    const { emulator: service, api, auth } = await e2e({ dpop: true }, NONCES);
    await api.get('/orders');
    const before = { ...service.dpopCounters };
    service.rotateDpopNonce();
    const answers = await Promise.all(Array.from({ length: 10 }, () => api.post('/orders', { item: 'tea' })));

    expect(answers.map((answer) => answer.status)).toEqual(Array(10).fill(200));
    expect(service.counters).toMatchObject({ logins: 1, refreshes: 0 });
    const asked = service.dpopCounters.nonce - before.nonce;
    // Those that went before the first answer brought the new nonce were asked for it, each once; all were accepted.
    expect(asked).toBeGreaterThanOrEqual(1);
    expect(asked).toBeLessThanOrEqual(10);
    expect(service.dpopCounters.accepted - before.accepted).toBe(10);
    expect(auth.stats()).toMatchObject({ replays: 0, refreshes: 0, failures: 0 });
  });

  it('logs in with a new key when the store holds a pair without one, and never sends its refresh token', async () => {
    const store = new MemoryTokenStore();
    const { emulator: service, api } = await e2e({ dpop: true, store }, NONCES);
    await api.get('/orders');
    const [first] = keysSeen(service, 'login');
    // The key is lost: another holder (without `dpop`) wrote a pair of its own, with no key.
    const { access, refresh } = store.get()!;
    store.set({ access, refresh: `${refresh!}-keyless` });
    // Heard of, it is no pair to use: the requests go on with the pair and key held, each with its proof.
    await api.get('/orders');
    service.expireAccessTokens();
    await api.get('/orders');

    expect(service.counters).toMatchObject({ logins: 2, refreshes: 0 });
    expect(service.dpopCounters).toMatchObject({ invalid: 0, wrongKey: 0 });
    expect(refreshTokenCounts(service).calls).toBe(0);
    const keys = keysSeen(service, 'login');
    expect(keys).toHaveLength(2);
    expect(keys[0]).toBe(first);
    expect(store.get()!.dpopKey!.thumbprint).toBe(keys[1]);
  });

  it('gives a refusal that renewing does not cure to the caller, with neither the token nor a proof in the error', async () => {
    const {
      emulator: service,
      api,
      auth,
    } = await e2e({ dpop: true }, { ...NONCES, alwaysUnauthorized: ['/forbidden'] });
    const error = await failureOf(api.get('/forbidden'), isAxiosError);

    expect(error.response?.status).toBe(401);
    expect(service.counters).toMatchObject({ logins: 1, refreshes: 1 });
    expect(auth.stats()).toMatchObject({ replays: 1 });
    // What the error holds is masked as the plugin masks a token: no proof (a JWT) in any spelling.
    expect(JSON.stringify(error.config?.headers)).not.toMatch(/eyJ/);
    expect(String(error.config?.headers?.Authorization)).not.toContain((await auth.getTokens())!.access);
  });
});
