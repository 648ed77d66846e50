// A rejected login ends the wait of every holder waiting for the store's lock: the rejection's pause goes into the
// account's record, the store tells the waiting holders (`subscribeAccount`), each reads the record, and those that
// could only log in fail with the pause at once. Without it, each of N holders takes the lock in turn to read the pause
// under it, and every release wakes every holder still waiting to try again: N² tries, 83 s for 1,000 holders. And a
// holder that knows of the pause reads the record, not the lock, before it renews again. Holders here are attachments
// in this process, each with a store and connections of its own, as processes would have, on a real redis-server, and
// each with a FileTokenStore of its own on one token file; and attachments sharing one MemoryTokenStore. Without redis-server this file fails here, once, with the command that
// installs it.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import axios from 'axios';
import Redis from 'ioredis';
import { attachTokenAuth, MemoryTokenStore } from 'axios-token-keeper';
import type { TokenAuth, TokenStore, TokenStoreLockRequest } from 'axios-token-keeper';
import { FileTokenStore } from 'axios-token-keeper/file-store';
import { RedisTokenStore } from 'axios-token-keeper/redis-store';
import type { TokenServiceEmulator } from 'axios-token-keeper/emulator';
import { countCommands, subscriptions } from '../harness/redis-server.js';
import { closeEmulatorsAfterEach, E2E_PASSWORD, E2E_USER, emulator } from './helpers/emulator.js';
import { undoAfterEach, until } from './helpers/flow.js';
import { redisServerForFile } from './helpers/redis.js';

closeEmulatorsAfterEach();
const server = redisServerForFile();
const HOLDERS = 40;
/**
 * Holders of a shared store that may still take the lock after the pause is written: a try woken by the release (each
 * within 50 ms) can come before the holder's read of the record has returned, on a busy machine. A tenth of them at
 * most; without the pause's news, every holder takes the lock.
 */
const LATE_GRANTS = HOLDERS / 10;
const WRONG = { username: E2E_USER, password: 'not-the-password-8c1e' };

/** Plugin handles, stores, connections and folders the test took: undone after it, even when it fails. */
const undo = undoAfterEach();

/** `store`, counting the locks it grants: the turns its holders take at the account. */
function counted(store: TokenStore, grants: { count: number }): TokenStore {
  const lock = store.lock!.bind(store);
  store.lock = async (request?: TokenStoreLockRequest) => {
    const granted = await lock(request);
    grants.count += 1;
    return granted;
  };
  return store;
}

/** A holder of the account on `service` through `store` (a wrong password unless `password`): `get()` answers 'ok' or the error. */
function holder(
  service: TokenServiceEmulator,
  store: TokenStore,
  password = WRONG.password,
): { auth: TokenAuth; get: () => Promise<string> } {
  const api = axios.create({ baseURL: service.url });
  const credentials = { username: E2E_USER, password };
  const auth = attachTokenAuth(api, { credentials, store, loginCooldownMs: 60_000, tokenRetryDelayMs: 5 });
  undo.push(() => auth.eject());
  const get = () =>
    api.get('/api/orders').then(
      () => 'ok',
      (error: { code?: string; message?: string }) => `${error.code}: ${error.message}`,
    );
  return { auth, get };
}

/** `HOLDERS` holders, each with a RedisTokenStore and two connections (client and subscriber) of its own. */
function redisHolders(service: TokenServiceEmulator, prefix: string, grants: { count: number }, password?: string) {
  return Array.from({ length: HOLDERS }, () => {
    const client = new Redis(server().url);
    const subscriber = new Redis(server().url);
    const store = new RedisTokenStore(client, { prefix, subscriber });
    undo.push(async () => {
      await store.close();
      await Promise.all([client.quit(), subscriber.quit()]);
    });
    return holder(service, counted(store, grants), password);
  });
}

const logins = (service: TokenServiceEmulator) => service.calls.filter((call) => call.route === 'login').length;

describe(`${HOLDERS} holders of one account, each with its own RedisTokenStore, a wrong password`, () => {
  it('one rejected login; the others, waiting for the lock, fail with its pause when the record gains it, all but a few (at most a tenth) without taking the lock; a second burst in the pause takes no lock and reads only the record and the pair', async () => {
    // A login slow enough that every holder is waiting for the lock when it is rejected.
    const service = await emulator({ latency: { login: 300 } });
    const grants = { count: 0 };
    const prefix = `pause-test:${Date.now()}`;
    const holders = redisHolders(service, prefix, grants);
    // Every holder listening before the burst, as in a fleet that has run a while.
    await until(async () => (await subscriptions(server().port, `{${prefix}}*`)) === HOLDERS);

    const first = await countCommands([server().port], () => Promise.all(holders.map((h) => h.get())));

    expect(logins(service)).toBe(1);
    expect(service.counters).toMatchObject({ logins: 0, rejected: 1 });
    expect(first.result.filter((outcome) => outcome.startsWith('LOGIN_REJECTED'))).toHaveLength(HOLDERS);
    expect(first.result.filter((outcome) => outcome.includes('another holder of the shared store'))).toHaveLength(
      HOLDERS - 1,
    );
    // The holder that logged in, and the few (none to 2 here) whose try, woken by the release, came before their
    // read of the record returned; before, every holder took the lock in turn (40).
    expect(grants.count).toBeLessThanOrEqual(LATE_GRANTS + 1);
    // Lock tries: about one each (the first), then none; before, each release woke every waiter to try (≈ 20 each).
    expect(first.byCommand.get('eval') ?? 0).toBeLessThan(3 * HOLDERS);

    grants.count = 0;
    const second = await countCommands([server().port], () => Promise.all(holders.map((h) => h.get())));

    expect(logins(service)).toBe(1);
    expect(second.result.every((outcome) => outcome.startsWith('LOGIN_REJECTED'))).toBe(true);
    expect(grants.count).toBe(0);
    // Two reads per holder, and nothing else: the record (the pause still holds) and the pair (none stored).
    expect(second.byCommand.get('eval') ?? 0).toBe(0);
    expect(second.byCommand.get('get')).toBe(2 * HOLDERS);
    expect(second.commands).toBe(2 * HOLDERS);
  }, 60_000);

  it('the password changed and the refresh tokens revoked at an expiry: 1 refused refresh and 1 rejected login; the others, holding the dead refresh token, fail with the pause as the record gains it', async () => {
    const service = await emulator({ latency: { token: 150, login: 150 } });
    const grants = { count: 0 };
    const prefix = `pause-test:${Date.now()}`;
    const holders = redisHolders(service, prefix, grants, E2E_PASSWORD);
    await until(async () => (await subscriptions(server().port, `{${prefix}}*`)) === HOLDERS);
    // Every holder with the pair, before any expiry.
    expect((await Promise.all(holders.map((h) => h.get()))).every((outcome) => outcome === 'ok')).toBe(true);
    expect(service.counters.logins).toBe(1);

    service.expireAccessTokens();
    service.revokeRefreshTokens();
    service.inject('login', { status: 401, body: { detail: 'Invalid credentials.' } }, 1_000);
    grants.count = 0;
    const outcomes = await Promise.all(holders.map((h) => h.get()));

    expect(service.counters).toMatchObject({ logins: 1, refreshes: 0 });
    expect(service.calls.filter((call) => call.route === 'token')).toHaveLength(1);
    expect(logins(service)).toBe(2);
    expect(outcomes.filter((outcome) => outcome.startsWith('LOGIN_REJECTED'))).toHaveLength(HOLDERS);
    // The renewer and the few late tries (above); before, each of the 39 others took the lock in turn, to find the
    // refresh token refused and the login paused.
    expect(grants.count).toBeLessThanOrEqual(LATE_GRANTS + 1);
  }, 60_000);
});

describe(`${HOLDERS} holders of one account, each with its own FileTokenStore on one token file, a wrong password`, () => {
  it('one rejected login; the others, waiting for the lock, fail with its pause when the record file is written; a second burst in the pause takes no lock', async () => {
    const service = await emulator({ latency: { login: 300 } });
    const grants = { count: 0 };
    const dir = mkdtempSync(join(tmpdir(), 'pause-test-'));
    undo.push(() => rmSync(dir, { recursive: true, force: true }));
    const holders = Array.from({ length: HOLDERS }, () =>
      holder(service, counted(new FileTokenStore(join(dir, 'tokens.json')), grants)),
    );

    const first = await Promise.all(holders.map((h) => h.get()));

    expect(logins(service)).toBe(1);
    expect(first.filter((outcome) => outcome.startsWith('LOGIN_REJECTED'))).toHaveLength(HOLDERS);
    // The holder that logged in, and the few late tries (above); before, each in turn (40).
    expect(grants.count).toBeLessThanOrEqual(LATE_GRANTS + 1);

    grants.count = 0;
    const second = await Promise.all(holders.map((h) => h.get()));
    expect(second.every((outcome) => outcome.startsWith('LOGIN_REJECTED'))).toBe(true);
    expect(logins(service)).toBe(1);
    expect(grants.count).toBe(0);
  }, 60_000);
});

describe('a holder that knows of the pause, on a store that tells nobody of a new pair', () => {
  it('takes the pair another holder stored meanwhile (`setTokens`) rather than fail with the pause', async () => {
    const service = await emulator();
    const shared = new MemoryTokenStore();
    // The memory store's pair and record, and its lock, without `subscribe`: as a store of your own may be.
    const silent: TokenStore = {
      get: () => shared.get(),
      set: (pair) => shared.set(pair),
      clear: () => shared.clear(),
      lock: () => shared.lock(),
      getAccount: () => shared.getAccount(),
      setAccount: (record) => shared.setAccount(record),
    };
    const [paused, other] = [holder(service, silent), holder(service, silent)];
    expect(await paused.get()).toMatch(/^LOGIN_REJECTED/);
    expect(await paused.get()).toMatch(/^LOGIN_REJECTED/);
    expect(service.counters.rejected).toBe(1);

    // A pair got elsewhere (a holder with the right password, of a store of its own), handed to the other holder.
    const api = axios.create({ baseURL: service.url });
    const right = attachTokenAuth(api, { credentials: { username: E2E_USER, password: E2E_PASSWORD } });
    undo.push(() => right.eject());
    await api.get('/api/orders');
    await other.auth.setTokens((await right.getTokens())!);

    expect(await paused.get()).toBe('ok');
    expect(service.counters).toMatchObject({ logins: 1, rejected: 1 });
  });
});

describe(`${HOLDERS} attachments sharing one MemoryTokenStore, a wrong password`, () => {
  it('one rejected login: the others, waiting for the lock, fail with the pause as the record gains it; a second burst in the pause takes no lock', async () => {
    const service = await emulator();
    const grants = { count: 0 };
    const store = counted(new MemoryTokenStore(), grants);
    const holders = Array.from({ length: HOLDERS }, () => holder(service, store));

    const outcomes = await Promise.all(holders.map((h) => h.get()));

    expect(service.counters).toMatchObject({ logins: 0, rejected: 1 });
    expect(outcomes.filter((outcome) => outcome.startsWith('LOGIN_REJECTED'))).toHaveLength(HOLDERS);
    // The attachment that logged in, and the next in line: the lock passes to it as the record's news is on its way
    // to it (a read of the record); before, every attachment took it in turn (40).
    expect(grants.count).toBeLessThanOrEqual(2);

    grants.count = 0;
    const again = await Promise.all(holders.map((h) => h.get()));
    expect(again.every((outcome) => outcome.startsWith('LOGIN_REJECTED'))).toBe(true);
    expect(service.counters.rejected).toBe(1);
    expect(grants.count).toBe(0);
  });
});
