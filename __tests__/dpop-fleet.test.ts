// A fleet of real processes (harness/fleet-worker.ts) on one real redis-server, with `dpop: true` and the store's
// `encryption`: they share one key, sealed in the record beside the pair, as they share the pair. Against the emulator
// in its DPoP mode with nonces required, which verifies every proof: one login, one token call per expiry, every
// request served, every proof by the one key, and no private member of it on the Redis server.
import { randomBytes } from 'node:crypto';
import { sumBursts } from '../harness/fleet.js';
import { withConnection } from '../harness/redis-server.js';
import { closeEmulatorsAfterEach, emulator, refreshTokenCounts } from './helpers/emulator.js';
import { fleetsForFile } from './helpers/fleets.js';
import { tokenShapedIn } from './helpers/test-secrets.js';

closeEmulatorsAfterEach();
const { start, redisStore } = fleetsForFile('dpop-fleet');
const KEY = { id: 'k1', secret: randomBytes(32).toString('base64') };

describe('a fleet of 4 processes on Redis with dpop and a sealed store', () => {
  it('shares one key: 1 login, 1 token call per expiry, every request served with a proof by that key', async () => {
    const service = await emulator({ dpop: { requireNonce: true } });
    const store = await redisStore(true);
    const fleet = await start({ count: 4, emulatorUrl: service.url, store, encryption: { keys: [KEY] }, dpop: true });

    const rounds = [await fleet.burst(10)];
    for (let expiry = 0; expiry < 2; expiry += 1) {
      service.expireAccessTokens();
      rounds.push(await fleet.burst(10));
    }

    const total = sumBursts(rounds.flat());
    expect(total.errors).toEqual([]);
    expect(total).toMatchObject({ ok: 120, failed: 0 });
    expect(service.counters).toMatchObject({ logins: 1, refreshes: 2, rejected: 0 });
    expect(refreshTokenCounts(service)).toEqual({ calls: 2, distinct: 2 });
    expect(service.dpopCounters).toMatchObject({ invalid: 0, wrongKey: 0 });
    const keys = new Set(service.calls.map((call) => call.dpop?.jkt).filter((jkt) => jkt !== undefined));
    expect(keys.size).toBe(1);

    const { port } = new URL((store as { url: string }).url);
    const stored = await withConnection(Number(port), async (client) =>
      Promise.all(
        (await client.keys('*')).map(async (key) => `${key} ${(await client.get(key).catch(() => '')) ?? ''}`),
      ),
    );
    expect(stored.length).toBeGreaterThan(0);
    expect(stored.flatMap((text) => tokenShapedIn(text))).toEqual([]);
    expect(stored.join('\n')).not.toMatch(/"d"|dpopKey|"kty"/);
  }, 60_000);
});
