// The account's record as the guards write it to a shared store and read it back (guards/guards.ts and its parts): what
// a holder writes after a rejected login and a spent budget, to the millisecond of a manual clock; a record another
// holder wrote, obeyed; and a record that any part cannot read, ignored whole, so that the guards start afresh.
import axios from 'axios';
import { attachTokenAuth, isTokenAuthError, MemoryTokenStore } from '../lib/index.js';
import type { AccountRecord, TokenAuthOptions } from '../lib/index.js';
import { closeEmulatorsAfterEach, E2E_PASSWORD, E2E_USER, emulator } from './helpers/emulator.js';
import { manualClock, undoAfterEach } from './helpers/flow.js';
import { failureOf } from './helpers/settled.js';

closeEmulatorsAfterEach();
const undo = undoAfterEach();

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

/** A holder of the account on `url` through `store`, on `clock`. */
function holder(url: string, store: MemoryTokenStore, options: Partial<TokenAuthOptions> = {}) {
  const api = axios.create({ baseURL: url });
  const auth = attachTokenAuth(api, {
    credentials: { username: E2E_USER, password: E2E_PASSWORD },
    store,
    tokenRetryDelayMs: 5,
    ...options,
  });
  undo.push(() => auth.eject());
  return { api, auth };
}

/** The record `store` keeps, with the parts this file reads typed as the guards write them. */
function recordOf(
  store: MemoryTokenStore,
): AccountRecord & { loginPause: { until: number }; refusedRefresh: string[] } {
  return store.getAccount() as AccountRecord & { loginPause: { until: number }; refusedRefresh: string[] };
}

describe("the account's record a holder writes", () => {
  it('after a rejected login: the pause, its end as the halt, the login spent, and the record lasting as long as the budget window', async () => {
    const clock = manualClock();
    const service = await emulator({ clock: clock.now });
    const store = new MemoryTokenStore();
    const { api } = holder(service.url, store, {
      clock: clock.now,
      credentials: { username: E2E_USER, password: 'wrong-4d1f' },
      loginCooldownMs: MINUTE,
      tokenBudget: { logins: 5, refreshes: 5, windowMs: HOUR },
    });
    const t0 = clock.now();

    await failureOf(api.get('/api/orders'));

    const { loginPause, ...rest } = store.getAccount()!;
    expect(rest).toStrictEqual({
      version: 1,
      refusedRefresh: [],
      cookieRefreshRefused: false,
      refusals: { uncured: [], general: false, uncuredRenewals: 0, until: 0 },
      spent: { login: [t0], refresh: [] },
      expiresAt: t0 + HOUR,
      haltsUntil: t0 + MINUTE,
    });
    expect(loginPause).toMatchObject({ until: t0 + MINUTE, rejections: 1, code: 'LOGIN_REJECTED', status: 401 });
    expect(Object.keys(loginPause!).sort()).toEqual(['by', 'code', 'message', 'rejections', 'status', 'until']);
  });

  it('a second rejection in a row doubles the pause, which then outlasts a shorter budget window', async () => {
    const clock = manualClock();
    const service = await emulator({ clock: clock.now });
    const store = new MemoryTokenStore();
    const { api } = holder(service.url, store, {
      clock: clock.now,
      credentials: { username: E2E_USER, password: 'wrong-4d1f' },
      loginCooldownMs: MINUTE,
      tokenBudget: { logins: 5, refreshes: 5, windowMs: 90_000 },
    });
    const t0 = clock.now();
    await failureOf(api.get('/api/orders'));
    clock.advance(MINUTE);
    await failureOf(api.get('/api/orders'));

    const record = store.getAccount()!;
    expect(record.loginPause).toMatchObject({ until: t0 + 3 * MINUTE, rejections: 2 });
    expect(record).toMatchObject({ spent: { login: [t0, t0 + MINUTE] }, expiresAt: t0 + 3 * MINUTE });
    expect(record.haltsUntil).toBe(t0 + 3 * MINUTE);
    expect(service.counters.rejected).toBe(2);
  });
  it('a rejection in a row doubles the pause up to 16 times the cooldown, no further', async () => {
    const clock = manualClock();
    const service = await emulator({ clock: clock.now });
    const store = new MemoryTokenStore();
    const { api } = holder(service.url, store, {
      clock: clock.now,
      credentials: { username: E2E_USER, password: 'wrong-4d1f' },
      loginCooldownMs: MINUTE,
      tokenBudget: false,
    });
    const pauses: number[] = [];
    for (let rejection = 1; rejection <= 6; rejection += 1) {
      const sent = clock.now();
      await failureOf(api.get('/api/orders'));
      const { until } = recordOf(store).loginPause;
      pauses.push((until - sent) / MINUTE);
      clock.advance(until - sent);
    }

    expect(pauses).toEqual([1, 2, 4, 8, 16, 16]);
    expect(service.counters.rejected).toBe(6);
  });

  it('after a refused refresh token: its fingerprint, kept a day; the last 8 of them at most', async () => {
    const clock = manualClock();
    const service = await emulator({ clock: clock.now });
    const store = new MemoryTokenStore();
    const { api } = holder(service.url, store, { clock: clock.now, tokenBudget: false });
    await api.get('/api/orders');
    const prints: string[][] = [];
    for (let refusal = 1; refusal <= 9; refusal += 1) {
      clock.advance(MINUTE);
      service.expireAccessTokens();
      service.revokeRefreshTokens();
      expect((await api.get('/api/orders')).status).toBe(200);
      prints.push(recordOf(store).refusedRefresh);
    }

    expect(prints.map((list) => list.length)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 8]);
    expect(new Set(prints[8]).size).toBe(8);
    // The first went when the ninth came; the others stay, in the order they were refused.
    expect(prints[8]).toEqual([...prints[7]!.slice(1), prints[8]![7]]);
    expect(store.getAccount()!.expiresAt).toBe(clock.now() + 24 * HOUR);
    expect(service.counters).toMatchObject({ logins: 10, refreshes: 0, rejected: 9 });
  });

  it('after a logout: when it was, kept 30 days', async () => {
    const clock = manualClock();
    const service = await emulator({ clock: clock.now });
    const store = new MemoryTokenStore();
    const { api, auth } = holder(service.url, store, { clock: clock.now, tokenBudget: false });
    await api.get('/api/orders');
    clock.advance(MINUTE);
    await auth.logout();

    const record = store.getAccount()!;
    expect(record.signedOut).toBe(clock.now());
    expect(record.expiresAt).toBe(clock.now() + 30 * 24 * HOUR);
  });
});

/** A record another holder wrote: its rejected login paused automatic logins for 5 more minutes. */
function pausedRecord(now: number): AccountRecord {
  const pause = {
    until: now + 5 * MINUTE,
    rejections: 1,
    code: 'LOGIN_REJECTED',
    message: 'Login rejected (HTTP 401).',
    status: 401,
    by: 'another-holder',
  };
  return {
    version: 1,
    loginPause: pause,
    refusals: {
      uncured: [['GET http://api.test/forbidden', now + MINUTE]],
      general: false,
      uncuredRenewals: 0,
      until: 0,
    },
    spent: { login: [now - 1_000], refresh: [now - 2_000] },
    cookieRefreshRefused: false,
    refusedRefresh: ['1x2y3z'],
    expiresAt: now + HOUR,
    haltsUntil: pause.until,
  };
}

describe('a record another holder wrote, read from the store', () => {
  it("is obeyed: an automatic login waits for that holder's pause, says so, and sends nothing", async () => {
    const clock = manualClock();
    const service = await emulator({ clock: clock.now });
    const store = new MemoryTokenStore();
    store.setAccount(pausedRecord(clock.now()));
    const { api } = holder(service.url, store, { clock: clock.now });

    const error = await failureOf(api.get('/api/orders'), isTokenAuthError);

    expect(error.code).toBe('LOGIN_REJECTED');
    expect(error.message).toContain('(300 s more, `loginCooldownMs`)');
    expect(error.message).toContain('which another holder of the shared store saw (this one sent nothing)');
    expect(service.counters).toMatchObject({ logins: 0, tokenCalls: 0 });
  });

  /** Drops the value instead of changing it. */
  const DROP = Symbol('drop');
  /** The record with the value at one path changed to one that is not of its part's states, or dropped. */
  const broken: Array<[string, string, unknown]> = [
    ['another version', 'version', 2],
    ['no expiry', 'expiresAt', DROP],
    ['an expiry that is no number', 'expiresAt', String(Date.now())],
    ['an expiry that is not finite', 'expiresAt', Infinity],
    ["the pause's end as text", 'loginPause.until', String(Date.now())],
    ["the pause's rejections missing", 'loginPause.rejections', DROP],
    ["the pause's code a number", 'loginPause.code', 401],
    ["the pause's message missing", 'loginPause.message', DROP],
    ["the pause's status as text", 'loginPause.status', '401'],
    ["the pause's holder a number", 'loginPause.by', 7],
    ['the pause a list', 'loginPause', [pausedRecord(0).loginPause]],
    ['the refusals missing', 'refusals', DROP],
    ['the uncured endpoints not a list', 'refusals.uncured', {}],
    ['an uncured endpoint without its end', 'refusals.uncured', [['GET http://api.test/forbidden']]],
    ['an uncured endpoint named by a number', 'refusals.uncured', [[7, Date.now()]]],
    ['an uncured endpoint that is not a pair', 'refusals.uncured', ['GET http://api.test/forbidden']],
    ['the endpoint refused last a number', 'refusals.refusedOn', 7],
    ['general refusals as text', 'refusals.general', 'no'],
    ['the uncured renewals missing', 'refusals.uncuredRenewals', DROP],
    ["the back-off's end as text", 'refusals.until', '0'],
    ['the spent logins as text', 'spent.login', ['1']],
    ['the spent token calls missing', 'spent.refresh', DROP],
    ['the spent calls a list', 'spent', []],
    ['a refused refresh token a number', 'refusedRefresh', [7]],
    ['the refused refresh tokens not a list', 'refusedRefresh', '1x2y3z'],
    ['the refused cookie as text', 'cookieRefreshRefused', 'false'],
    ['the logout as text', 'signedOut', 'yesterday'],
  ];

  /** `record`, with `path` (dotted) changed to `value`, or dropped. */
  function changed(record: AccountRecord, path: string, value: unknown): AccountRecord {
    const copy = structuredClone(record) as unknown as Record<string, Record<string, unknown>>;
    const [field, member] = path.split('.') as [string, string | undefined];
    const holder: Record<string, unknown> = member === undefined ? copy : copy[field]!;
    const key = member ?? field;
    if (value === DROP) delete holder[key];
    else holder[key] = value;
    return copy as unknown as AccountRecord;
  }

  it.each(broken)('is ignored whole with %s: the guards start afresh, and the login goes', async (_, path, value) => {
    const clock = manualClock();
    const service = await emulator({ clock: clock.now });
    const store = new MemoryTokenStore();
    store.setAccount(changed(pausedRecord(clock.now()), path, value));
    const { api } = holder(service.url, store, { clock: clock.now });

    expect((await api.get('/api/orders')).status).toBe(200);
    expect(service.counters).toMatchObject({ logins: 1, rejected: 0 });
  });
});

describe('a record read from the store and written back', () => {
  it("obeys a pause that has no status nor holder (written without them), and fails with the pause's code and message", async () => {
    const clock = manualClock();
    const service = await emulator({ clock: clock.now });
    const store = new MemoryTokenStore();
    const record = pausedRecord(clock.now()) as AccountRecord & { loginPause: Record<string, unknown> };
    delete record.loginPause['status'];
    delete record.loginPause['by'];
    store.setAccount(record);
    const { api } = holder(service.url, store, { clock: clock.now });

    const error = await failureOf(api.get('/api/orders'), isTokenAuthError);

    expect(error.code).toBe('LOGIN_REJECTED');
    expect(error.status).toBeUndefined();
    expect(error.message).toContain('Login rejected (HTTP 401).');
    expect(service.counters).toMatchObject({ logins: 0, tokenCalls: 0 });
  });

  it('keeps what still holds, to the millisecond: live uncured endpoints alone, the endpoint refused last, refused refresh tokens until their own end', async () => {
    const clock = manualClock();
    const service = await emulator({ clock: clock.now });
    const store = new MemoryTokenStore();
    // A budget window shorter than the refused refresh token's memory: the record's end is that memory's.
    const { api } = holder(service.url, store, { clock: clock.now, tokenBudget: { windowMs: MINUTE } });
    expect((await api.get('/api/orders')).status).toBe(200);
    clock.advance(2 * MINUTE);
    const now = clock.now();
    store.setAccount({
      ...pausedRecord(now),
      loginPause: null,
      haltsUntil: 0,
      refusals: {
        // Live, ended a millisecond ago, and ending this very millisecond: only the first still holds.
        uncured: [
          ['GET http://api.test/forbidden', now + MINUTE],
          ['GET http://api.test/gone', now - 1],
          ['GET http://api.test/ending', now],
        ],
        general: false,
        uncuredRenewals: 0,
        until: 0,
        refusedOn: 'GET http://api.test/forbidden',
      },
      spent: { login: [], refresh: [] },
      expiresAt: now + HOUR,
    });
    // The access token expires: the renewal, a refresh under the lock, reads the record and writes it back.
    service.expireAccessTokens();

    expect((await api.get('/api/orders')).status).toBe(200);
    expect(service.counters).toMatchObject({ logins: 1, refreshes: 1 });

    const written = recordOf(store) as unknown as AccountRecord & {
      refusals: Record<string, unknown>;
      refusedRefresh: string[];
    };
    expect(written.refusals).toStrictEqual({
      uncured: [['GET http://api.test/forbidden', now + MINUTE]],
      general: false,
      uncuredRenewals: 0,
      until: 0,
      refusedOn: 'GET http://api.test/forbidden',
    });
    expect(written.refusedRefresh).toEqual(['1x2y3z']);
    // The refused refresh token is remembered as long as the record it came in said: no longer, no shorter.
    expect(written.expiresAt).toBe(now + HOUR);
  });
});
