// The FileTokenStore's named accounts on a real file system: the contracts per account
// (helpers/store-accounts-contract.ts), and where the accounts' files are: under tokens.json.accounts/, each under its
// escaped name, cut and followed by its SHA-256 past 128 characters, the directory watched once for all listeners.
import fs from 'node:fs';
import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { fileStoreForFile, leaseAt } from './helpers/file-store.js';
import { until } from './helpers/flow.js';
import {
  accountRecord as accountRecordOf,
  HOSTILE_NAMES,
  PAIR_A,
  testStoreAccounts,
} from './helpers/store-contract.js';

const { dir, file, store, listen, accountFile } = fileStoreForFile();

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

    expect(await readdir(dir())).toEqual(['tokens.json.accounts']);
    const escaped = 'tenant%3A%7B42%7D%2F%2E%2E%2Fa%2Elock';
    expect((await readdir(`${file()}.accounts`)).sort()).toEqual(
      [`${escaped}.json`, `${escaped}.json.account`, `${escaped}.json.fence`].sort(),
    );
    expect((await stat(`${file()}.accounts`)).mode & 0o777).toBe(0o700);
    expect((await stat(join(`${file()}.accounts`, `${escaped}.json`))).mode & 0o777).toBe(0o600);
    expect(await store().get()).toBeNull();
  });

  it('keeps every hostile name’s files inside the accounts’ directory, one token file each', async () => {
    for (const name of HOSTILE_NAMES) await store().forAccount(name).set({ access: name });

    expect(await readdir(dir())).toEqual(['tokens.json.accounts']);
    const files = await readdir(`${file()}.accounts`);
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

    const files = await readdir(`${file()}.accounts`);
    expect(files).toHaveLength(3);
    for (const name of files) expect(name.length).toBeLessThanOrEqual(128 + '.json'.length);
  });

  it('watches the accounts’ directory once for all their listeners, and stops with the last listener', async () => {
    const watch = jest.spyOn(fs, 'watch');
    try {
      const parent = store();
      const listeners = ['alice', 'bob', 'carol', 'alice'].map((name) => listen(parent.forAccount(name)));
      const watches = watch.mock.results.map((result) => result.value as fs.FSWatcher);
      expect(watch.mock.calls.map(([path]) => path)).toEqual([`${file()}.accounts`]);

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
