import axios from 'axios';
import type { AxiosError } from 'axios';
import { attachTokenAuth, isTokenAuthError } from '../lib/index.js';
import type { TokenAuthEvents } from '../lib/index.js';
import { closeEmulatorsAfterEach, e2e, E2E_PASSWORD, E2E_USER, emulator } from './helpers/emulator.js';
import { burst, fulfilled, manualClock } from './helpers/flow.js';
import { failureOf } from './helpers/settled.js';

// The token budget and the other guards of the account, against the emulator over real HTTP.
closeEmulatorsAfterEach();

const codeOf = (error: unknown) => isTokenAuthError(error) && error.code;
const MINUTE = 60_000;

describe('tokenBudget', () => {
  it('refuses a login past the cap before it leaves, and says so in a failure event', async () => {
    const { emulator: service, auth } = await e2e({ tokenBudget: { logins: 2 } });
    const failures: Array<TokenAuthEvents['failure']> = [];
    auth.on('failure', (event) => failures.push(event));

    await auth.login();
    await auth.login();
    const third = await auth.login().catch((e: unknown) => e);

    expect(codeOf(third)).toBe('TOKEN_BUDGET_EXCEEDED');
    expect((third as Error).message).toMatch(
      /2 login calls in the last 60 min \(`tokenBudget.logins`\)\. The next is allowed in \d+ s/,
    );
    expect(service.counters.tokenCalls).toBe(2);
    expect(failures.map((event) => [event.operation, event.code])).toEqual([['login', 'TOKEN_BUDGET_EXCEEDED']]);
  });

  it('counts retries: a service answering 503 gets no more calls than the budget', async () => {
    const { emulator: service, api, auth } = await e2e({ tokenBudget: { logins: 2 }, tokenRetries: 5 });
    service.inject('login', { status: 503 }, 10);
    const failures: Array<TokenAuthEvents['failure']> = [];
    auth.on('failure', (event) => failures.push(event));

    const results = await burst(20, () => api.get('/orders'));

    expect(results.map((r) => r.status === 'rejected' && codeOf(r.reason))).toEqual(
      Array(20).fill('TOKEN_BUDGET_EXCEEDED'),
    );
    expect(service.counters.tokenCalls).toBe(2);
    // The login's two attempts left and were answered 503; the third, refused before leaving, ended the call unanswered.
    expect(failures).toEqual([
      {
        operation: 'login',
        code: 'TOKEN_BUDGET_EXCEEDED',
        error: expect.any(Error) as Error,
        reason: 'no-token',
        durationMs: expect.any(Number) as number,
        attempts: 2,
        status: undefined,
        waiting: 20,
      },
    ]);
    expect(auth.stats()).toMatchObject({ failures: 1, waiting: 0, budget: { login: 0, refresh: 30 } });
  });

  it('fails every waiter of a renewal past the refresh cap, and allows calls again as the window rolls on', async () => {
    const clock = manualClock();
    const { emulator: service, api } = await e2e(
      { clock: clock.now, tokenBudget: { refreshes: 3, windowMs: 10 * MINUTE } },
      { clock: clock.now },
    );
    await api.get('/orders');
    for (let i = 0; i < 3; i += 1) {
      service.expireAccessTokens();
      expect(fulfilled(await burst(5, () => api.get('/orders')))).toBe(5);
    }

    service.expireAccessTokens();
    const refused = await burst(5, () => api.get('/orders'));
    clock.advance(10 * MINUTE);
    const later = await burst(5, () => api.get('/orders'));

    expect(refused.map((r) => r.status === 'rejected' && codeOf(r.reason))).toEqual(
      Array(5).fill('TOKEN_BUDGET_EXCEEDED'),
    );
    expect(fulfilled(later)).toBe(5);
    expect(service.counters).toMatchObject({ logins: 1, refreshes: 4 });
  });

  it('names the spent calls, the option, and when the next may go, to the second, for logins and for token calls', async () => {
    const clock = manualClock();
    const { emulator: service, auth } = await e2e(
      { clock: clock.now, tokenBudget: { logins: 2, refreshes: 2, windowMs: 10 * MINUTE } },
      { clock: clock.now },
    );
    const advice =
      ' The identity provider may suspend an account that generates too many tokens: the `failure` events say why so many were needed.';

    await auth.login();
    clock.advance(MINUTE);
    await auth.login();
    await auth.refresh();
    clock.advance(MINUTE);
    await auth.refresh();
    // The first login left 2 min 0.5 s ago, the first token call 1 min 0.5 s ago: each frees a call 10 min after it.
    clock.advance(500);
    const login = await failureOf(auth.login(), isTokenAuthError);
    const refresh = await failureOf(auth.refresh(), isTokenAuthError);

    expect(login.message).toBe(
      'Token budget spent: 2 login calls in the last 10 min (`tokenBudget.logins`). The next is allowed in 480 s.' +
        advice,
    );
    expect(refresh.message).toBe(
      'Token budget spent: 2 token calls in the last 10 min (`tokenBudget.refreshes`). The next is allowed in 540 s.' +
        advice,
    );
    expect(service.counters).toMatchObject({ logins: 2, refreshes: 2, tokenCalls: 4 });
  });

  it('keeps a pathological service (every token answered, every data call 401) under the cap for a simulated day', async () => {
    const clock = manualClock();
    const {
      emulator: service,
      api,
      auth,
    } = await e2e({ clock: clock.now }, { clock: clock.now, log: false, alwaysUnauthorized: ['/everything'] });
    let settled = 0;
    let unauthorized = 0;

    for (let minute = 0; minute < 24 * 60; minute += 1) {
      const results = await burst(2, () => api.get('/everything'));
      settled += results.length;
      unauthorized += results.filter(
        (r) => r.status === 'rejected' && (r.reason as AxiosError).response?.status === 401,
      ).length;
      clock.advance(MINUTE);
    }

    expect(settled).toBe(2 * 24 * 60);
    expect(unauthorized).toBe(settled);
    // One cure attempt per token and one renewal at each 45-minute expiry: about 64 a day, far under 30 an hour.
    const lifetimes = Math.ceil((24 * 60) / 44.5);
    expect(service.counters.logins).toBe(1);
    expect(service.counters.refreshes).toBeLessThanOrEqual(2 * lifetimes);
    expect(service.counters.tokenCalls).toBeLessThanOrEqual(24 * 30);
    expect(auth.stats().failures).toBe(0);
    // 2,880 requests over real HTTP: about 7 s on a quiet machine, over 20 s on a busy one.
  }, 60_000);

  it('can be turned off, and stats() then shows no budget', async () => {
    const { emulator: service, auth } = await e2e({ tokenBudget: false });
    for (let i = 0; i < 15; i += 1) await auth.login();
    expect(service.counters.logins).toBe(15);
    expect(auth.stats()).toMatchObject({ logins: 15, budget: undefined });
    expect('budget' in auth.stats()).toBe(true);
  });
});

describe('the login cooldown grows with each rejection in a row', () => {
  it('waits 60 s, then 120 s, then 240 s between automatic attempts, and starts again from 60 s after a success', async () => {
    const clock = manualClock();
    const service = await emulator({ clock: clock.now });
    let password = 'wrong';
    const api = axios.create({ baseURL: service.url });
    attachTokenAuth(api, { credentials: () => ({ username: E2E_USER, password }), clock: clock.now });
    const attempt = async (): Promise<number> => {
      await api.get('/orders').catch(() => undefined);
      return service.counters.tokenCalls;
    };

    expect(await attempt()).toBe(1);
    for (const [calls, wait] of [
      [2, 1],
      [3, 2],
      [4, 4],
    ] as const) {
      clock.advance(wait * MINUTE - 1);
      expect(await attempt()).toBe(calls - 1);
      clock.advance(1);
      expect(await attempt()).toBe(calls);
    }
    clock.advance(8 * MINUTE);
    password = E2E_PASSWORD;
    expect(await attempt()).toBe(5);
    // A success resets the cooldown: the next rejection blocks for 60 s again.
    password = 'wrong again';
    await api.get('/orders');
    service.expireAccessTokens();
    service.revokeRefreshTokens();
    const before = service.counters.tokenCalls;
    await attempt();
    clock.advance(MINUTE);
    expect(await attempt()).toBe(before + 3);
    expect(service.counters.logins).toBe(1);
  });
});

describe('plain http', () => {
  const attach = (authBaseURL: string, allowInsecureHttp?: boolean) => () =>
    attachTokenAuth(axios.create({ baseURL: 'https://api.example.com' }), {
      credentials: { username: 'u', password: 'p' },
      authBaseURL,
      ...(allowInsecureHttp === undefined ? {} : { allowInsecureHttp }),
    });

  it('refuses a token service on plain http:// off loopback, saying how to opt in', () => {
    expect(attach('http://auth.example.com')).toThrow(TypeError);
    expect(attach('http://auth.example.com')).toThrow(
      /`authBaseURL` http:\/\/auth\.example\.com is plain http:\/\/.*pass `allowInsecureHttp: true`/,
    );
    expect(attach('http://10.1.2.3:8080')).toThrow(/plain http/);
  });

  it('allows loopback, https, and an explicit opt-in', () => {
    for (const url of [
      'http://127.0.0.1:8080',
      'http://localhost:3000',
      'http://[::1]:9000',
      'https://auth.example.com',
    ])
      expect(attach(url)).not.toThrow();
    expect(attach('http://auth.example.com', true)).not.toThrow();
  });
});
