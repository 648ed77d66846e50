import type { TokenServiceEmulator } from 'axios-token-keeper/emulator';
import { closeEmulatorsAfterEach, emulator, E2E_USER } from './helpers/emulator.js';
import { sumBursts } from '../harness/fleet.js';
import type { FleetOptions } from '../harness/fleet.js';
import { fleetsForFile } from './helpers/fleets.js';

// A fleet is one client also when things go wrong: real processes (harness/fleet-worker.ts) sharing one account through
// a real redis-server or one token file consult the account's record the store keeps (login pause, refused refresh
// tokens, the refusals renewing did not cure, the budget), so the account pays for a failure once, not once per
// process. FLEET_ACCOUNT=50 npx jest fleet-account runs it at the size.
closeEmulatorsAfterEach();
const fleets = fleetsForFile('fleet-account');
const COUNT = Number(process.env.FLEET_ACCOUNT ?? 8);
// Starting the processes takes most of a test: about a second each on 2 cores.
jest.setTimeout(60_000 + COUNT * 3_000);

const STORES = [
  ['Redis', () => fleets.redisStore(true)],
  ['one token file', () => fleets.fileStore()],
] as const;

const calls = (service: TokenServiceEmulator, route: 'login' | 'token') =>
  service.calls.filter((call) => call.route === route).length;

describe.each(STORES)(`${COUNT} processes sharing one account through %s`, (_name, makeStore) => {
  /** The fleet of the test on `service`, each process with the plugin's options `extra`. */
  const fleetOn = async (service: TokenServiceEmulator, extra: Partial<FleetOptions> = {}) =>
    fleets.start({ count: COUNT, emulatorUrl: service.url, store: await makeStore(), ...extra });

  it('a wrong password from the start: 1 rejected login for the whole fleet; every other process fails at once, saying another holder was refused', async () => {
    const service = await emulator();
    const fleet = await fleetOn(service, { account: { username: E2E_USER, password: 'a-wrong-password-1f9c' } });

    const replies = await fleet.burst(5);

    const total = sumBursts(replies);
    expect(total).toMatchObject({ ok: 0, failed: COUNT * 5 });
    expect(calls(service, 'login')).toBe(1);
    expect(service.counters).toMatchObject({ logins: 0, rejected: 1 });
    expect(total.errors.every((error) => error.startsWith('LOGIN_REJECTED'))).toBe(true);
    expect(total.errors.filter((error) => error.includes('another holder of the shared store'))).toHaveLength(
      COUNT * 5 - 5,
    );
  });

  it('the password changed and the refresh tokens revoked mid-run: 1 refused refresh and 1 rejected login in all; once the password is right again, 1 login and every process back on the new pair', async () => {
    const service = await emulator();
    // Long enough to outlast the failing round, whose processes fail one after another under the lock.
    const fleet = await fleetOn(service, { loginCooldownMs: 1_500 + COUNT * 250 });
    expect(sumBursts(await fleet.burst(5))).toMatchObject({ ok: COUNT * 5, failed: 0 });
    expect([calls(service, 'login'), calls(service, 'token')]).toEqual([1, 0]);

    service.expireAccessTokens();
    service.revokeRefreshTokens();
    service.inject('login', { status: 401, body: { detail: 'Invalid credentials.' } }, 1_000);
    const broken = sumBursts(await fleet.burst(5));

    expect(broken).toMatchObject({ ok: 0, failed: COUNT * 5 });
    expect([calls(service, 'login'), calls(service, 'token')]).toEqual([2, 1]);

    // The administrator gives the password back; the pause ends (when the errors say), and one process logs in for all.
    service.clearFaults();
    const pauses = broken.errors.map((error) => Date.parse(/paused until (\S+Z)/.exec(error)?.[1] ?? ''));
    const until = Math.max(...pauses.filter(Number.isFinite));
    expect(until).toBeGreaterThan(Date.now());
    // The pause is real time in 8 processes' clocks, which the test cannot move: it waits until the time it names.
    await new Promise((resolve) => setTimeout(resolve, until - Date.now() + 50));
    const recovered = sumBursts(await fleet.burst(5));

    expect(recovered).toMatchObject({ ok: COUNT * 5, failed: 0 });
    expect([calls(service, 'login'), calls(service, 'token')]).toEqual([3, 1]);
    expect(service.counters.logins).toBe(2);
  });

  it('a budget of 2 logins and 3 token calls an hour: 1 login and 3 token calls for the whole fleet over 5 expiries, then TOKEN_BUDGET_EXCEEDED naming when the next is allowed', async () => {
    const service = await emulator();
    const fleet = await fleetOn(service, { tokenBudget: { logins: 2, refreshes: 3 } });
    const rounds = [await fleet.burst(2)];
    for (let expiry = 1; expiry <= 5; expiry += 1) {
      service.expireAccessTokens();
      rounds.push(await fleet.burst(2));
    }

    expect([calls(service, 'login'), calls(service, 'token')]).toEqual([1, 3]);
    const late = sumBursts(rounds.slice(4).flat());
    expect(late).toMatchObject({ ok: 0, failed: COUNT * 4 });
    expect(late.errors.every((error) => /TOKEN_BUDGET_EXCEEDED.*The next is allowed in \d+ s/.test(error))).toBe(true);
  });

  it('every data call refused while token calls succeed (the account lost its permissions): at most 3 token calls for the whole fleet in 4 s', async () => {
    const service = await emulator();
    const fleet = await fleetOn(service);
    expect(sumBursts(await fleet.burst(2, { path: '/api/orders' }))).toMatchObject({ failed: 0 });
    for (let i = 0; i < 4; i += 1) service.setAlwaysUnauthorized(`/api/lost/${i}`);

    const started = Date.now();
    const rounds = [];
    while (Date.now() - started < 4_000) {
      rounds.push(await fleet.burst(4, { path: '/api/lost' }));
      // Pacing, not waiting for something: the refusals are spread over the 4 s that the back-off is measured on.
      await new Promise((resolve) => setTimeout(resolve, 100));
    }

    expect(sumBursts(rounds.flat())).toMatchObject({ ok: 0 });
    expect(calls(service, 'login')).toBe(1);
    // The first renewal cures nothing; the refusals are general from the second endpoint on, and the back-off lets a
    // renewal go after 1 s, then 2 s more: 3 at most in 4 s, whatever the number of processes.
    expect(calls(service, 'token')).toBeGreaterThanOrEqual(1);
    expect(calls(service, 'token')).toBeLessThanOrEqual(3);
  });
});
