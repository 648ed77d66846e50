// The account's guards are the account's: holders of one store (here two attachments in one process, each with its
// own instance of the store, as two processes would have) consult the record the store keeps before a call that
// generates a token. One rejected login pauses both, one budget counts both, a refresh token one saw refused the other
// does not send, and an endpoint one found uncured costs the other nothing. Real HTTP against the emulator; the fleet
// of real processes is fleet-account.test.ts.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import axios from 'axios';
import { attachTokenAuth, isTokenAuthError, MemoryTokenStore } from 'axios-token-keeper';
import type { TokenAuth, TokenAuthOptions, TokenStore } from 'axios-token-keeper';
import { FileTokenStore } from 'axios-token-keeper/file-store';
import type { TokenServiceEmulator } from 'axios-token-keeper/emulator';
import { closeEmulatorsAfterEach, emulator, E2E_PASSWORD, E2E_USER } from './helpers/emulator.js';
import { failureOf } from './helpers/settled.js';

closeEmulatorsAfterEach();

const directories: string[] = [];
afterAll(async () => {
  await Promise.all(directories.map((directory) => rm(directory, { recursive: true, force: true })));
});

/** Two holders of one account: the same MemoryTokenStore, or two FileTokenStores on one file. */
const STORES: ReadonlyArray<[string, () => Promise<() => TokenStore>]> = [
  [
    'a MemoryTokenStore',
    () => {
      const store = new MemoryTokenStore();
      return Promise.resolve(() => store);
    },
  ],
  [
    'one token file',
    async () => {
      const directory = await mkdtemp(join(tmpdir(), 'shared-account-'));
      directories.push(directory);
      const path = join(directory, 'tokens.json');
      return () => new FileTokenStore(path, { watch: false });
    },
  ],
];

interface Holder {
  api: ReturnType<typeof axios.create>;
  auth: TokenAuth;
}

function holders(
  service: TokenServiceEmulator,
  store: () => TokenStore,
  options: Partial<TokenAuthOptions> = {},
): [Holder, Holder] {
  const one = (): Holder => {
    const api = axios.create({ baseURL: service.url });
    const auth = attachTokenAuth(api, {
      credentials: { username: E2E_USER, password: E2E_PASSWORD },
      tokenRetries: 0,
      store: store(),
      ...options,
    });
    return { api, auth };
  };
  return [one(), one()];
}

const loginCalls = (service: TokenServiceEmulator) => service.calls.filter((call) => call.route === 'login').length;
const tokenCalls = (service: TokenServiceEmulator) => service.calls.filter((call) => call.route === 'token').length;

describe.each(STORES)('two holders of %s', (_name, makeStore) => {
  let held: TokenAuth[] = [];
  afterEach(async () => {
    // A holder's last write (a pair, or the record of a rejected login, under the store's lock) can still be in flight
    // when a test ends: it landed in the token file's folder while afterAll removed it (ENOTEMPTY, with a token-file
    // test last).
    await Promise.all(held.map((auth) => auth.flush()));
    for (const auth of held) auth.eject();
    held = [];
  });
  const both = (pair: [Holder, Holder]): [Holder, Holder] => {
    held.push(...pair.map(({ auth }) => auth));
    return pair;
  };

  it('a wrong password: one rejected login for both; the other fails at once, saying another holder was refused', async () => {
    const service = await emulator();
    const [a, b] = both(
      holders(service, await makeStore(), { credentials: { username: E2E_USER, password: 'wrong' } }),
    );

    const first = await failureOf(a.api.get('/orders'), isTokenAuthError);
    const second = await failureOf(b.api.get('/orders'), isTokenAuthError);

    expect(first).toMatchObject({ code: 'LOGIN_REJECTED', status: 401 });
    expect(second).toMatchObject({ code: 'LOGIN_REJECTED', status: 401 });
    expect(second.message).toMatch(/^Automatic logins are paused until .*which another holder of the shared store saw/);
    expect(loginCalls(service)).toBe(1);
    // The holder held back sent nothing: its requests fail as any within a pause do, with no `failure` event.
    expect([a.auth.stats().failures, b.auth.stats().failures]).toEqual([1, 0]);
  });

  it('the refused holder reads its own pause back from the store as its own, not as another holder’s', async () => {
    const service = await emulator();
    const [a] = both(holders(service, await makeStore(), { credentials: { username: E2E_USER, password: 'wrong' } }));
    await failureOf(a.api.get('/orders'), isTokenAuthError);

    const again = await failureOf(a.api.get('/orders'), isTokenAuthError);

    expect(again).toMatchObject({ code: 'LOGIN_REJECTED', status: 401 });
    expect(again.message).toMatch(/^Automatic logins are paused until .* after this rejection, so that the account/);
    expect(loginCalls(service)).toBe(1);
  });

  it('auth.login() by hand overrides the pause, and its success lifts it for the other holder', async () => {
    const service = await emulator();
    const [a, b] = both(
      holders(service, await makeStore(), { credentials: { username: E2E_USER, password: 'wrong' } }),
    );
    await failureOf(a.api.get('/orders'), isTokenAuthError);

    await b.auth.login({ username: E2E_USER, password: E2E_PASSWORD });
    service.expireAccessTokens();
    service.revokeRefreshTokens();
    // a's own password is still wrong: its login is tried (the pause is lifted) and refused, once.
    const after = await failureOf(a.api.get('/orders'), isTokenAuthError);

    expect(after).toMatchObject({ code: 'LOGIN_REJECTED' });
    expect(after.message).not.toMatch(/paused/);
    expect(service.counters).toMatchObject({ logins: 1 });
    expect(loginCalls(service)).toBe(3);
  });

  it('the password changed and the refresh tokens revoked: 1 refused refresh and 1 rejected login for both', async () => {
    const service = await emulator();
    const [a, b] = both(holders(service, await makeStore()));
    await a.api.get('/orders');
    await b.api.get('/orders');
    expect([loginCalls(service), tokenCalls(service)]).toEqual([1, 0]);

    service.expireAccessTokens();
    service.revokeRefreshTokens();
    service.inject('login', { status: 401, body: { detail: 'Invalid credentials.' } }, 100);
    const errors = [
      await failureOf(a.api.get('/orders'), isTokenAuthError),
      await failureOf(b.api.get('/orders'), isTokenAuthError),
    ];

    expect(errors.map((error) => error.code)).toEqual(['LOGIN_REJECTED', 'LOGIN_REJECTED']);
    expect([loginCalls(service), tokenCalls(service)]).toEqual([2, 1]);
  });

  it('tokenBudget counts both holders’ calls: 1 login and 2 token calls in all, then TOKEN_BUDGET_EXCEEDED saying the calls are the account’s', async () => {
    const service = await emulator();
    const [a, b] = both(holders(service, await makeStore(), { tokenBudget: { logins: 1, refreshes: 2 } }));
    await a.api.get('/orders');
    await b.api.get('/orders');
    // Each holder renews once in turn; the other takes the new pair from the store.
    for (const [renewing, other] of [
      [a, b],
      [b, a],
    ]) {
      service.expireAccessTokens();
      await renewing!.api.get('/orders');
      await other!.api.get('/orders');
    }
    service.expireAccessTokens();

    const refused = await failureOf(a.api.get('/orders'), isTokenAuthError);

    expect(refused.code).toBe('TOKEN_BUDGET_EXCEEDED');
    expect(refused.message).toMatch(
      /The next is allowed in \d+ s\. The calls are the account's, counted across every holder/,
    );
    expect([loginCalls(service), tokenCalls(service)]).toEqual([1, 2]);
  });

  it('an endpoint whose 401 renewing does not cure costs one token call for both holders', async () => {
    const service = await emulator({ alwaysUnauthorized: ['/forbidden'] });
    const [a, b] = both(holders(service, await makeStore()));
    await a.api.get('/orders');
    await b.api.get('/orders');

    for (let i = 0; i < 6; i += 1) await failureOf((i % 2 ? b : a).api.get('/forbidden'), axios.isAxiosError);

    expect([loginCalls(service), tokenCalls(service)]).toEqual([1, 1]);
  });
});
