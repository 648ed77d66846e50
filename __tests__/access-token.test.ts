import { isAxiosError } from 'axios';
import { isTokenAuthError } from '../lib/index.js';
import { PASSWORD, USERNAME } from './helpers/service.js';
import { burst, fulfilled, manualClock, rig, until } from './helpers/setup.js';

// `auth.accessToken()`: a valid token for what does not go through axios, by the same rule as requests.

const MINUTE = 60_000;

function codesOf(results: PromiseSettledResult<unknown>[]): unknown[] {
  return results.map((result) => result.status === 'rejected' && isTokenAuthError(result.reason) && result.reason.code);
}

describe('auth.accessToken()', () => {
  it('logs in once for concurrent callers when nothing is held, and then answers from memory', async () => {
    const { service, auth } = rig();

    const tokens = await Promise.all(Array.from({ length: 5 }, () => auth.accessToken()));

    expect(new Set(tokens)).toEqual(new Set([service.issued[0]]));
    expect(service.counters.loginCalls).toBe(1);
    expect(await auth.accessToken()).toBe(service.issued[0]);
    expect(service.received).toHaveLength(1);
  });

  it('renews a token known to be expired once, shared with the requests under way', async () => {
    const clock = manualClock();
    const { service, api, auth } = rig({ clock: clock.now });
    const first = await auth.accessToken();
    clock.advance(45 * MINUTE);

    const [tokens, requests] = await Promise.all([
      Promise.all(Array.from({ length: 5 }, () => auth.accessToken())),
      burst(5, (i) => api.get(`/orders/${i}`)),
    ]);

    expect(service.counters.refreshCalls).toBe(1);
    expect(fulfilled(requests)).toBe(5);
    expect(new Set(tokens).size).toBe(1);
    expect(tokens[0]).not.toBe(first);
    expect(tokens[0]).toBe((await auth.getTokens())?.access);
    // The requests carried the same renewed token.
    const sent = service.received.filter((entry) => entry.route === 'data').map((entry) => entry.authorization);
    expect(new Set(sent)).toEqual(new Set([`Bearer ${tokens[0]}`]));
  });

  it('waits for a renewal under way instead of starting one', async () => {
    const { service, api, auth } = rig();
    await api.get('/prime');
    service.expireAccessTokens();
    service.tokenDelayMs = 30;

    const request = api.get('/orders');
    // The renewal is under way once its token call has reached the service (which answers it 30 ms later).
    await until(() => service.counters.refreshCalls === 1);
    const token = await auth.accessToken();

    expect((await request).status).toBe(200);
    expect(service.counters.refreshCalls).toBe(1);
    expect(token).toBe((await auth.getTokens())?.access);
  });

  it('respects the token budget: past it, TOKEN_BUDGET_EXCEEDED without a call', async () => {
    const clock = manualClock();
    const { service, auth } = rig({ clock: clock.now, tokenBudget: { refreshes: 1 } });
    await auth.accessToken();
    clock.advance(45 * MINUTE);
    await auth.accessToken();
    clock.advance(45 * MINUTE);

    const results = await Promise.allSettled([auth.accessToken(), auth.accessToken()]);

    expect(codesOf(results)).toEqual(['TOKEN_BUDGET_EXCEEDED', 'TOKEN_BUDGET_EXCEEDED']);
    expect(service.counters.refreshCalls).toBe(1);
  });

  it('respects the login cooldown: a rejected login is not tried again by the next call', async () => {
    const { service, auth } = rig({ credentials: { username: USERNAME, password: `${PASSWORD}-wrong` } });

    const first = await Promise.allSettled([auth.accessToken(), auth.accessToken()]);
    const again = await Promise.allSettled([auth.accessToken()]);

    expect(codesOf(first)).toEqual(['LOGIN_REJECTED', 'LOGIN_REJECTED']);
    expect(codesOf(again)).toEqual(['LOGIN_REJECTED']);
    expect(((again[0] as PromiseRejectedResult).reason as Error).message).toMatch(/^Automatic logins are paused/);
    expect(service.counters.loginCalls).toBe(1);
  });

  it('a request in flight during logout(): its 401 reaches the caller and logs nobody back in', async () => {
    const { service, api, auth } = rig();
    await api.get('/prime');
    const answer = service.hold('data');

    const inFlight = api.get('/orders').then(
      () => 'answered',
      (error: unknown) => (isAxiosError(error) ? error.response?.status : error),
    );
    await until(() => service.counters.dataCalls === 2);
    service.expireAccessTokens();
    await auth.logout();
    answer();

    expect(await inFlight).toBe(401);
    expect(service.counters.loginCalls).toBe(1);
    expect(service.counters.refreshCalls).toBe(0);
    expect(await auth.getTokens()).toBeNull();
  });

  it('respects logout(): a call waiting for a login fails with LOGGED_OUT, and so does the next until login()', async () => {
    const { service, auth } = rig();
    const answer = service.hold('token');

    const waiting = auth.accessToken();
    await until(() => service.counters.loginCalls === 1);
    const loggingOut = auth.logout();
    answer();
    await loggingOut;

    const error = await waiting.catch((e: unknown) => e);
    expect(isTokenAuthError(error) && error.code).toBe('LOGGED_OUT');
    const after = await auth.accessToken().catch((e: unknown) => e);
    expect(isTokenAuthError(after) && after.code).toBe('LOGGED_OUT');
    expect(service.counters.loginCalls).toBe(1);
    await auth.login();
    expect(await auth.accessToken()).toBe(service.issued[2]);
    expect(service.counters.loginCalls).toBe(2);
  });
});
