import type { RenewalReason, TokenAuthOptions } from '../lib/index.js';
import type { FakeTokenService } from './helpers/service.js';
import { burst, fulfilled, manualClock, rig } from './helpers/setup.js';
import type { Rig } from './helpers/setup.js';
import { LocklessStore } from './helpers/lockless-store.js';

const MINUTE = 60_000;
const SECOND = 1_000;

type ClockedRig = Rig & { clock: ReturnType<typeof manualClock>; refreshReasons: RenewalReason[] };

/**
 * A rig on a clock the test moves, with the service's JWT clock tied to it. `steer` sets up the service before the
 * first request logs in.
 */
async function primed(
  options: Partial<TokenAuthOptions> = {},
  steer: (service: FakeTokenService, now: () => number) => void = () => {},
): Promise<ClockedRig> {
  const clock = manualClock();
  const setup = rig({ clock: clock.now, ...options });
  setup.service.clockSec = () => Math.floor(clock.now() / 1000);
  steer(setup.service, clock.now);
  const refreshReasons: RenewalReason[] = [];
  setup.auth.on('refresh', (event) => refreshReasons.push(event.reason));
  await setup.api.get('/prime');
  expect(setup.service.counters.loginCalls).toBe(1);
  return { ...setup, clock, refreshReasons };
}

/** Sends one request and checks it went out alone, with the token held before. */
async function expectNoRenewal({ service, api, auth }: ClockedRig, path = '/orders'): Promise<void> {
  const held = (await auth.getTokens())?.access;
  const from = service.received.length;
  await api.get(path);
  const sent = service.received.slice(from);
  expect(sent.map((entry) => entry.route)).toEqual(['data']);
  expect(sent[0]?.authorization).toBe(`Bearer ${held}`);
}

/**
 * Sends one request after the service has stopped accepting the held token, and checks that the plugin renewed
 * first: a token call, then the request with the new token, and no request (so no 401) with the old one.
 */
async function expectRenewalBeforeSending({ service, api, auth }: ClockedRig, path = '/orders'): Promise<void> {
  const old = (await auth.getTokens())?.access;
  const replays = auth.stats().replays;
  service.expireAccessTokens();
  const from = service.received.length;
  await api.get(path);
  const sent = service.received.slice(from);
  const fresh = (await auth.getTokens())?.access;
  expect(fresh).not.toBe(old);
  expect(sent.map((entry) => entry.route)).toEqual(['token', 'data']);
  expect(sent[1]?.authorization).toBe(`Bearer ${fresh}`);
  expect(auth.stats().replays).toBe(replays);
}

/** The held token is kept until a second before `renewAtMs` from now, and renewed before sending a second after. */
async function expectRenewalAt(setup: ClockedRig, renewAtMs: number): Promise<void> {
  setup.clock.advance(renewAtMs - SECOND);
  await expectNoRenewal(setup);
  setup.clock.advance(2 * SECOND);
  await expectRenewalBeforeSending(setup);
}

describe('proactive renewal, with the default lifetime of an opaque token (45 min) and margin (30 s)', () => {
  it('keeps the token until 45 min minus the margin, then renews before sending', async () => {
    const setup = await primed();

    setup.clock.advance(45 * MINUTE - 30 * SECOND - SECOND);
    await expectNoRenewal(setup);
    expect(setup.service.counters.refreshCalls).toBe(0);

    setup.clock.advance(2 * SECOND);
    await expectRenewalBeforeSending(setup);
    expect(setup.service.counters.refreshCalls).toBe(1);
    expect(setup.service.counters.loginCalls).toBe(1);
    expect(setup.refreshReasons).toEqual(['expired']);
  });

  it('counts the lifetime of the renewed token from its own answer', async () => {
    const setup = await primed();
    setup.clock.advance(45 * MINUTE);
    await expectRenewalBeforeSending(setup);

    await expectRenewalAt(setup, 45 * MINUTE - 30 * SECOND);

    expect(setup.service.counters.refreshCalls).toBe(2);
    expect(setup.service.counters.loginCalls).toBe(1);
  });

  it.each([
    ['the default store', () => undefined],
    ['a store without a lock', () => new LocklessStore()],
  ])('shares one proactive renewal among concurrent requests, with %s', async (_, store) => {
    const setup = await primed({ store: store() });
    const { service, api, auth, clock } = setup;
    const old = (await auth.getTokens())?.access;
    clock.advance(45 * MINUTE);
    service.expireAccessTokens();
    const from = service.received.length;

    const results = await burst(30, (i) => api.get(`/orders/${i}`));

    expect(fulfilled(results)).toBe(30);
    expect(service.counters.refreshCalls).toBe(1);
    expect(service.counters.loginCalls).toBe(1);
    const sent = service.received.slice(from);
    expect(sent[0]?.route).toBe('token');
    expect(sent.filter((entry) => entry.route === 'data')).toHaveLength(30);
    expect(sent.some((entry) => entry.authorization === `Bearer ${old}`)).toBe(false);
    expect(auth.stats()).toMatchObject({ refreshes: 1, replays: 0 });
  });
});

describe('expiryMarginMs', () => {
  it('renews a token that expires within a custom margin of 5 min', async () => {
    const setup = await primed({ expiryMarginMs: 5 * MINUTE });

    await expectRenewalAt(setup, 40 * MINUTE);
    expect(setup.service.counters.refreshCalls).toBe(1);
  });

  it('renews exactly at expiry with a margin of 0', async () => {
    const setup = await primed({ expiryMarginMs: 0 });

    setup.clock.advance(45 * MINUTE - 1);
    await expectNoRenewal(setup);
    setup.clock.advance(1);
    await expectRenewalBeforeSending(setup);
    expect(setup.service.counters.refreshCalls).toBe(1);
  });
});

describe('where the lifetime comes from', () => {
  it('takes `expires_in` of the answer first, over a JWT `exp`', async () => {
    const setup = await primed({}, (service) => {
      service.expiresIn = 600;
      service.jwtLifetimeSec = 3600;
    });

    await expectRenewalAt(setup, 570 * SECOND);

    // The token answer's `expires_in` sets the lifetime of the renewed token too.
    await expectRenewalAt(setup, 570 * SECOND);
    expect(setup.service.counters.refreshCalls).toBe(2);
  });

  it('reads the `exp` of a JWT when the answer has no `expires_in`', async () => {
    const setup = await primed({}, (service) => {
      service.jwtLifetimeSec = 900;
    });

    await expectRenewalAt(setup, 870 * SECOND);

    await expectRenewalAt(setup, 870 * SECOND);
    expect(setup.service.counters.refreshCalls).toBe(2);
  });

  it('falls back to `accessTokenLifetimeMs` for an opaque token with no `expires_in`', async () => {
    const setup = await primed({ accessTokenLifetimeMs: 10 * MINUTE });

    await expectRenewalAt(setup, 10 * MINUTE - 30 * SECOND);
    expect(setup.service.counters.refreshCalls).toBe(1);
  });

  it('never renews before sending with `accessTokenLifetimeMs: Infinity`, only on 401', async () => {
    const setup = await primed({ accessTokenLifetimeMs: Infinity });
    const { service, api, auth, clock } = setup;
    expect((await auth.getTokens())?.expiresAt).toBeUndefined();

    clock.advance(10 * 365 * 24 * 60 * MINUTE);
    for (let i = 0; i < 5; i += 1) await expectNoRenewal(setup, `/orders/${i}`);
    expect(service.counters.refreshCalls).toBe(0);

    service.expireAccessTokens();
    const from = service.received.length;
    await api.get('/refused');

    expect(service.received.slice(from).map((entry) => entry.route)).toEqual(['data', 'token', 'data']);
    expect(service.counters.refreshCalls).toBe(1);
    expect(setup.refreshReasons).toEqual(['rejected']);
    expect(auth.stats().replays).toBe(1);
  });
});

describe('an expiry already past on arrival is not trusted', () => {
  /** 20 requests one after another over 20 minutes, then 20 at once: none may renew. */
  async function expectNoStorm(setup: ClockedRig): Promise<void> {
    for (let i = 0; i < 20; i += 1) {
      await expectNoRenewal(setup, `/orders/${i}`);
      setup.clock.advance(MINUTE);
    }
    const results = await burst(20, (i) => setup.api.get(`/burst/${i}`));
    expect(fulfilled(results)).toBe(20);
    expect(setup.service.counters.refreshCalls).toBe(0);
    expect(setup.service.counters.loginCalls).toBe(1);
  }

  it('a JWT whose `exp` is behind our clock', async () => {
    const setup = await primed({}, (service, now) => {
      // The service's clock is two hours behind ours, so its 10-minute tokens look expired on arrival.
      service.clockSec = () => Math.floor(now() / 1000) - 7200;
      service.jwtLifetimeSec = 600;
    });
    await expectNoStorm(setup);
  });

  it.each([1, 10, 30])('an `expires_in` of %i s, within an `expiryMarginMs` of 30 s', async (seconds) => {
    const setup = await primed({ expiryMarginMs: 30_000 }, (service) => {
      service.expiresIn = seconds;
    });
    await expectNoStorm(setup);
  });
});
