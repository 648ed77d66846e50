// Every rule of the renewal, one by one: each row of decide.ts' tables decides when it is the first that holds, and
// gives way to the rows above it. The behaviour these rules make is tested end to end elsewhere (rotation, faults,
// store-outage, renewal-policy…); here a change to one rule fails the test that names it.
import { decide, move, MOVES, RULES, TURNS_TRIED } from '../lib/account/renewal/decide.js';
import type {
  AloneFacts,
  LoginFacts,
  NeedFacts,
  PauseFacts,
  RefreshRefusedFacts,
  RefusalFacts,
  StartFacts,
  TurnFacts,
  TurnLostFacts,
  WordFacts,
} from '../lib/account/renewal/decide.js';

describe('a request that needs a pair', () => {
  const need = (facts: Partial<NeedFacts>): NeedFacts => ({ at: 'need', pair: 'none', signedOut: false, ...facts });

  it('carries a valid pair, even signed out elsewhere (the pair in use is a sign-in)', () => {
    expect(decide(need({ pair: 'valid' }))).toBe('use');
    expect(decide(need({ pair: 'valid', signedOut: true }))).toBe('use');
  });

  it('fails as signed out rather than renew any other pair', () => {
    for (const pair of ['none', 'expired', 'refused'] as const)
      expect(decide(need({ pair, signedOut: true }))).toBe('signed-out');
  });

  it('logs in without a pair, renews an expired one, and renews a refused one for the refusal', () => {
    expect(decide(need({ pair: 'none' }))).toBe('renew-no-token');
    expect(decide(need({ pair: 'expired' }))).toBe('renew-expired');
    expect(decide(need({ pair: 'refused' }))).toBe('renew-rejected');
  });
});

describe('a refused request', () => {
  const refusal = (facts: Partial<RefusalFacts>): RefusalFacts => ({
    at: 'refusal',
    loggedOut: false,
    newer: false,
    mayRenew: true,
    failedSince: false,
    ...facts,
  });

  it('renews when nothing else holds', () => {
    expect(decide(refusal({}))).toBe('renew');
  });

  it('goes to the caller after a logout, before anything else', () => {
    expect(decide(refusal({ loggedOut: true, newer: true, mayRenew: false, failedSince: true }))).toBe('logged-out');
  });

  it('goes again with a newer pair, even where renewing would cure nothing', () => {
    expect(decide(refusal({ newer: true, mayRenew: false, failedSince: true }))).toBe('newer');
  });

  it('costs no renewal where renewing cures nothing, even after a failed renewal', () => {
    expect(decide(refusal({ mayRenew: false, failedSince: true }))).toBe('no-cure');
  });

  it('shares the failure of a renewal that failed since it left', () => {
    expect(decide(refusal({ failedSince: true }))).toBe('failed');
  });
});

describe('a renewal that starts', () => {
  const start = (facts: Partial<StartFacts>): StartFacts => ({
    at: 'start',
    auto: true,
    onlyLogin: true,
    paused: true,
    consulted: false,
    stored: 'unread',
    ...facts,
  });

  it('takes its turn unless it is automatic, could only log in, and logins are paused', () => {
    expect(decide(start({ auto: false }))).toBe('take-turn');
    expect(decide(start({ onlyLogin: false }))).toBe('take-turn');
    expect(decide(start({ paused: false }))).toBe('take-turn');
    expect(decide(start({ paused: false, consulted: true, stored: 'accepted' }))).toBe('take-turn');
  });

  it('under a known pause, reads the record first, then the stored pair', () => {
    expect(decide(start({}))).toBe('consult');
    expect(decide(start({ consulted: true }))).toBe('peek');
  });

  it('takes a pair another holder stored, else fails with the pause, with no turn at the lock', () => {
    expect(decide(start({ consulted: true, stored: 'accepted' }))).toBe('take-stored');
    expect(decide(start({ consulted: true, stored: 'none' }))).toBe('fail-paused');
  });
});

describe("a try at the store's word", () => {
  const word = (facts: Partial<WordFacts>): WordFacts => ({
    at: 'word',
    got: 'missed',
    policy: 'wait',
    waitOver: false,
    aloneThisOutage: false,
    ...facts,
  });

  it('renews in the turn it got, or takes the pair that arrived, whatever the outage says', () => {
    expect(decide(word({ got: 'turn', waitOver: true, policy: 'go-alone', aloneThisOutage: true }))).toBe('use-turn');
    expect(decide(word({ got: 'arrived', waitOver: true, policy: 'go-alone' }))).toBe('take-arrived');
  });

  it('tries at once again when the pair that ended its wait went again', () => {
    expect(decide(word({ got: 'gone', waitOver: true, policy: 'go-alone' }))).toBe('try-again');
  });

  it('pauses and asks again while the wait lasts', () => {
    expect(decide(word({}))).toBe('pause');
    expect(decide(word({ policy: 'go-alone' }))).toBe('pause');
  });

  it("under 'wait', fails once the wait is over, having sent nothing", () => {
    expect(decide(word({ waitOver: true }))).toBe('fail-unavailable');
    // Only 'go-alone' goes alone, however often the holder did.
    expect(decide(word({ aloneThisOutage: true }))).toBe('pause');
  });

  it("under 'go-alone', goes alone once the wait is over, or at once after going alone in this outage", () => {
    expect(decide(word({ policy: 'go-alone', waitOver: true }))).toBe('go-alone');
    expect(decide(word({ policy: 'go-alone', aloneThisOutage: true }))).toBe('go-alone');
  });
});

describe('a pause between tries at a store that is down', () => {
  const pause = (facts: Partial<PauseFacts>): PauseFacts => ({
    at: 'pause',
    loggedOut: false,
    arrived: false,
    ...facts,
  });

  it('ends the renewal after a logout, before taking a pair that arrived', () => {
    expect(decide(pause({ loggedOut: true, arrived: true }))).toBe('logged-out');
  });

  it('takes a pair that arrived, else tries again', () => {
    expect(decide(pause({ arrived: true }))).toBe('take-arrived');
    expect(decide(pause({}))).toBe('try-again');
  });
});

describe('a renewal in its turn', () => {
  const turn = (facts: Partial<TurnFacts>): TurnFacts => ({
    at: 'turn',
    mode: 'auto',
    silentUnderLock: false,
    signedOut: false,
    storedAccepted: false,
    lockMissed: false,
    storeLost: false,
    refusedBefore: false,
    canRefresh: true,
    ...facts,
  });
  const everything = {
    signedOut: true,
    storedAccepted: true,
    lockMissed: true,
    storeLost: true,
    refusedBefore: true,
    canRefresh: false,
  };

  it('refreshes when nothing else holds', () => {
    expect(decide(turn({}))).toBe('refresh');
  });

  it('generates nothing on a store that went silent under its lock, before every other rule', () => {
    expect(decide(turn({ silentUnderLock: true, ...everything }))).toBe('turn-lost');
  });

  it('fails as signed out, automatic renewals only', () => {
    expect(decide(turn({ ...everything }))).toBe('signed-out');
    expect(decide(turn({ mode: 'refresh', signedOut: true }))).toBe('refresh');
    expect(decide(turn({ mode: 'login', signedOut: true }))).toBe('log-in');
  });

  it("takes another holder's pair, automatic renewals only", () => {
    expect(decide(turn({ ...everything, signedOut: false }))).toBe('take-stored');
    expect(decide(turn({ mode: 'refresh', storedAccepted: true }))).toBe('refresh');
  });

  it("goes alone with the lock missed, but for the user's login", () => {
    const missed = { lockMissed: true, storeLost: true, refusedBefore: true, canRefresh: false };
    expect(decide(turn(missed))).toBe('go-alone');
    expect(decide(turn({ ...missed, mode: 'refresh' }))).toBe('go-alone');
    expect(decide(turn({ ...missed, mode: 'login' }))).toBe('log-in');
  });

  it("logs in when the store lost the pair, never sending a refresh token someone may have spent; not for the user's login", () => {
    expect(decide(turn({ storeLost: true, refusedBefore: true }))).toBe('log-in-store-lost');
    expect(decide(turn({ mode: 'refresh', storeLost: true }))).toBe('log-in-store-lost');
  });

  it('drops a pair whose refresh token was refused before and logs in, automatic renewals only', () => {
    expect(decide(turn({ refusedBefore: true, canRefresh: false }))).toBe('drop-and-log-in');
    expect(decide(turn({ mode: 'refresh', refusedBefore: true }))).toBe('refresh');
  });

  it("logs in for the user's login, or with nothing to refresh with", () => {
    expect(decide(turn({ mode: 'login' }))).toBe('log-in');
    expect(decide(turn({ canRefresh: false }))).toBe('log-in');
    expect(decide(turn({ mode: 'refresh', canRefresh: false }))).toBe('log-in');
  });
});

describe('a renewal without the lock', () => {
  it('refreshes with a pair of its own alone, else logs in', () => {
    expect(decide<AloneFacts>({ at: 'alone', ownRefreshable: true })).toBe('refresh-own');
    expect(decide<AloneFacts>({ at: 'alone', ownRefreshable: false })).toBe('log-in');
  });
});

describe('a refused refresh token', () => {
  const refused = (facts: Partial<RefreshRefusedFacts>): RefreshRefusedFacts => ({
    at: 'refresh-refused',
    alone: false,
    newerAccepted: false,
    leaseLost: false,
    ...facts,
  });

  it("alone, logs in: nothing of the store's is taken", () => {
    expect(decide(refused({ alone: true, newerAccepted: true }))).toBe('log-in');
  });

  it('takes the newer pair another holder stored, else drops the dead pair and logs in', () => {
    expect(decide(refused({ newerAccepted: true }))).toBe('take-stored');
    expect(decide(refused({}))).toBe('drop-and-log-in');
  });

  it("under a lease that may be another's, drops nothing and takes the turn again, unless the newer pair is there", () => {
    expect(decide(refused({ leaseLost: true }))).toBe('turn-lost');
    expect(decide(refused({ leaseLost: true, newerAccepted: true }))).toBe('take-stored');
    expect(decide(refused({ alone: true, leaseLost: true }))).toBe('log-in');
  });
});

describe('a login', () => {
  it('fails with the pause, else calls', () => {
    expect(decide<LoginFacts>({ at: 'login', paused: true })).toBe('fail-paused');
    expect(decide<LoginFacts>({ at: 'login', paused: false })).toBe('call');
  });
});

describe('a lost turn', () => {
  const lost = (facts: Partial<TurnLostFacts>): TurnLostFacts => ({
    at: 'turn-lost',
    turns: 1,
    lapsed: false,
    ...facts,
  });

  it(`takes a turn again, ${TURNS_TRIED} turns in all`, () => {
    expect(TURNS_TRIED).toBe(3);
    expect(decide(lost({ turns: 1, lapsed: true }))).toBe('take-turn-again');
    expect(decide(lost({ turns: 2 }))).toBe('take-turn-again');
  });

  it('then fails: the lease lapsed too often, or the store stopped answering', () => {
    expect(decide(lost({ turns: 3, lapsed: true }))).toBe('fail-lapsed');
    expect(decide(lost({ turns: 3 }))).toBe('fail-unavailable');
  });
});

describe('every moment', () => {
  it('ends its table with a row that always holds, so that every fact decides', () => {
    for (const rules of Object.values(RULES)) expect((rules.at(-1)![0] as () => boolean)()).toBe(true);
  });
});

describe('where the renewals stand', () => {
  it('moves as the table says', () => {
    expect(move('idle', 'renew')).toBe('renewing');
    expect(move('failed', 'renew')).toBe('renewing');
    // A renewal under way is joined, not started again.
    expect(move('renewing', 'renew')).toBe('renewing');
    expect(move('renewing', 'succeed')).toBe('idle');
    expect(move('renewing', 'fail')).toBe('failed');
  });

  it('refuses a move the table does not have: a renewal ends only while under way', () => {
    for (const from of ['idle', 'failed'] as const)
      for (const event of ['succeed', 'fail'] as const) {
        expect(MOVES[from][event]).toBeUndefined();
        expect(() => move(from, event)).toThrow(`no renewal moves from ${from} on ${event}`);
      }
  });
});
