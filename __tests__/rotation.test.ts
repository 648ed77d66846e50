import { isAxiosError } from 'axios';
import { MemoryTokenStore, isTokenAuthError } from '../lib/index.js';
import type { RenewalReason, TokenAuthError, TokenAuthEvents, TokenPair } from '../lib/index.js';
import type { TokenStoreLock, TokenStoreLockRequest } from '../lib/index.js';
import { FakeTokenService, PASSWORD, USERNAME } from './helpers/service.js';
import type { Received } from './helpers/service.js';
import { LocklessStore } from './helpers/lockless-store.js';
import { burst, fulfilled, manualClock, rig, until } from './helpers/setup.js';

/** The refresh tokens the token calls carried, in order. */
function refreshTokensSent(service: FakeTokenService): unknown[] {
  return service.received
    .filter((entry) => entry.route === 'token')
    .map((entry) => (JSON.parse(entry.body) as { refresh_token?: unknown }).refresh_token);
}

/** The calls that reached the service after the first `from`, as their routes. */
function routesSince(service: FakeTokenService, from: number): Received['route'][] {
  return service.received.slice(from).map((entry) => entry.route);
}

/** The error of every rejected result; fails the test if one was fulfilled. */
/**
 * What a request gets while automatic logins are paused: the rejection's code and status, a message that says until
 * when, and the rejection itself as `cause`.
 */
function expectPausedBy(error: unknown, rejection: unknown): void {
  const { code, status } = rejection as TokenAuthError;
  expect(error).toMatchObject({ name: 'TokenAuthError', code, status });
  expect((error as Error).message).toMatch(
    /^Automatic logins are paused until \d{4}-\d\d-\d\dT[\d:.]+Z \(\d+ s more, `loginCooldownMs`\)/,
  );
  expect((error as Error).cause).toBe(rejection);
}

function reasons(results: PromiseSettledResult<unknown>[]): unknown[] {
  return results.map((result) => {
    if (result.status === 'fulfilled') throw new Error('expected every request to be rejected');
    return result.reason as unknown;
  });
}

describe('refresh token rotation', () => {
  it('stores the refresh token of each token answer and sends it next time, so each one is spent once', async () => {
    const { service, api, auth } = rig();
    await api.get('/prime');
    const atLogin = await auth.getTokens();

    for (let expiry = 1; expiry <= 3; expiry += 1) {
      service.expireAccessTokens();
      await api.get(`/orders/${expiry}`);
    }

    // issued: [access0, refresh0, access1, refresh1, …]; the login gave pair 0, the token calls pairs 1 to 3.
    expect(atLogin?.refresh).toBe(service.issued[1]);
    expect(refreshTokensSent(service)).toEqual([service.issued[1], service.issued[3], service.issued[5]]);
    expect(await auth.getTokens()).toMatchObject({ access: service.issued[6], refresh: service.issued[7] });
    // Had the plugin kept an old refresh token, the service (where each works once) would have refused it.
    expect(service.counters.loginCalls).toBe(1);
    expect(service.counters.refreshCalls).toBe(3);
    expect(auth.stats()).toMatchObject({ logins: 1, refreshes: 3, replays: 3, failures: 0 });
  });

  it('reports `rotated: true` on the refresh event when the answer brings a new refresh token', async () => {
    const { service, api, auth } = rig();
    const refreshes: TokenAuthEvents['refresh'][] = [];
    auth.on('refresh', (event) => refreshes.push(event));
    await api.get('/prime');
    service.expireAccessTokens();

    await api.get('/orders');

    expect(refreshes).toHaveLength(1);
    expect(refreshes[0]).toMatchObject({ reason: 'rejected', rotated: true });
  });

  it('keeps the old refresh token when the answer has none, and sends it again next time', async () => {
    const { service, api, auth } = rig();
    const refreshes: TokenAuthEvents['refresh'][] = [];
    auth.on('refresh', (event) => refreshes.push(event));
    await api.get('/prime');
    const atLogin = await auth.getTokens();
    service.rotate = false;

    for (let expiry = 1; expiry <= 3; expiry += 1) {
      service.expireAccessTokens();
      await api.get(`/orders/${expiry}`);
    }

    expect(atLogin?.refresh).toBe(service.issued[1]);
    expect(refreshTokensSent(service)).toEqual([atLogin?.refresh, atLogin?.refresh, atLogin?.refresh]);
    const now = await auth.getTokens();
    expect(now?.refresh).toBe(atLogin?.refresh);
    expect(now?.access).toBe(service.issued[service.issued.length - 2]);
    expect(refreshes.map((event) => event.rotated)).toEqual([false, false, false]);
    expect(service.counters.loginCalls).toBe(1);
    expect(service.counters.refreshCalls).toBe(3);
  });

  it('does not call it a rotation when the answer repeats the refresh token sent', async () => {
    const { service, api, auth } = rig();
    const refreshes: TokenAuthEvents['refresh'][] = [];
    auth.on('refresh', (event) => refreshes.push(event));
    await api.get('/prime');
    const sent = (await auth.getTokens())?.refresh;
    service.tokenFaults.push([200, { access: 'acc-repeated', refresh: sent }]);
    service.expireAccessTokens();
    service.validAccess.add('acc-repeated');

    await api.get('/orders');

    expect(refreshes).toEqual([expect.objectContaining({ rotated: false })]);
    expect(await auth.getTokens()).toMatchObject({ access: 'acc-repeated', refresh: sent });
  });
});

describe('the token call rejects the refresh token', () => {
  it.each([
    [1, 'the default store', () => undefined],
    [10, 'the default store', () => undefined],
    [50, 'the default store', () => undefined],
    [10, 'a store without a lock', () => new LocklessStore()],
  ])('logs in once with the credentials and replays all %i refused requests, with %s', async (n, _, store) => {
    const { service, api, auth } = rig({ store: store() });
    const logins: RenewalReason[] = [];
    auth.on('login', (event) => logins.push(event.reason));
    await api.get('/prime');
    service.expireAccessTokens();
    service.revokeRefreshTokens();
    const from = service.received.length;

    const results = await burst(n, (i) => api.post('/orders', { i }));

    expect(fulfilled(results)).toBe(n);
    expect(service.counters.refreshCalls).toBe(1);
    expect(service.counters.loginCalls).toBe(2);
    expect(service.counters.dataCalls).toBe(1 + 2 * n);
    expect(routesSince(service, from).filter((route) => route !== 'data')).toEqual(['token', 'login']);
    const fresh = (await auth.getTokens())?.access;
    expect(fresh).toBe(service.issued[2]);
    const replays = service.received
      .slice(from)
      .filter((entry) => entry.route === 'data')
      .slice(-n);
    expect(new Set(replays.map((entry) => entry.authorization))).toEqual(new Set([`Bearer ${fresh}`]));
    expect(logins).toEqual(['no-token', 'refresh-rejected']);
    expect(auth.stats()).toMatchObject({ logins: 2, refreshes: 0, replays: n, failures: 1 });
  });
});

/**
 * A shared store whose lock's lease another holder takes over while this holder's token call is out, as when two tabs
 * claimed a lease in localStorage at once and storage kept the other's claim: from `takeOver()` its `leaseLeftMs` says
 * 0, and the next lock waits until `handOver(pair)` has stored that holder's pair. It counts what is cleared.
 */
class TakenOverStore extends MemoryTokenStore {
  cleared = 0;
  /** A lock is waiting for the other holder's hand-over. */
  waiting = false;
  private takenOver = false;
  private handedOver = Promise.resolve();
  private handOverNow = (): void => undefined;

  takeOver(): void {
    this.takenOver = true;
    this.handedOver = new Promise((resolve) => (this.handOverNow = resolve));
  }

  handOver(pair: TokenPair): void {
    super.set(pair);
    this.takenOver = false;
    this.handOverNow();
  }

  override async lock(request?: TokenStoreLockRequest): Promise<TokenStoreLock> {
    this.waiting = this.takenOver;
    await this.handedOver;
    this.waiting = false;
    const held = await super.lock(request);
    return { ...held, leaseLeftMs: () => (this.takenOver ? 0 : 10_000) };
  }

  override clear(): void {
    this.cleared += 1;
    super.clear();
  }
}

describe("the token call rejects the refresh token sent under a lease that is another holder's now", () => {
  it("drops nothing, logs nobody in, and takes the turn again, for that holder's pair", async () => {
    const store = new TakenOverStore();
    const { service, api, auth } = rig({ store });
    await api.get('/prime');
    service.expireAccessTokens();
    const release = service.hold('token');
    const request = api.get('/orders');
    await until(() => service.counters.refreshCalls === 1);

    // The other holder spent the refresh token first: this holder's call is refused, and its lease is not its own.
    store.takeOver();
    service.revokeRefreshTokens();
    release();
    await until(() => store.waiting);
    const theirs = { access: 'acc-theirs', refresh: 'ref-theirs' };
    service.validAccess.add(theirs.access);
    store.handOver(theirs);

    expect((await request).status).toBe(200);
    expect(service.received.at(-1)?.authorization).toBe('Bearer acc-theirs');
    expect(service.counters).toMatchObject({ loginCalls: 1, refreshCalls: 1, rejected: 1 });
    expect(store.cleared).toBe(0);
    expect(await auth.getTokens()).toMatchObject(theirs);
  });
});

describe('the login rejects the credentials', () => {
  /** A rig whose service no longer accepts the password, on a clock the test moves. */
  function rejectedRig(options: { loginCooldownMs?: number } = {}) {
    const clock = manualClock();
    const setup = rig({ clock: clock.now, ...options });
    setup.service.users.set(USERNAME, 'a password changed elsewhere');
    return { ...setup, clock };
  }

  function expectLoginRejected(error: unknown): asserts error is TokenAuthError {
    expect(isTokenAuthError(error) && error.code).toBe('LOGIN_REJECTED');
  }

  it('rejects every waiting request with one LOGIN_REJECTED whose cause is the redacted 401', async () => {
    const { service, api } = rejectedRig();

    const results = await burst(5, (i) => api.get(`/orders/${i}`));

    const errors = reasons(results);
    const error = errors[0];
    expectLoginRejected(error);
    for (const other of errors) expect(other).toBe(error);
    expect(error.status).toBe(401);
    const cause = error.cause;
    expect(isAxiosError(cause)).toBe(true);
    if (!isAxiosError(cause)) return;
    expect(cause.response?.status).toBe(401);
    const basic = Buffer.from(`${USERNAME}:a password changed elsewhere`, 'utf8').toString('base64');
    expect(cause.config?.headers).toBeUndefined();
    expect(
      JSON.stringify({
        message: error.message,
        cause: cause.message,
        config: cause.config,
        request: cause.request as unknown,
      }),
    ).not.toContain(basic);
    expect(service.counters.loginCalls).toBe(1);
    expect(service.counters.dataCalls).toBe(0);
  });

  it('does not log in on its own during the cooldown: requests fail at once with the same error, then one login is tried after it', async () => {
    const { service, api, clock } = rejectedRig();
    const first = await api.get('/orders').catch((e: unknown) => e);
    expectLoginRejected(first);
    expect(service.counters.loginCalls).toBe(1);

    clock.advance(30_000);
    const early = await burst(4, (i) => api.get(`/early/${i}`));
    clock.advance(29_999);
    const late = await burst(4, (i) => api.get(`/late/${i}`));

    for (const error of [...reasons(early), ...reasons(late)]) expectPausedBy(error, first);
    expect(service.received).toHaveLength(1);

    clock.advance(1);
    const after = await api.get('/after').catch((e: unknown) => e);

    expect(service.counters.loginCalls).toBe(2);
    expectLoginRejected(after);
    // A new attempt, with its own error, that starts a new cooldown.
    expect(after).not.toBe(first);
    clock.advance(59_999);
    expectPausedBy(await api.get('/again').catch((e: unknown) => e), after);
    expect(service.counters.loginCalls).toBe(2);
  });

  it('logs in again after the cooldown, and goes on once the service accepts the credentials', async () => {
    const { service, api, clock } = rejectedRig();
    await api.get('/orders').catch(() => undefined);
    service.users.set(USERNAME, PASSWORD);

    clock.advance(59_999);
    const inWindow = await api.get('/orders').catch((e: unknown) => e);
    expectLoginRejected(inWindow);
    expect(service.counters.loginCalls).toBe(1);

    clock.advance(1);
    const results = await burst(5, (i) => api.get(`/orders/${i}`));

    expect(fulfilled(results)).toBe(5);
    expect(service.counters.loginCalls).toBe(2);
  });

  it('honours a custom `loginCooldownMs`', async () => {
    const { service, api, clock } = rejectedRig({ loginCooldownMs: 5_000 });
    await api.get('/orders').catch(() => undefined);

    clock.advance(4_999);
    await api.get('/orders').catch(() => undefined);
    expect(service.counters.loginCalls).toBe(1);

    clock.advance(1);
    await api.get('/orders').catch(() => undefined);
    expect(service.counters.loginCalls).toBe(2);
  });

  it('lets `auth.login()` try again at once inside the cooldown', async () => {
    const { service, api, auth } = rejectedRig();
    const first = await api.get('/orders').catch((e: unknown) => e);
    expectLoginRejected(first);

    const manualRejected = await auth.login().catch((e: unknown) => e);
    expectLoginRejected(manualRejected);
    expect(manualRejected).not.toBe(first);
    expect(service.counters.loginCalls).toBe(2);

    service.users.set(USERNAME, PASSWORD);
    await auth.login();
    expect(service.counters.loginCalls).toBe(3);

    // A successful login ends the cooldown: requests go through with its token, with no further login.
    const results = await burst(3, (i) => api.get(`/orders/${i}`));
    expect(fulfilled(results)).toBe(3);
    expect(service.counters.loginCalls).toBe(3);
  });

  describe('after the refresh token was refused too', () => {
    async function refusedRig() {
      const setup = rejectedRig();
      const { service, api } = setup;
      service.users.set(USERNAME, PASSWORD);
      await api.get('/prime');
      service.expireAccessTokens();
      service.revokeRefreshTokens();
      service.users.set(USERNAME, 'a password changed elsewhere');
      const results = await burst(5, (i) => api.get(`/orders/${i}`));
      return { ...setup, results };
    }

    it('rejects every waiting request with the one LOGIN_REJECTED, after one token call and one login', async () => {
      const { service, results } = await refusedRig();

      const errors = reasons(results);
      expectLoginRejected(errors[0]);
      for (const error of errors) expect(error).toBe(errors[0]);
      expect(service.counters.refreshCalls).toBe(1);
      expect(service.counters.loginCalls).toBe(2);
    });

    it('does not log in again during the cooldown and fails requests with the same error', async () => {
      const { service, api, clock, results } = await refusedRig();
      const error = reasons(results)[0];

      clock.advance(59_999);
      const inWindow = await burst(3, (i) => api.get(`/later/${i}`));

      for (const other of reasons(inWindow)) expectPausedBy(other, error);
      expect(service.counters.loginCalls).toBe(2);
    });

    it('fails requests during the cooldown at once, without sending the refused tokens again', async () => {
      const { service, api, clock, results } = await refusedRig();
      const error = reasons(results)[0];
      const from = service.received.length;

      const inWindow: unknown[] = [];
      for (let i = 0; i < 3; i += 1) {
        clock.advance(10_000);
        inWindow.push(await api.get(`/later/${i}`).catch((e: unknown) => e));
      }

      for (const other of inWindow) expectPausedBy(other, error);
      expect(routesSince(service, from)).toEqual([]);
    });
  });
});

describe('two instances with one shared MemoryTokenStore', () => {
  function sharedRigs(clock = manualClock()) {
    const service = new FakeTokenService();
    const store = new MemoryTokenStore();
    const a = rig({ store, clock: clock.now }, service);
    const b = rig({ store, clock: clock.now }, service);
    return { service, a, b, clock };
  }

  it('share the tokens: one login for first requests on both', async () => {
    const { service, a, b } = sharedRigs();

    const results = await burst(20, (i) => (i % 2 === 0 ? a.api : b.api).get(`/orders/${i}`));

    expect(fulfilled(results)).toBe(20);
    expect(service.counters.loginCalls).toBe(1);
    expect(service.counters.refreshCalls).toBe(0);
    expect(await b.auth.getTokens()).toEqual(await a.auth.getTokens());
    expect(
      new Set(service.received.filter((entry) => entry.route === 'data').map((entry) => entry.authorization)),
    ).toEqual(new Set([`Bearer ${service.issued[0]}`]));
  });

  it.each([2, 20])('renew once in all when %i requests on both are refused at once after an expiry', async (n) => {
    const { service, a, b } = sharedRigs();
    await a.api.get('/prime');
    await b.api.get('/prime');
    service.expireAccessTokens();

    const results = await burst(n, (i) => (i % 2 === 0 ? a.api : b.api).get(`/orders/${i}`));

    expect(fulfilled(results)).toBe(n);
    expect(service.counters.loginCalls).toBe(1);
    expect(service.counters.refreshCalls).toBe(1);
    const fresh = await a.auth.getTokens();
    expect(fresh).toMatchObject({ access: service.issued[2], refresh: service.issued[3] });
    expect(await b.auth.getTokens()).toEqual(fresh);
    expect(a.auth.stats().refreshes + b.auth.stats().refreshes).toBe(1);

    // The next expiry spends the rotated refresh token, whichever instance renews.
    service.expireAccessTokens();
    const next = await burst(n, (i) => (i % 2 === 0 ? b.api : a.api).get(`/next/${i}`));
    expect(fulfilled(next)).toBe(n);
    expect(service.counters.refreshCalls).toBe(2);
    expect(service.counters.loginCalls).toBe(1);
    expect(refreshTokensSent(service)).toEqual([service.issued[1], service.issued[3]]);
  });

  it('renew once in all when the stored token expires on the shared clock', async () => {
    const { service, a, b, clock } = sharedRigs();
    await a.api.get('/prime');
    await b.api.get('/prime');
    clock.advance(45 * 60_000);

    const results = await burst(20, (i) => (i % 2 === 0 ? a.api : b.api).get(`/orders/${i}`));

    expect(fulfilled(results)).toBe(20);
    expect(service.counters.loginCalls).toBe(1);
    expect(service.counters.refreshCalls).toBe(1);
    expect(await b.auth.getTokens()).toEqual(await a.auth.getTokens());
  });
});
