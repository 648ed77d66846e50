// The store's word must still hold when the call goes out. A holder frozen with the lock held (a SIGSTOPped process,
// a serverless instance frozen between invocations, a long GC pause) can thaw after its lease lapsed and another
// holder renewed, holding the pair it read before: the refresh token in it is spent. The token service cannot check
// our fence, so right before each token call a holder confirms that its lease has time left, and sends nothing
// otherwise. Real processes (harness/fleet-worker.ts) on a real redis-server; without it this file fails here, once,
// with the command that installs it.
import { FleetPool, sumBursts } from '../harness/fleet.js';
import type { FleetEvent } from '../harness/fleet.js';
import { closeEmulatorsAfterEach, emulator, refreshTokensSent } from './helpers/emulator.js';
import { until } from './helpers/flow.js';
import { spentSent, warmFleet } from './helpers/outage.js';
import { redisServerForFile } from './helpers/redis.js';

closeEmulatorsAfterEach();
const server = redisServerForFile();
const fleets = new FleetPool();
afterEach(() => fleets.stopAll());

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

const LOCK_TTL_MS = 2_000;

it('a holder frozen (SIGSTOP) with the lock held and the pair read, just before its token call, for longer than the lease, while another holder renews: after SIGCONT it sends nothing and takes the newer pair', async () => {
  const service = await emulator();
  const { fleet } = await warmFleet(fleets, server(), service, 2, { lock: { lockTtlMs: LOCK_TTL_MS } });
  const [frozen, other] = fleet.workers as [(typeof fleet.workers)[0], (typeof fleet.workers)[0]];
  const released = (worker: typeof frozen) =>
    worker.events.filter((event: FleetEvent) => event.name === 'lock-acquired').length ===
    worker.events.filter((event: FleetEvent) => event.name === 'lock-released').length;
  await until(() => released(frozen) && released(other), 10_000);

  service.expireAccessTokens();
  // It takes the lock, reads the pair (its refresh token the one to send), and stops right there.
  const { thawed } = await frozen.freezeAfterRead(() => frozen.burst(5));
  expect(service.counters.tokenCalls).toBe(1);
  // Pacing, not waiting for something: its lease lapses in Redis, as it would for a process stopped this long.
  await sleep(LOCK_TTL_MS + 500);
  // The other holder takes the lock and renews: the refresh token the frozen one read is spent now.
  const renewed = await other.burst(5);
  expect(renewed.failed).toBe(0);
  expect(service.counters).toMatchObject({ logins: 1, refreshes: 1 });

  frozen.process.kill('SIGCONT');
  const reply = await thawed;

  expect(sumBursts([renewed, reply]).errors).toEqual([]);
  expect(reply.ok).toBe(5);
  // It sent nothing on the strength of its lapsed lease: no refresh token went twice, none was refused.
  expect(refreshTokensSent(service).length).toBe(1);
  expect(spentSent(service)).toBe(0);
  expect(service.counters).toMatchObject({ logins: 1, refreshes: 1, rejected: 0 });
}, 60_000);
