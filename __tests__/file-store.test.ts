// The FileTokenStore on a real file system. Two instances on one path stand in for two processes of a host: they
// share nothing but the files. Then the plugin on top of it, against the emulator over real HTTP.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import { chmod, mkdir, mkdtemp, readdir, readFile, rm, stat, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { FileTokenStore } from '../lib/stores/file.js';
import type { FileTokenStoreOptions } from '../lib/stores/file.js';
import { accountFileName } from '../lib/stores/account-key.js';
import axios from 'axios';
import { attachTokenAuth } from '../lib/index.js';
import { closeEmulatorsAfterEach, E2E_PASSWORD, E2E_USER, emulator } from './helpers/emulator.js';
import { undoAfterEach, until } from './helpers/flow.js';
import {
  expectRoundTrip,
  HOSTILE_NAMES,
  PAIR_A,
  PAIR_B,
  PAIR_C,
  STALE,
  accountRecord as accountRecordOf,
  testAccountRecord,
  testStoreAccounts,
  testStoreLock,
  undoable,
} from './helpers/store-contract.js';
import type { LeaseRig } from './helpers/store-contract.js';
import { expectOneClientForTwoHolders } from './helpers/holders.js';

closeEmulatorsAfterEach();

let dir: string;
let file: string;
let lockFile: string;
/** Locks, subscriptions, plugin handles and the test's folder: undone after it, even when it fails half-way. */
const undo = undoAfterEach();

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'token-keeper-file-store-'));
  const made = dir;
  undo.push(() => rm(made, { recursive: true, force: true }));
  file = join(dir, 'tokens.json');
  lockFile = `${file}.lock`;
});

function store(options: FileTokenStoreOptions = {}, path = file): FileTokenStore {
  return new FileTokenStore(path, options);
}

const { listen } = undoable(() => undo);

async function exists(path: string): Promise<boolean> {
  return stat(path).then(
    () => true,
    () => false,
  );
}

/** Sets a file's mtime into the past: its holder stopped extending it that long ago. */
async function age(path: string, ms: number): Promise<void> {
  const past = new Date(Date.now() - ms);
  await utimes(path, past, past);
}

describe('FileTokenStore: reading and writing', () => {
  it('get() is null while there is no file', async () => {
    expect(await store().get()).toBeNull();
    expect(await exists(file)).toBe(false);
  });

  it('gives back the pair set, and null after clear()', async () => {
    await expectRoundTrip(() => store());
  });

  it('creates the parent directories and writes the file with mode 0600, leaving no temporary file', async () => {
    const deep = join(dir, 'a', 'b', 'tokens.json');
    const tokens = store({}, deep);

    await tokens.set(PAIR_A);
    await tokens.set(PAIR_B);
    await tokens.clear();
    const lock = await tokens.lock();
    await tokens.set(PAIR_C, lock.fence);
    await lock.release();

    expect(await tokens.get()).toEqual(PAIR_C);
    expect((await stat(deep)).mode & 0o777).toBe(0o600);
    const names = await readdir(join(dir, 'a', 'b'));
    expect(names).toContain('tokens.json');
    expect(names.filter((name) => name.endsWith('.tmp') || name.endsWith('.lock'))).toEqual([]);
  });

  it('puts a file that others could read back to mode 0600 on the next write', async () => {
    const tokens = store();
    await tokens.set(PAIR_A);
    await chmod(file, 0o644);

    await tokens.set(PAIR_B);

    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect((await readdir(dir)).filter((name) => name.endsWith('.tmp'))).toEqual([]);
  });

  describe.each([
    ['text that is not JSON', 'PORT=8080\n'],
    ['an empty file', ''],
    ['JSON of something else', '{"access":"x","refresh":"y"}'],
    ['a record of another version', '{"version":2,"fence":1,"pair":null}'],
    ['a record without a fence', '{"version":1,"pair":null}'],
    ['a record whose pair has no access token', '{"version":1,"fence":1,"pair":{"refresh":"y"}}'],
  ])('a file holding %s', (_what, content) => {
    it('makes get(), set() and clear() reject with the path and the fix, and is left as it was', async () => {
      await writeFile(file, content);
      const tokens = store();

      for (const operation of [
        () => tokens.get(),
        () => tokens.set(PAIR_A),
        () => tokens.set(PAIR_A, Date.now() + 60_000),
        () => tokens.clear(),
      ]) {
        const error = (await operation().then(
          () => undefined,
          (reason: unknown) => reason,
        )) as Error | undefined;
        expect(error).toBeInstanceOf(Error);
        expect(error?.message).toContain(file);
        expect(error?.message).toContain('point the store elsewhere or delete it');
      }
      expect(await readFile(file, 'utf8')).toBe(content);
      expect(await readdir(dir)).toEqual(['tokens.json']);
    });
  });
});

/** The lease of the lock file that `lockOf()` names, as the lock contract sees it. */
function leaseAt(lockOf: () => string): LeaseRig {
  return {
    where: lockOf,
    owner: () => readFile(lockOf(), 'utf8').catch(() => null),
    plant: async (owner, holder) => {
      // An account's directory is made at its first write, which may not have come yet.
      await mkdir(dirname(lockOf()), { recursive: true, mode: 0o700 });
      await writeFile(lockOf(), owner);
      // A killed holder stopped extending its lease long ago.
      if (holder === 'killed') await age(lockOf(), 5_000);
    },
    // A's lease is long (see the contract): ageing its lock file past any waiter's lockTtlMs is what a stall would do.
    lapse: () => age(lockOf(), 10_000),
  };
}

testStoreLock('FileTokenStore', {
  open: (timings) => store(timings),
  fences: 'every grant',
  lease: leaseAt(() => lockFile),
});

describe('FileTokenStore: fences', () => {
  // Two grants in one millisecond with no write between them happen on a fast machine (lock, release, lock), and a
  // clock may step back (NTP, a resumed VM): a fence taken from the clock would repeat. A frozen clock makes it certain.
  it('grants each lock a greater fence than the last, even within one millisecond', async () => {
    jest.useFakeTimers({
      now: Date.now(),
      doNotFake: [
        'hrtime',
        'nextTick',
        'performance',
        'queueMicrotask',
        'setImmediate',
        'clearImmediate',
        'setInterval',
        'clearInterval',
        'setTimeout',
        'clearTimeout',
      ],
    });
    try {
      const first = await store().lock();
      await first.release();
      const second = await store().lock();
      await second.release();

      expect(second.fence).toBeGreaterThan(first.fence!);
    } finally {
      jest.useRealTimers();
    }
  });
});

describe('FileTokenStore: subscribe', () => {
  it('tells another instance on the same path of a write, and the writer’s own listeners once', async () => {
    const one = store();
    const two = store();
    const ofOne = listen(one);
    const ofTwo = listen(two);

    await one.set(PAIR_A);
    await until(() => ofTwo.heard.length >= 1, 5_000);
    await two.set(PAIR_B);
    await until(() => ofOne.heard.length >= 2, 5_000);
    await one.clear();
    await until(() => ofTwo.heard.length >= 3, 5_000);

    // Each writer hears its own write once (at once), not again from its watcher; the other hears it from the watcher.
    expect(ofOne.heard).toEqual([PAIR_A, PAIR_B, null]);
    expect(ofTwo.heard).toEqual([PAIR_A, PAIR_B, null]);
  });

  it('stops calling a listener after its unsubscribe', async () => {
    const one = store();
    const two = store();
    const gone = listen(two);
    const stays = listen(two);

    await one.set(PAIR_A);
    await until(() => gone.heard.length === 1 && stays.heard.length === 1, 5_000);
    gone.stop();
    await one.set(PAIR_B);
    await until(() => stays.heard.length === 2, 5_000);

    expect(gone.heard).toEqual([PAIR_A]);
    expect(stays.heard).toEqual([PAIR_A, PAIR_B]);
  });

  it('with `watch: false`, hears nothing of the writes of other instances', async () => {
    const writer = store();
    const deaf = listen(store({ watch: false }));
    const witness = listen(store());

    await writer.set(PAIR_A);
    await until(() => witness.heard.length === 1, 5_000);
    await writer.set(PAIR_B);
    await until(() => witness.heard.length === 2, 5_000);

    expect(witness.heard).toEqual([PAIR_A, PAIR_B]);
    expect(deaf.heard).toEqual([]);
  });
});

describe('FileTokenStore: what a killed writer leaves', () => {
  it('removes, when the lock is taken, temporary files older than a lease, which hold tokens; a fresh one stays', async () => {
    await store().set(PAIR_A);
    const leftover = `${file}.killed-writer.tmp`;
    const inFlight = `${file}.live-writer.tmp`;
    await writeFile(leftover, JSON.stringify({ version: 1, fence: 1, pair: STALE }));
    await age(leftover, 5_000);
    await writeFile(inFlight, '{');

    const lock = await store({ lockTtlMs: 1_000 }).lock();
    await lock.release();

    expect(await exists(leftover)).toBe(false);
    expect(await exists(inFlight)).toBe(true);
    expect(await store().get()).toEqual(PAIR_A);
  });
});

describe('FileTokenStore: options', () => {
  it('says what it got for a `watch` that is not a boolean, a string in quotes', () => {
    expect(() => new FileTokenStore(file, { watch: 'false' as unknown as boolean })).toThrow(
      '`watch` must be true or false; got "false".',
    );
  });

  it('refuses null options with a TypeError that says what options are', () => {
    expect(() => new FileTokenStore(file, null as unknown as FileTokenStoreOptions)).toThrow(
      /the options must be an object/,
    );
  });

  it.each<[string, unknown]>([
    ['lockTtl', { lockTtl: 1_000 }],
    ['lockTtlMs', { lockTtlMs: 999 }],
    ['lockTtlMs', { lockTtlMs: 0 }],
    ['lockTimeoutMs', { lockTimeoutMs: -1 }],
    ['lockTimeoutMs', { lockTimeoutMs: '300' }],
    ['pollMs', { pollMs: Number.NaN }],
    ['pollMs', { pollMs: Infinity }],
    ['watch', { watch: 'yes' }],
    ['watch', { watch: 1 }],
  ])('refuses a bad `%s` (%p) with a TypeError that names it', (name, options) => {
    expect(() => new FileTokenStore(file, options as FileTokenStoreOptions)).toThrow(TypeError);
    expect(() => new FileTokenStore(file, options as FileTokenStoreOptions)).toThrow(`\`${name}\``);
  });

  it.each<[string, unknown]>([
    ['an empty string', ''],
    ['a number', 42],
    ['nothing', undefined],
  ])('refuses %s as the path with a TypeError that says what a path is', (_what, path) => {
    expect(() => new FileTokenStore(path as string)).toThrow(TypeError);
    expect(() => new FileTokenStore(path as string)).toThrow(/path of the token file/);
  });

  it('accepts the documented options', () => {
    expect(
      () => new FileTokenStore(file, { lockTtlMs: 1_000, lockTimeoutMs: 1, pollMs: 1, watch: false }),
    ).not.toThrow();
  });
});

describe('FileTokenStore: with the plugin', () => {
  it('gives two instances on one file one login and one refresh per expiry, and a restart no login', async () => {
    await expectOneClientForTwoHolders(
      await emulator(),
      () => new FileTokenStore(file),
      (auth) => undo.push(() => auth.eject()),
    );
    expect((await stat(file)).mode & 0o777).toBe(0o600);
  });

  it('has released the lock file when `auth.flush()` resolves: a process that exits right after it leaves no lock behind', async () => {
    const service = await emulator();
    const api = axios.create({ baseURL: service.url });
    const auth = attachTokenAuth(api, { credentials: { username: E2E_USER, password: E2E_PASSWORD }, store: store() });
    undo.push(() => auth.eject());

    await api.get('/orders');
    await auth.flush();

    expect(fs.existsSync(lockFile)).toBe(false);
    expect(await store().get()).toEqual(await auth.getTokens());
  });
});

testAccountRecord('FileTokenStore', { open: () => store(), fences: 'every grant' });

/** Where a named account's token file is, as FileTokenStore.forAccount documents it. */
function accountFile(name: string): string {
  const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
  return join(`${file}.accounts`, `${accountFileName(name, sha256)}.json`);
}

testStoreAccounts('FileTokenStore', {
  open: (timings) => store(timings),
  fences: 'every grant',
  record: true,
  lease: (name) => leaseAt(() => `${accountFile(name)}.lock`),
});

describe('FileTokenStore: where the accounts’ files are', () => {
  it('keeps a named account in tokens.json.accounts/<escaped name>.json, its lock, fence and record beside it', async () => {
    const tenant = store().forAccount('tenant:{42}/../a.lock');
    await tenant.set(PAIR_A);
    await tenant.setAccount({ ...accountRecordOf(), refusedRefresh: [] });
    const lock = await tenant.lock();
    await lock.release();

    expect(await readdir(dir)).toEqual(['tokens.json.accounts']);
    const escaped = 'tenant%3A%7B42%7D%2F%2E%2E%2Fa%2Elock';
    expect((await readdir(`${file}.accounts`)).sort()).toEqual(
      [`${escaped}.json`, `${escaped}.json.account`, `${escaped}.json.fence`].sort(),
    );
    expect((await stat(`${file}.accounts`)).mode & 0o777).toBe(0o700);
    expect((await stat(join(`${file}.accounts`, `${escaped}.json`))).mode & 0o777).toBe(0o600);
    expect(await store().get()).toBeNull();
  });

  it('keeps every hostile name’s files inside the accounts’ directory, one token file each', async () => {
    for (const name of HOSTILE_NAMES) await store().forAccount(name).set({ access: name });

    expect(await readdir(dir)).toEqual(['tokens.json.accounts']);
    const files = await readdir(`${file}.accounts`);
    expect(files).toHaveLength(HOSTILE_NAMES.length);
    expect(files.every((name) => /^([A-Za-z0-9_-]|%[0-9A-F]{2})+(\+[0-9a-f]{64})?\.json$/.test(name))).toBe(true);
    for (const name of HOSTILE_NAMES) expect(await store().forAccount(name).get()).toEqual({ access: name });
  });

  it('cuts a name past 128 characters and follows it with its SHA-256, so the longest names get files of their own', async () => {
    const names = ['x'.repeat(256), `${'x'.repeat(255)}y`, '🙂'.repeat(128)];
    for (const name of names)
      await store()
        .forAccount(name)
        .set({ access: name.slice(-2) });

    const files = await readdir(`${file}.accounts`);
    expect(files).toHaveLength(3);
    for (const name of files) expect(name.length).toBeLessThanOrEqual(128 + '.json'.length);
  });

  it('watches the accounts’ directory once for all their listeners, and stops with the last listener', async () => {
    const watch = jest.spyOn(fs, 'watch');
    try {
      const parent = store();
      const listeners = ['alice', 'bob', 'carol', 'alice'].map((name) => listen(parent.forAccount(name)));
      const watches = watch.mock.results.map((result) => result.value as fs.FSWatcher);
      expect(watch.mock.calls.map(([path]) => path)).toEqual([`${file}.accounts`]);

      await store().forAccount('bob').set(PAIR_A);
      await until(() => listeners[1]!.heard.length === 1, 5_000);
      expect(listeners.map((listener) => listener.heard.length)).toEqual([0, 1, 0, 0]);

      const close = jest.spyOn(watches[0]!, 'close');
      for (const listener of listeners) listener.stop();
      expect(close).toHaveBeenCalledTimes(1);
    } finally {
      watch.mockRestore();
    }
  });

  it('takes the options of the store it came from, and refuses a name that is no string', async () => {
    const deaf = listen(store({ watch: false }).forAccount('alice'));
    const witness = listen(store().forAccount('alice'));
    await store().forAccount('alice').set(PAIR_A);
    await until(() => witness.heard.length === 1, 5_000);
    expect(deaf.heard).toEqual([]);

    expect(() => store().forAccount('')).toThrow(
      /^FileTokenStore\.forAccount: the account's name must be a non-empty string/,
    );
  });
});
