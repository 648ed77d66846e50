// The FileTokenStore on a real file system. Two instances on one path stand in for two processes of a host: they
// share nothing but the files. Then the plugin on top of it, against the emulator over real HTTP.
import { chmod, mkdtemp, readdir, readFile, rm, stat, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FileTokenStore } from '../lib/stores/file.js';
import type { FileTokenStoreOptions } from '../lib/stores/file.js';
import { closeEmulatorsAfterEach, emulator } from './helpers/emulator.js';
import { until } from './helpers/flow.js';
import {
  expectLapsedHolderFencedOut,
  expectRoundTrip,
  expectUnfencedWritesLand,
  PAIR_A,
  PAIR_B,
  PAIR_C,
  STALE,
  undoable,
} from './helpers/store-contract.js';
import { expectOneClientForTwoHolders } from './helpers/holders.js';

closeEmulatorsAfterEach();

let dir: string;
let file: string;
let lockFile: string;
/** Locks, subscriptions and plugin handles the test took: undone after it, even when it fails half-way. */
let undo: Array<() => unknown>;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'token-keeper-file-store-'));
  file = join(dir, 'tokens.json');
  lockFile = `${file}.lock`;
  undo = [];
});

afterEach(async () => {
  for (const step of undo.reverse()) await step();
  await rm(dir, { recursive: true, force: true });
});

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

function store(options: FileTokenStoreOptions = {}, path = file): FileTokenStore {
  return new FileTokenStore(path, options);
}

const { locked, listen } = undoable(() => undo);

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

describe('FileTokenStore: lock', () => {
  it('makes a second instance on the same path wait until the first releases, then grants it a greater fence', async () => {
    const first = store();
    const second = store();
    const a = await first.lock();
    let released = false;
    let releasedWhenGranted: boolean | undefined;

    const waiting = second.lock().then((lock) => {
      releasedWhenGranted = released;
      return lock;
    });
    // Many polls (pollMs 25) of the waiter fall in this time; none may take the lock.
    await sleep(250);
    expect(releasedWhenGranted).toBeUndefined();
    expect(await readFile(lockFile, 'utf8')).not.toBe('');
    released = true;
    await a.release();
    const b = await waiting;
    undo.push(() => b.release());

    expect(releasedWhenGranted).toBe(true);
    expect(typeof a.fence).toBe('number');
    expect(b.fence).toBeGreaterThan(a.fence!);
  });

  it('grants a fence greater than that of the last write', async () => {
    const tokens = store();
    const far = Date.now() + 3_600_000;
    await tokens.set(PAIR_A, far);

    const lock = await locked(store());

    expect(lock.fence).toBeGreaterThan(far);
  });

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

  it('removes its lock file on release', async () => {
    const lock = await store().lock();
    expect(await exists(lockFile)).toBe(true);

    await lock.release();

    expect(await exists(lockFile)).toBe(false);
  });

  it('takes over a lock file whose holder stopped extending it longer than lockTtlMs ago', async () => {
    await writeFile(lockFile, 'a holder that was killed');
    await age(lockFile, 5_000);

    const lock = await store({ lockTtlMs: 1_000, lockTimeoutMs: 3_000 }).lock();

    expect(await readFile(lockFile, 'utf8')).not.toBe('a holder that was killed');
    await lock.release();
    expect(await exists(lockFile)).toBe(false);
  });

  it('gives up on a live foreign lock after lockTimeoutMs, naming the option, and leaves that lock alone', async () => {
    await writeFile(lockFile, 'a live holder');

    const error = (await store({ lockTtlMs: 1_000, lockTimeoutMs: 300 })
      .lock()
      .catch((reason: unknown) => reason)) as Error;

    expect(error).toBeInstanceOf(Error);
    expect(error.message).toContain('`lockTimeoutMs`');
    expect(error.message).toContain(lockFile);
    expect(await readFile(lockFile, 'utf8')).toBe('a live holder');
  });

  it('extends the lease while it is held, so that another instance cannot take it after lockTtlMs', async () => {
    const lock = await locked(store({ lockTtlMs: 1_000 }));
    // Past the first lease: only the extensions keep the lock file fresh from here on.
    await sleep(1_000);

    const error = (await store({ lockTtlMs: 1_000, lockTimeoutMs: 1_500 })
      .lock()
      .catch((reason: unknown) => reason)) as Error;

    expect(error).toBeInstanceOf(Error);
    expect(error.message).toContain('`lockTimeoutMs`');
    expect(await exists(lockFile)).toBe(true);
    await lock.release();
    expect(await exists(lockFile)).toBe(false);
  });

  it('release() leaves a lock file that another holder wrote meanwhile (compare and delete)', async () => {
    const lock = await store().lock();
    // Its lease lapsed and another holder took the lock: the file is that holder's now.
    await writeFile(lockFile, 'another holder');

    await lock.release();

    expect(await readFile(lockFile, 'utf8')).toBe('another holder');
  });
});

describe('FileTokenStore: fencing', () => {
  it('refuses a write under a lapsed lock once a later lock was granted, and keeps the later pair', async () => {
    await expectLapsedHolderFencedOut({
      // A's lease is long, so it never extends during the test: the test makes it lapse by ageing its lock file.
      a: store({ lockTtlMs: 60_000 }),
      b: store({ lockTtlMs: 1_000, lockTimeoutMs: 5_000 }),
      take: locked,
      lapse: () => age(lockFile, 10_000),
      lockHeld: () => exists(lockFile),
    });
  });

  it('always writes an unfenced set() or clear(), and keeps the fence for later fenced writes', async () => {
    await expectUnfencedWritesLand({ a: store(), b: store(), take: (holder) => locked(holder) });
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
});
