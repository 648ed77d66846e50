import axios from 'axios';
import fc from 'fast-check';
import { attachTokenAuth, MemoryTokenStore } from '../lib/index.js';
import type { TokenPair, TokenStore } from '../lib/index.js';
import type { EmulatorFault } from '../lib/emulator/index.js';
import { closeEmulatorsAfterEach, emulator, E2E_PASSWORD, E2E_USER } from './helpers/emulator.js';

// Random schedules of requests, expiries, revocations, latencies and faults against the emulator, shrunk on
// failure. PROPERTY_RUNS=200 npx jest properties for a longer run.
closeEmulatorsAfterEach();

const RUNS = Number(process.env.PROPERTY_RUNS ?? 15);

type Step =
  | { kind: 'burst'; n: number; path: number; post: boolean }
  | { kind: 'expire' }
  | { kind: 'revoke' }
  | { kind: 'latency'; ms: number }
  | { kind: 'fault'; route: 'login' | 'token'; fault: EmulatorFault }
  | { kind: 'pause'; ms: number };

const faults: EmulatorFault[] = [{ status: 503 }, { status: 500 }, { status: 429 }, 'drop', 'reset'];

const step: fc.Arbitrary<Step> = fc.oneof(
  {
    weight: 5,
    arbitrary: fc.record({
      kind: fc.constant('burst' as const),
      n: fc.integer({ min: 1, max: 12 }),
      path: fc.integer({ min: 0, max: 3 }),
      post: fc.boolean(),
    }),
  },
  { weight: 2, arbitrary: fc.constant({ kind: 'expire' as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'revoke' as const }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('latency' as const), ms: fc.integer({ min: 0, max: 25 }) }) },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('fault' as const),
      route: fc.constantFrom('login' as const, 'token' as const),
      fault: fc.constantFrom(...faults),
    }),
  },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('pause' as const), ms: fc.integer({ min: 0, max: 15 }) }) },
);

/**
 * A store that notes, in one sequence with the requests, when each pair was written; with or without a lock (the
 * lock and re-read of a shared store would hide a plugin that lost its own single-flight renewal).
 */
function journaledStore(journal: Array<{ kind: 'set' | 'send'; access: string }>, locked: boolean): TokenStore {
  const inner = new MemoryTokenStore();
  const store: TokenStore = {
    get: () => inner.get(),
    set: (pair: TokenPair) => {
      journal.push({ kind: 'set', access: pair.access });
      inner.set(pair);
    },
    clear: () => inner.clear(),
  };
  if (locked) store.lock = () => inner.lock();
  return store;
}

it('keeps its invariants under random schedules', async () => {
  await fc.assert(
    fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 25 }), fc.boolean(), async (steps, locked) => {
      let latency = 0;
      const service = await emulator({
        log: false,
        latency: { data: ({ path }) => (path.endsWith('/0') ? latency : latency / 3) },
      });
      const journal: Array<{ kind: 'set' | 'send'; access: string }> = [];
      const store = journaledStore(journal, locked);
      const api = axios.create({ baseURL: service.url });
      const auth = attachTokenAuth(api, {
        credentials: { username: E2E_USER, password: E2E_PASSWORD },
        store,
        tokenBudget: false,
        tokenRetries: 2,
        tokenRetryDelayMs: 1,
        tokenTimeoutMs: 2_000,
        applyToken: (config, access) => {
          journal.push({ kind: 'send', access });
          config.headers.set('Authorization', `Bearer ${access}`);
        },
      });
      const pending: Array<Promise<unknown>> = [];
      let expiries = 0;
      let revocations = 0;

      for (const s of steps) {
        if (s.kind === 'burst') {
          for (let i = 0; i < s.n; i += 1) {
            const request = s.post ? api.post(`/items/${s.path}`, { i }) : api.get(`/items/${s.path}`);
            // Handled now: it may fail while later steps run, long before the allSettled below.
            request.catch(() => undefined);
            pending.push(request);
          }
        } else if (s.kind === 'expire') {
          expiries += 1;
          service.expireAccessTokens();
        } else if (s.kind === 'revoke') {
          revocations += 1;
          service.revokeRefreshTokens();
        } else if (s.kind === 'latency') {
          latency = s.ms;
        } else if (s.kind === 'fault') {
          service.inject(s.route, s.fault);
        } else {
          // A pause the drawn schedule asks for (a step of the scenario): the property holds for any interleaving.
          await new Promise((resolve) => setTimeout(resolve, s.ms));
        }
      }

      // Every request settles.
      let timer: NodeJS.Timeout | undefined;
      const watchdog = new Promise<never>(
        (_, reject) => (timer = setTimeout(() => reject(new Error('a request never settled')), 15_000)),
      );
      await Promise.race([Promise.allSettled(pending), watchdog]).finally(() => clearTimeout(timer));

      const counters = service.counters;
      // Token generation is justified by the schedule: one login, then at most one per expiry.
      expect(counters.logins + counters.refreshes).toBeLessThanOrEqual(1 + expiries);
      // A refresh token is refused only after a revocation: the plugin never sends one it has spent.
      expect(counters.rejected).toBeLessThanOrEqual(revocations);
      // So every call is justified: the first login, one per expiry, one refused per revocation, the faults served.
      expect(counters.tokenCalls).toBeLessThanOrEqual(1 + expiries + revocations + counters.faults);
      // No request leaves with a pair older than the last one written.
      let latest: string | undefined;
      for (const entry of journal) {
        if (entry.kind === 'set') latest = entry.access;
        else expect(entry.access).toBe(latest);
      }
      // The store holds a pair the service issued, or nothing.
      const stored = await store.get();
      if (stored) {
        expect(service.issued(stored.access)).toBe(true);
        if (stored.refresh) expect(service.issued(stored.refresh)).toBe(true);
      }
      // The plugin's counts agree with the service's.
      expect(auth.stats()).toMatchObject({ logins: counters.logins, refreshes: counters.refreshes });
      await service.close();
    }),
    { numRuns: RUNS, endOnFailure: true },
  );
}, 120_000);
