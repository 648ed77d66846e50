import { MemoryTokenStore } from '../lib/index.js';
import type { TokenStore } from '../lib/index.js';
import { LocklessStore } from './helpers/lockless-store.js';
import { burst, fulfilled, rig as rigWith, until } from './helpers/setup.js';

// The MemoryTokenStore's lock and re-read would hide a broken shared renewal; a store without a lock does not.
describe.each<[string, () => TokenStore]>([
  ['the MemoryTokenStore', () => new MemoryTokenStore()],
  ['a store without a lock', () => new LocklessStore()],
])('with %s', (_name, store) => {
  const rig = () => rigWith({ store: store() });

  describe('concurrent 401s', () => {
    it.each([1, 10, 40, 200])(
      'share one renewal among %i requests refused at once, and replay each once',
      async (n) => {
        const { service, api, auth } = rig();
        await api.get('/prime');
        service.expireAccessTokens();
        const before = service.counters.dataCalls;

        const results = await burst(n, (i) => api.post('/orders', { i }));

        expect(fulfilled(results)).toBe(n);
        expect(service.counters.refreshCalls).toBe(1);
        expect(service.counters.loginCalls).toBe(1);
        expect(service.counters.dataCalls - before).toBe(2 * n);
        expect(auth.stats()).toMatchObject({ logins: 1, refreshes: 1, replays: n, failures: 0 });
      },
    );

    it('gives every waiter the refreshed token, and the refresh token rotated once', async () => {
      const { service, api, auth } = rig();
      await api.get('/prime');
      const first = await auth.getTokens();
      service.expireAccessTokens();

      await burst(20, () => api.get('/orders'));

      const now = await auth.getTokens();
      expect(now?.access).not.toBe(first?.access);
      expect(now?.refresh).not.toBe(first?.refresh);
      const replays = service.received.filter((entry) => entry.route === 'data').slice(-20);
      expect(new Set(replays.map((entry) => entry.authorization))).toEqual(new Set([`Bearer ${now?.access}`]));
    });

    it('holds requests started during a renewal until it ends, instead of sending the old token', async () => {
      const { service, api, auth } = rig();
      await api.get('/prime');
      const old = (await auth.getTokens())?.access;
      service.expireAccessTokens();
      service.tokenDelayMs = 60;

      const first = api.get('/first');
      await until(() => service.counters.refreshCalls === 1);
      const later = await burst(10, (i) => api.get(`/later/${i}`));
      await first;

      expect(fulfilled(later)).toBe(10);
      const laterSent = service.received.filter((entry) => entry.path.startsWith('/later/'));
      expect(laterSent).toHaveLength(10);
      expect(laterSent.some((entry) => entry.authorization === `Bearer ${old}`)).toBe(false);
      expect(service.counters.refreshCalls).toBe(1);
      expect(auth.stats().replays).toBe(1);
    });
  });

  describe('late 401s', () => {
    it('replays a 401 for a token already replaced with the stored token, with no new renewal', async () => {
      const { service, api, auth } = rig();
      await api.get('/prime');
      service.expireAccessTokens();
      service.dataDelayMs = (path) => (path === '/slow' ? 80 : 0);

      const [fast, slow] = await Promise.allSettled([api.get('/fast'), api.get('/slow')]);

      expect(fast.status).toBe('fulfilled');
      expect(slow.status).toBe('fulfilled');
      expect(service.counters.refreshCalls).toBe(1);
      const current = (await auth.getTokens())?.access;
      const slowSends = service.received.filter((entry) => entry.path === '/slow');
      expect(slowSends).toHaveLength(2);
      expect(slowSends[1]?.authorization).toBe(`Bearer ${current}`);
      expect(auth.stats()).toMatchObject({ refreshes: 1, replays: 2 });
    });

    it('keeps to one renewal per expiry when 401s for the old token straggle in at random', async () => {
      const { service, api } = rig();
      await api.get('/prime');
      const delays = Array.from({ length: 60 }, (_, i) => (i * 37) % 90);
      service.dataDelayMs = (path) => delays[Number(path.split('/').pop())] ?? 0;

      for (let expiry = 1; expiry <= 3; expiry += 1) {
        service.expireAccessTokens();
        const results = await burst(60, (i) => api.get(`/orders/${i}`));
        expect(fulfilled(results)).toBe(60);
        expect(service.counters.refreshCalls).toBe(expiry);
      }
      expect(service.counters.loginCalls).toBe(1);
    });
  });
});
