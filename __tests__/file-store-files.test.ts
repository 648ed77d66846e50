// The FileTokenStore's files on a real file system: the token file it reads and writes (mode 0600, its directories
// made, no temporary file left), a file that is not its own, which it reports rather than overwrites, what a killed
// writer leaves, and the options it refuses.
import { chmod, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { FileTokenStore } from '../lib/stores/file/index.js';
import type { FileTokenStoreOptions } from '../lib/stores/file/index.js';
import { age, exists, fileStoreForFile } from './helpers/file-store.js';
import { expectRoundTrip, PAIR_A, PAIR_B, PAIR_C, STALE } from './helpers/store-contract.js';

const { dir, file, store } = fileStoreForFile();

describe('FileTokenStore: reading and writing', () => {
  it('get() is null while there is no file', async () => {
    expect(await store().get()).toBeNull();
    expect(await exists(file())).toBe(false);
  });

  it('gives back the pair set, and null after clear()', async () => {
    await expectRoundTrip(() => store());
  });

  it('creates the parent directories and writes the file with mode 0600, leaving no temporary file', async () => {
    const deep = join(dir(), 'a', 'b', 'tokens.json');
    const tokens = store({}, deep);

    await tokens.set(PAIR_A);
    await tokens.set(PAIR_B);
    await tokens.clear();
    const lock = await tokens.lock();
    await tokens.set(PAIR_C, lock.fence);
    await lock.release();

    expect(await tokens.get()).toEqual(PAIR_C);
    expect((await stat(deep)).mode & 0o777).toBe(0o600);
    const names = await readdir(join(dir(), 'a', 'b'));
    expect(names).toContain('tokens.json');
    expect(names.filter((name) => name.endsWith('.tmp') || name.endsWith('.lock'))).toEqual([]);
  });

  it('puts a file that others could read back to mode 0600 on the next write', async () => {
    const tokens = store();
    await tokens.set(PAIR_A);
    await chmod(file(), 0o644);

    await tokens.set(PAIR_B);

    expect((await stat(file())).mode & 0o777).toBe(0o600);
    expect((await readdir(dir())).filter((name) => name.endsWith('.tmp'))).toEqual([]);
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
      await writeFile(file(), content);
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
        expect(error?.message).toContain(file());
        expect(error?.message).toContain('point the store elsewhere or delete it');
      }
      expect(await readFile(file(), 'utf8')).toBe(content);
      expect(await readdir(dir())).toEqual(['tokens.json']);
    });
  });
});

describe('FileTokenStore: what a killed writer leaves', () => {
  it('removes, when the lock is taken, temporary files older than a lease, which hold tokens; a fresh one stays', async () => {
    await store().set(PAIR_A);
    const leftover = `${file()}.killed-writer.tmp`;
    const inFlight = `${file()}.live-writer.tmp`;
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
    expect(() => new FileTokenStore(file(), { watch: 'false' as unknown as boolean })).toThrow(
      '`watch` must be true or false; got "false".',
    );
  });

  it('refuses null options with a TypeError that says what options are', () => {
    expect(() => new FileTokenStore(file(), null as unknown as FileTokenStoreOptions)).toThrow(
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
    expect(() => new FileTokenStore(file(), options as FileTokenStoreOptions)).toThrow(TypeError);
    expect(() => new FileTokenStore(file(), options as FileTokenStoreOptions)).toThrow(`\`${name}\``);
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
      () => new FileTokenStore(file(), { lockTtlMs: 1_000, lockTimeoutMs: 1, pollMs: 1, watch: false }),
    ).not.toThrow();
  });
});
