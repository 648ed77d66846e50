// Many accounts on one axios instance: a request names its account (the config's `account`, or the `accountOf` option),
// every account is its own client (its own pair, single renewal, guards and budget), a token is never sent for
// another account, `auth.account(name)` acts on one account, `maxAccounts` bounds what is held, and bad input fails
// with nothing sent. Over real HTTP, on the emulator with one user per account: its data answers say whose token a
// request carried.
import { AsyncLocalStorage } from 'node:async_hooks';
import axios from 'axios';
import type { AxiosInstance, AxiosResponse } from 'axios';
import fc from 'fast-check';
import { attachTokenAuth, isTokenAuthError, MemoryTokenStore } from '../lib/index.js';
import type { TokenAuth, TokenAuthEvents, TokenAuthOptions, TokenStore } from '../lib/index.js';
import type { TokenServiceEmulator } from '../lib/emulator/index.js';
import { closeEmulatorsAfterEach, emulator } from './helpers/emulator.js';
import { until } from './helpers/flow.js';
import { failureOf } from './helpers/settled.js';

closeEmulatorsAfterEach();

/** One user per account; the default account is `ops`. */
const USERS = { ops: 'ops-password', alice: 'alice-pw-7f3c', bob: 'bob-pw-19ad', 'carol@example.com': 'carol-pw-2b8e' };
type User = keyof typeof USERS;

interface Rig {
  service: TokenServiceEmulator;
  api: AxiosInstance;
  auth: TokenAuth;
  events: Array<{ event: keyof TokenAuthEvents; account: string | undefined }>;
}

async function rig(options: Partial<TokenAuthOptions> = {}, service?: TokenServiceEmulator): Promise<Rig> {
  const on = service ?? (await emulator({ users: USERS }));
  const api = axios.create({ baseURL: on.url });
  const auth = attachTokenAuth(api, {
    credentials: (account) => {
      const user = (account ?? 'ops') as User;
      return USERS[user] === undefined ? undefined : { username: user, password: USERS[user] };
    },
    tokenRetryDelayMs: 5,
    ...options,
  });
  const events: Rig['events'] = [];
  for (const event of ['login', 'refresh', 'load', 'failure'] as const)
    auth.on(event, (payload) => events.push({ event, account: payload.account }));
  return { service: on, api, auth, events };
}

/** Whose token the request carried, as the emulator saw it. */
const userOf = (response: AxiosResponse) => (response.data as { user?: string }).user;
const codeOf = (error: unknown) => (isTokenAuthError(error) ? error.code : error);
const count = (events: Rig['events'], event: keyof TokenAuthEvents, account?: string) =>
  events.filter((entry) => entry.event === event && entry.account === account).length;

describe('every account is its own client', () => {
  it('a request carries its own account’s token: one login per account, the default one’s without a name', async () => {
    const { service, api, events } = await rig();

    const requests = Array.from({ length: 30 }, (_, index) => {
      const account = [undefined, 'alice', 'bob'][index % 3];
      return api.get(`/orders/${index}`, { account }).then((response) => [account ?? 'ops', userOf(response)]);
    });
    const carried = await Promise.all(requests);

    expect(carried.filter(([account, user]) => account !== user)).toEqual([]);
    expect(service.counters).toMatchObject({ logins: 3, tokenCalls: 3, dataCalls: 30 });
    expect([count(events, 'login'), count(events, 'login', 'alice'), count(events, 'login', 'bob')]).toEqual([1, 1, 1]);
  });

  it('a 401 of one account renews that account alone, and each expiry costs each account one token call', async () => {
    const { service, api, events } = await rig();
    await Promise.all(['alice', 'bob'].map((account) => api.get('/orders', { account })));
    service.expireAccessTokens();

    const burst = await Promise.all(Array.from({ length: 10 }, () => api.get('/orders', { account: 'alice' })));
    expect(burst.map(userOf)).toEqual(Array(10).fill('alice'));
    expect([count(events, 'refresh', 'alice'), count(events, 'refresh', 'bob')]).toEqual([1, 0]);

    expect(userOf(await api.get('/orders', { account: 'bob' }))).toBe('bob');
    expect([count(events, 'refresh', 'alice'), count(events, 'refresh', 'bob')]).toEqual([1, 1]);
    expect(service.counters).toMatchObject({ logins: 2, refreshes: 2, unauthorized: 11 });
  });

  it('one account’s hung login delays no other account', async () => {
    const { service, api } = await rig({ tokenTimeoutMs: 5_000 });
    service.inject('login', 'hang');
    const hung = api.get('/orders', { account: 'alice' }).catch(codeOf);
    await until(() => service.calls.some((call) => call.route === 'login'));

    const others = await Promise.all([api.get('/orders', { account: 'bob' }), api.get('/orders')]);

    expect(others.map(userOf)).toEqual(['bob', 'ops']);
    expect(await hung).toBe('TOKEN_SERVICE_UNAVAILABLE');
  });

  it('tokenBudget, the login pause and the refusal memory are each account’s own', async () => {
    const { service, api, auth } = await rig({
      tokenBudget: { logins: 1 },
      credentials: (account) =>
        account === 'bob' ? { username: 'bob', password: 'not-bob’s' } : { username: 'alice', password: USERS.alice },
    });

    expect(codeOf(await failureOf(api.get('/orders', { account: 'bob' })))).toBe('LOGIN_REJECTED');
    // Bob's pause and spent login are his: Alice logs in, once, and so does the default account.
    expect(userOf(await api.get('/orders', { account: 'alice' }))).toBe('alice');
    expect(userOf(await api.get('/orders'))).toBe('alice');
    expect(((await failureOf(api.get('/orders', { account: 'bob' }))) as Error).message).toMatch(
      /^Automatic logins are paused/,
    );

    expect(auth.account('bob').stats()).toMatchObject({ failures: 1, budget: { login: 0 } });
    expect(auth.account('alice').stats()).toMatchObject({ logins: 1, failures: 0, budget: { login: 0 } });
    expect(auth.stats()).toMatchObject({ logins: 1, failures: 0, budget: { login: 0 } });
    expect(service.counters).toMatchObject({ logins: 2, rejected: 1 });
  });
});

describe('auth.account(name)', () => {
  it('acts on that account alone; the top-level members act on the default account', async () => {
    const { service, api, auth, events } = await rig();
    const alice = auth.account('alice');

    await alice.login();
    expect(await alice.accessToken()).toBe((await alice.getTokens())!.access);
    expect(await auth.getTokens()).toBeNull();
    expect(alice.getState()).toEqual({ status: 'signed-in' });
    expect(auth.getState()).toEqual({ status: 'signed-out' });
    await auth.login();
    await alice.logout();

    expect(codeOf(await failureOf(api.get('/orders', { account: 'alice' })))).toBe('LOGGED_OUT');
    expect(userOf(await api.get('/orders'))).toBe('ops');
    expect(await auth.getTokens()).not.toBeNull();
    expect(service.counters.logins).toBe(2);
    expect(events.filter(({ event }) => event === 'login')).toEqual([
      { event: 'login', account: 'alice' },
      { event: 'login', account: undefined },
    ]);
  });

  it('refuses a name that is no account’s, and a store that keeps one account', async () => {
    const { auth } = await rig();
    const single: TokenStore = { get: () => null, set: () => undefined, clear: () => undefined };
    const { auth: kept } = await rig({ store: single });

    expect(() => auth.account('')).toThrow('auth.account(name): `name` must not be empty');
    expect(() => auth.account('x'.repeat(257))).toThrow('`name` must be at most 256 characters, got 257');
    expect(() => auth.account(42 as unknown as string)).toThrow('`name` must be a string, got number');
    expect(() => kept.account('alice')).toThrow(/the `store` keeps one account \(it has no `forAccount\(name\)`\)/);
  });
});

describe('bad input fails the request with ACCOUNT_INVALID or NO_CREDENTIALS, nothing sent', () => {
  it.each([
    ['an empty account', { account: '' }, "The account of a request (the request's `account`) must not be empty"],
    ['a number', { account: 42 as unknown as string }, 'must be a string, got number'],
    ['a name over 256 characters', { account: 'n'.repeat(300) }, 'must be at most 256 characters, got 300'],
  ])('%s', async (_, config, message) => {
    const { service, api } = await rig();

    const error = await failureOf(api.get('/orders', config));

    expect(codeOf(error)).toBe('ACCOUNT_INVALID');
    expect((error as Error).message).toContain(message);
    expect(service.calls).toEqual([]);
  });

  it('an `accountOf` option that throws, or derives something other than a name', async () => {
    const { service, api } = await rig({
      accountOf: (config) => {
        if (config.url === '/throws') throw new Error('no tenant in this context');
        return config.url === '/empty' ? '' : undefined;
      },
    });

    const thrown = await failureOf(api.get('/throws'));
    const empty = await failureOf(api.get('/empty'));

    expect(codeOf(thrown)).toBe('ACCOUNT_INVALID');
    expect((thrown as Error).message).toMatch(/^The `accountOf` option threw/);
    expect(((thrown as Error).cause as Error).message).toBe('no tenant in this context');
    expect((empty as Error).message).toMatch(/^The account of a request \(the `accountOf` option\) must not be empty/);
    expect(service.calls).toEqual([]);
  });

  it('credentials(account) that gives nothing for an unknown account names it', async () => {
    const { service, api } = await rig();

    const error = await failureOf(api.get('/orders', { account: 'mallory' }));

    expect(codeOf(error)).toBe('NO_CREDENTIALS');
    expect((error as Error).message).toBe(
      'The `credentials` function gave no { username, password } for account "mallory", so the plugin cannot log in: have it answer for every account a request may name.',
    );
    expect(service.calls).toEqual([]);
  });

  it('a named account on a store that keeps one account; the `accountOf` option with it is refused at attach', async () => {
    const single: TokenStore = { get: () => null, set: () => undefined, clear: () => undefined };
    const { service, api } = await rig({ store: single });

    const error = await failureOf(api.get('/orders', { account: 'alice' }));

    expect(codeOf(error)).toBe('ACCOUNT_INVALID');
    expect((error as Error).message).toMatch(
      /^The `store` keeps one account \(it has no `forAccount\(name\)`\), so account "alice" cannot be kept there; nothing was sent/,
    );
    expect(service.calls).toEqual([]);
    expect(() =>
      attachTokenAuth(axios.create({ baseURL: service.url }), { store: single, accountOf: () => 'alice' }),
    ).toThrow(/`accountOf` names accounts per request, but the `store` keeps one account/);
  });
  it('a store whose forAccount refuses the name (a Redis prefix holding #): ACCOUNT_INVALID, with its reason as cause', async () => {
    const refusing = Object.assign(new MemoryTokenStore(), {
      forAccount: () => {
        throw new TypeError('RedisTokenStore: a `prefix` holding "#" cannot keep named accounts.');
      },
    });
    const { service, api } = await rig({ store: refusing });

    const error = await failureOf(api.get('/orders', { account: 'alice' }));

    expect(codeOf(error)).toBe('ACCOUNT_INVALID');
    expect((error as Error).message).toBe(
      'The `store` refused account "alice" (its `forAccount` threw); nothing was sent. See `cause`.',
    );
    expect(((error as Error).cause as Error).message).toMatch(/^RedisTokenStore: a `prefix` holding "#"/);
    expect(service.calls).toEqual([]);
  });
});

describe('the `accountOf` option', () => {
  it('derives the account from the context a server sets per request (AsyncLocalStorage)', async () => {
    const user = new AsyncLocalStorage<string>();
    const { service, api } = await rig({ accountOf: () => user.getStore() });

    const served = await Promise.all(
      (['alice', 'bob', undefined] as const).map((name) =>
        name === undefined ? api.get('/orders') : user.run(name, () => api.get('/orders')),
      ),
    );
    const named = await user.run('alice', () => api.get('/orders', { account: 'bob' }));

    expect(served.map(userOf)).toEqual(['alice', 'bob', 'ops']);
    expect(userOf(named)).toBe('bob');
    expect(service.counters.logins).toBe(3);
  });
});

describe('maxAccounts', () => {
  it('drops the least recently used idle account; with a shared store it comes back with no login', async () => {
    const store = new MemoryTokenStore();
    const { service, api, events } = await rig({ maxAccounts: 2, store });
    for (const account of ['alice', 'bob', 'alice', 'carol@example.com']) await api.get('/orders', { account });

    // Bob, used least recently, was dropped for Carol; his pair stayed in the store.
    await api.get('/orders', { account: 'bob' });

    expect(service.counters.logins).toBe(3);
    expect(count(events, 'load', 'bob')).toBe(1);
  });

  it('with its own memory store, a dropped account logs in again when it comes back', async () => {
    const { service, api } = await rig({ maxAccounts: 1 });
    for (const account of ['alice', 'bob', 'alice']) await api.get('/orders', { account });

    expect(service.counters.logins).toBe(3);
  });

  it('never drops an account in use: a renewal under way ends for its requests, with one login', async () => {
    const service = await emulator({ users: USERS, latency: { login: 300 } });
    const { api } = await rig({ maxAccounts: 1 }, service);
    const alice = api.get('/orders', { account: 'alice' });
    await new Promise((resolve) => setImmediate(resolve));

    // Bob needs room while Alice is logging in: Alice stays, and the bound is passed for as long as she is in use.
    const [bob, first] = await Promise.all([api.get('/orders', { account: 'bob' }), alice]);
    const again = await api.get('/orders', { account: 'alice' });

    expect([userOf(bob), userOf(first), userOf(again)]).toEqual(['bob', 'alice', 'alice']);
    expect(service.counters.logins).toBe(2);
  });
});

describe('a property: every request carries its own account’s token', () => {
  type Step =
    | { kind: 'requests'; accounts: Array<string | undefined> }
    | { kind: 'expire' }
    | { kind: 'revoke' }
    | { kind: 'logout'; account: string | undefined };
  const account = fc.constantFrom<string | undefined>(undefined, 'alice', 'bob', 'carol@example.com');
  const step: fc.Arbitrary<Step> = fc.oneof(
    {
      weight: 4,
      arbitrary: fc
        .array(account, { minLength: 1, maxLength: 8 })
        .map((accounts) => ({ kind: 'requests' as const, accounts })),
    },
    { weight: 1, arbitrary: fc.constant({ kind: 'expire' as const }) },
    { weight: 1, arbitrary: fc.constant({ kind: 'revoke' as const }) },
    { weight: 1, arbitrary: account.map((name) => ({ kind: 'logout' as const, account: name })) },
  );

  it('over random interleavings of accounts, expiries, refused refresh tokens and logouts', async () => {
    const service = await emulator({ users: USERS });
    await fc.assert(
      fc.asyncProperty(
        fc.array(step, { minLength: 1, maxLength: 12 }),
        fc.integer({ min: 1, max: 3 }),
        async (steps, max) => {
          // A shared store keeps what a dropped account knew, its logout included.
          const { api, auth } = await rig({ maxAccounts: max, store: new MemoryTokenStore() }, service);
          const signedOut = new Set<string | undefined>();
          try {
            for (const next of steps) {
              if (next.kind === 'expire') service.expireAccessTokens();
              else if (next.kind === 'revoke') service.revokeRefreshTokens();
              else if (next.kind === 'logout') {
                await (next.account === undefined ? auth : auth.account(next.account)).logout();
                signedOut.add(next.account);
              } else {
                const results = await Promise.allSettled(
                  next.accounts.map((name) => api.get('/orders', { account: name })),
                );
                results.forEach((result, index) => {
                  const name = next.accounts[index];
                  // A signed-out account stays so: its requests fail with nothing sent; every other one is served.
                  if (signedOut.has(name))
                    expect(result.status === 'rejected' && codeOf(result.reason)).toBe('LOGGED_OUT');
                  else expect(result.status === 'fulfilled' && userOf(result.value)).toBe(name ?? 'ops');
                });
              }
            }
          } finally {
            auth.eject();
          }
        },
      ),
      { numRuns: 25 },
    );
  });
});
