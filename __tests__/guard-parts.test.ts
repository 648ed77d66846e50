// The guards' parts one at a time (lib/account/guards/), on a manual clock: what each remembers, for how long, how it
// is written into the account's record and taken back from another holder's. The suites with real stores and fleets
// exercise these through whole holders; here each rule has a test of its own, so that a change to one line fails one
// test that names it (npm run test:mutation reaches these files with the quick suites alone).
import { TokenAuthError } from '../lib/contract/errors.js';
import { Budget } from '../lib/account/guards/budget.js';
import { CookieRefusal } from '../lib/account/guards/cookie-refusal.js';
import { Guards } from '../lib/account/guards/guards.js';
import type { GuardedCall } from '../lib/account/guards/gate.js';
import { LoginPause } from '../lib/account/guards/login-pause.js';
import type { LoginPauseState } from '../lib/account/guards/login-pause.js';
import { INVALID, isNumber } from '../lib/account/guards/record-part.js';
import { RefusedRefresh } from '../lib/account/guards/refused-refresh.js';
import { Refusals } from '../lib/account/guards/refusals.js';
import { manualClock } from './helpers/flow.js';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const LIFETIME = 45 * 60_000;

const AUTO_LOGIN: GuardedCall = { operation: 'login', mode: 'auto', typed: false };
const refresh = (refreshToken?: string): GuardedCall => ({
  operation: 'refresh',
  mode: 'auto',
  typed: false,
  refreshToken,
});
const rejected = () => new TokenAuthError('REFRESH_REJECTED', 'Refresh token rejected (HTTP 401).', { status: 401 });
const loginRejected = () => new TokenAuthError('LOGIN_REJECTED', 'Login rejected (HTTP 401).', { status: 401 });

describe('the refusals a renewal did not cure', () => {
  it('remember an endpoint for a token lifetime, to the millisecond', () => {
    const clock = manualClock();
    const refusals = new Refusals(LIFETIME, clock.now);

    refusals.uncured(1, 'GET /a');
    clock.advance(LIFETIME - 1);
    expect(refusals.mayRenewFor('GET /a')).toBe(false);
    expect(refusals.mayRenewFor('GET /b')).toBe(true);
    clock.advance(1);
    expect(refusals.mayRenewFor('GET /a')).toBe(true);
    // The record keeps what still holds: an endpoint ending this millisecond is gone.
    expect(refusals.save().uncured).toEqual([]);
  });

  it('remember many endpoints at once, the last 256 of them', () => {
    const clock = manualClock();
    const refusals = new Refusals(LIFETIME, clock.now);
    // One endpoint, then a renewal that cures it is another story: keep the back-off out, one endpoint per pair.
    const uncure = (i: number) => {
      refusals.uncured(i, `GET /e${i}`);
      refusals.cured(i);
    };

    for (let i = 0; i < 256; i += 1) uncure(i);
    expect(refusals.save().uncured).toHaveLength(256);
    expect(refusals.mayRenewFor('GET /e0')).toBe(false);

    uncure(256);
    expect(refusals.save().uncured).toHaveLength(256);
    expect(refusals.mayRenewFor('GET /e0')).toBe(true);
    expect(refusals.mayRenewFor('GET /e1')).toBe(false);
    expect(refusals.mayRenewFor('GET /e256')).toBe(false);
  });

  it('turn general when a second endpoint refuses a renewed pair, and hold renewals back 1 s, then 2 s for the next', () => {
    const clock = manualClock();
    const refusals = new Refusals(LIFETIME, clock.now);

    refusals.uncured(1, 'GET /a');
    expect(refusals.save()).toMatchObject({ general: false, refusedOn: 'GET /a' });
    expect(refusals.mayRenewFor('GET /c')).toBe(true);

    refusals.uncured(2, 'GET /b');
    expect(refusals.save()).toMatchObject({ general: true, uncuredRenewals: 1, until: clock.now() + 1_000 });
    expect(refusals.mayRenewFor('GET /c')).toBe(false);
    clock.advance(1_000);
    expect(refusals.mayRenewFor('GET /c')).toBe(true);

    // The next renewed pair refused again, on the first endpoint: the wait doubles.
    refusals.uncured(3, 'GET /a');
    expect(refusals.save()).toMatchObject({ uncuredRenewals: 2, until: clock.now() + 2_000 });
    clock.advance(1_999);
    expect(refusals.mayRenewFor('GET /c')).toBe(false);
  });

  it('count a renewed pair once, however many endpoints refuse it', () => {
    const clock = manualClock();
    const refusals = new Refusals(LIFETIME, clock.now);
    refusals.uncured(1, 'GET /a');
    refusals.uncured(2, 'GET /b');

    refusals.uncured(2, 'GET /c');

    expect(refusals.save()).toMatchObject({ uncuredRenewals: 1, until: clock.now() + 1_000 });
  });

  it('end with a cure: a replay accepted with the pair refused last, or a later one, and not with an earlier', () => {
    const clock = manualClock();
    const refusals = new Refusals(LIFETIME, clock.now);
    expect(refusals.cured(1)).toBe(false);
    refusals.uncured(4, 'GET /a');
    refusals.uncured(5, 'GET /b');

    expect(refusals.cured(4)).toBe(false);
    expect(refusals.mayRenewFor('GET /c')).toBe(false);
    expect(refusals.cured(5)).toBe(true);
    expect(refusals.mayRenewFor('GET /c')).toBe(true);
    expect(refusals.save()).toMatchObject({ general: false, uncuredRenewals: 0 });
    expect(refusals.save()).not.toHaveProperty('refusedOn');

    refusals.uncured(6, 'GET /a');
    refusals.uncured(7, 'GET /b');
    expect(refusals.cured(8)).toBe(true);
    expect(refusals.mayRenewFor('GET /c')).toBe(true);
    // Nothing remembered any more: the next accepted replay changes nothing.
    expect(refusals.cured(9)).toBe(false);
  });

  it('end with a cure of the one endpoint refused so far: refused then on another, they are not general', () => {
    const refusals = new Refusals(LIFETIME, manualClock().now);
    refusals.uncured(1, 'GET /a');

    expect(refusals.cured(1)).toBe(true);
    expect(refusals.save()).not.toHaveProperty('refusedOn');
    refusals.uncured(2, 'GET /b');
    expect(refusals.save()).toMatchObject({ general: false, refusedOn: 'GET /b' });
  });

  it('hold renewals back a token lifetime at most, however many cured nothing', () => {
    const clock = manualClock();
    const refusals = new Refusals(LIFETIME, clock.now);

    for (let generation = 1; generation <= 20; generation += 1)
      refusals.uncured(generation, generation % 2 ? 'GET /a' : 'GET /b');

    expect(refusals.save()).toMatchObject({ general: true, uncuredRenewals: 19, until: clock.now() + LIFETIME });
  });

  it('last in the record until the latest of their ends: of the endpoints and of the back-off', () => {
    const clock = manualClock();
    const refusals = new Refusals(LIFETIME, clock.now);
    refusals.uncured(1, 'GET /a');
    clock.advance(60_000);
    refusals.uncured(2, 'GET /b');

    // The back-off ends in 1 s, /a a minute before /b.
    expect(refusals.save()).toMatchObject({ general: true, until: clock.now() + 1_000 });
    expect(refusals.until()).toBe(clock.now() + LIFETIME);
  });

  it('read from a record, keep its last 256 endpoints', () => {
    const clock = manualClock();
    const refusals = new Refusals(LIFETIME, clock.now);
    const until = clock.now() + LIFETIME;
    const uncured = Array.from({ length: 300 }, (_, i): [string, number] => [`GET /e${i}`, until]);

    refusals.load({ uncured, general: false, uncuredRenewals: 0, until: 0 });

    expect(refusals.save().uncured).toEqual(uncured.slice(-256));
    expect(refusals.mayRenewFor('GET /e43')).toBe(true);
    expect(refusals.mayRenewFor('GET /e44')).toBe(false);
  });

  it('go to another holder through the record: its refused endpoint and its back-off', () => {
    const clock = manualClock();
    const first = new Refusals(LIFETIME, clock.now);
    const other = new Refusals(LIFETIME, clock.now);
    first.uncured(1, 'GET /a');

    const memory = other.parse(JSON.parse(JSON.stringify(first.save())));
    expect(memory).not.toBe(INVALID);
    other.load(memory as Exclude<typeof memory, typeof INVALID>);
    // The other holder's pair refused on a second endpoint: refusals are general for it too.
    other.uncured(1, 'GET /b');

    expect(other.save()).toMatchObject({ general: true, uncuredRenewals: 1 });
    expect(other.mayRenewFor('GET /c')).toBe(false);
    expect(other.mayRenewFor('GET /a')).toBe(false);

    // Its back-off, general now, holds for a third holder at once, until its end.
    const third = new Refusals(LIFETIME, clock.now);
    third.load(other.save());
    expect(third.mayRenewFor('GET /c')).toBe(false);
    clock.advance(1_000);
    expect(third.mayRenewFor('GET /c')).toBe(true);
  });

  it('remember the pairs of refused streams for 64 endpoints, the oldest forgotten first', () => {
    const refusals = new Refusals(LIFETIME, manualClock().now);
    for (let i = 0; i < 64; i += 1) refusals.streamRenewed(`GET /s${i}`, i);
    expect(refusals.streamRenewedWith('GET /s0')).toBe(0);

    refusals.streamRenewed('GET /s0', 100);
    refusals.streamRenewed('GET /s64', 64);

    // s0 was renewed again, so s1 was the oldest.
    expect(refusals.streamRenewedWith('GET /s1')).toBeUndefined();
    expect(refusals.streamRenewedWith('GET /s0')).toBe(100);
    expect(refusals.streamRenewedWith('GET /s2')).toBe(2);
    expect(refusals.streamRenewedWith('GET /s64')).toBe(64);
  });
});

describe('the refused refresh tokens', () => {
  it('are remembered by fingerprint, the last 8 distinct ones: a token refused again takes no second place', () => {
    const refused = new RefusedRefresh(manualClock().now);
    refused.learn(refresh('rt-b'), rejected());
    for (let i = 0; i < 8; i += 1) refused.learn(refresh('rt-a'), rejected());
    expect(refused.has('rt-b')).toBe(true);

    for (let i = 0; i < 7; i += 1) refused.learn(refresh(`rt-${i}`), rejected());
    expect(refused.has('rt-b')).toBe(false);
    expect(refused.has('rt-a')).toBe(true);
    expect(refused.save()).toHaveLength(8);
  });

  it('keep the record a day after the last, and nothing when there is none', () => {
    const clock = manualClock();
    const refused = new RefusedRefresh(clock.now);
    expect(refused.until()).toBe(0);

    refused.learn(refresh('rt-a'), rejected());

    expect(refused.until()).toBe(clock.now() + DAY);
  });

  it("taken from another holder's record, last as long as that record says", () => {
    const clock = manualClock();
    const other = new RefusedRefresh(clock.now);
    other.learn(refresh('rt-a'), rejected());
    const expiresAt = clock.now() + 5 * HOUR;

    const refused = new RefusedRefresh(clock.now);
    refused.load(other.save(), { expiresAt });

    expect(refused.has('rt-a')).toBe(true);
    expect(refused.until()).toBe(expiresAt);
  });
});

describe("the cookie's refused refresh", () => {
  it('is a refresh from the cookie refused by the token service, and nothing else', () => {
    const cookie = new CookieRefusal(manualClock().now);

    cookie.learn(AUTO_LOGIN, loginRejected());
    expect(cookie.active).toBe(false);
    cookie.learn(refresh(), new TokenAuthError('TOKEN_SERVICE_UNAVAILABLE', 'The token service did not answer.'));
    expect(cookie.active).toBe(false);
    cookie.learn(refresh('rt-in-the-store'), rejected());
    expect(cookie.active).toBe(false);

    cookie.learn(refresh(), rejected());
    expect(cookie.active).toBe(true);
    cookie.learn(AUTO_LOGIN);
    expect(cookie.active).toBe(false);
  });

  it("taken from another holder's record, holds, and lasts as long as that record says", () => {
    const clock = manualClock();
    const cookie = new CookieRefusal(clock.now);
    const expiresAt = clock.now() + 3 * HOUR;

    cookie.load(true, { expiresAt });

    expect(cookie.active).toBe(true);
    expect(cookie.until()).toBe(expiresAt);
  });
});

describe('the login pause', () => {
  const holderPause = () => {
    const clock = manualClock();
    const pause = new LoginPause(60_000, clock.now, 'holder-1');
    const error = loginRejected();
    pause.learn(AUTO_LOGIN, error);
    return { clock, pause, error };
  };

  it("written to the store and read back, is this holder's own: its rejection, the same error, is the cause", () => {
    const { pause, error } = holderPause();

    pause.load(JSON.parse(JSON.stringify(pause.save())) as LoginPauseState);

    const refusal = pause.refuse(AUTO_LOGIN)!;
    expect(refusal.cause).toBe(error);
    expect(refusal.message).not.toContain('another holder');
  });

  it("changed in the store by another holder (its end, its count, or whose it is), is that holder's", () => {
    for (const change of [{ until: 30_000 }, { rejections: 2 }, { by: 'holder-2' }] satisfies Array<
      Partial<LoginPauseState>
    >) {
      const { clock, pause, error } = holderPause();
      const saved = pause.save()!;
      const theirs: LoginPauseState = {
        ...saved,
        ...change,
        ...(change.until === undefined ? {} : { until: clock.now() + change.until }),
      };

      pause.load(theirs);

      const refusal = pause.refuse(AUTO_LOGIN)!;
      expect(refusal.cause).not.toBe(error);
      expect(pause.save()).toEqual(theirs);
    }
  });

  it('holds back logins alone: a refresh, and the sign-in a person types, go', () => {
    const { pause } = holderPause();

    expect(pause.refuse(AUTO_LOGIN)?.code).toBe('LOGIN_REJECTED');
    expect(pause.refuse(refresh('rt-a'))).toBeUndefined();
    expect(pause.refuse({ operation: 'login', mode: 'login', typed: true })).toBeUndefined();
  });

  it('reads a pause written without a status or a holder, and refuses one of another shape', () => {
    const { pause } = holderPause();
    const bare: Partial<LoginPauseState> = { ...pause.save()! };
    delete bare.status;
    delete bare.by;

    expect(pause.parse(bare)).toEqual(bare);
    expect(pause.parse({ ...bare, status: '401' })).toBe(INVALID);
    expect(pause.parse({ ...bare, by: 7 })).toBe(INVALID);
    expect(pause.parse({ ...bare, until: Number.POSITIVE_INFINITY })).toBe(INVALID);
    expect(pause.parse({ ...bare, until: String(bare.until) })).toBe(INVALID);
  });
});

describe('the guards, one record', () => {
  const options = {
    clock: manualClock().now,
    accessTokenLifetimeMs: LIFETIME,
    loginCooldownMs: 60_000,
    tokenBudget: false as const,
  };

  it('take a record of the version they write whose every part they can read, and no other', () => {
    const guards = new Guards(options, { shared: true });
    guards.learn(refresh('rt-a'), rejected());
    const record = guards.record();

    const other = new Guards(options, { shared: true });
    expect(other.restore({ ...record, version: 2 })).toBe(false);
    expect(other.restore({ ...record, refusedRefresh: 'rt-a' })).toBe(false);
    expect(other.restore({ ...record, expiresAt: Number.POSITIVE_INFINITY })).toBe(false);
    expect(other.refusedBefore('rt-a')).toBe(false);
    expect(other.restore(JSON.parse(JSON.stringify(record)))).toBe(true);
    expect(other.refusedBefore('rt-a')).toBe(true);
  });

  it('forget the refusals of whoever signed in before, when a person signs in', () => {
    const guards = new Guards(options, { shared: false });
    guards.uncured(1, 'GET /a');
    expect(guards.mayRenewFor('GET /a')).toBe(false);

    guards.forgetRefusals();

    expect(guards.mayRenewFor('GET /a')).toBe(true);
  });
});

describe('the budget', () => {
  it('counts a call for its window, to the millisecond: a login spent a window ago is spent no more', () => {
    const clock = manualClock();
    const budget = new Budget({ logins: 1, refreshes: 1, windowMs: HOUR }, clock.now, false);
    budget.spend(AUTO_LOGIN);
    budget.spend(refresh('rt-a'));

    clock.advance(HOUR - 1);
    expect(budget.refuse(AUTO_LOGIN)?.code).toBe('TOKEN_BUDGET_EXCEEDED');
    expect(budget.refuse(refresh('rt-b'))?.code).toBe('TOKEN_BUDGET_EXCEEDED');
    clock.advance(1);
    expect(budget.refuse(AUTO_LOGIN)).toBeUndefined();
    expect(budget.refuse(refresh('rt-b'))).toBeUndefined();
  });
});

describe("a record's numbers", () => {
  it('are finite numbers: not a string, not NaN nor an infinity', () => {
    expect([1, 0, -1, 1.5].map(isNumber)).toEqual([true, true, true, true]);
    expect(['1', Number.NaN, Number.POSITIVE_INFINITY, null, undefined].map(isNumber)).toEqual([
      false,
      false,
      false,
      false,
      false,
    ]);
  });
});
