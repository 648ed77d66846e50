// A pair sealed at rest on the file store, where every byte it keeps can be read back: all the file holds of the
// tokens, a fresh IV at every seal, bound to its file (copied elsewhere or flipped, it does not open), a key this
// holder lacks named, an account's file sealed too, and each record opened once.
import { copyFile, mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { isTokenAuthError } from '../lib/index.js';
import { FileTokenStore } from '../lib/stores/file/index.js';
import { webCrypto } from '../lib/support/web-crypto.js';
import { expectNoLeaks, filesUnder, secretsAtRest } from './helpers/scan-secrets.js';
import { KEY_1, KEY_2, KEY_SECRETS, PAIR, SEALED, sealingFolderForFile, tokensOf } from './helpers/sealing.js';
import { failureOf } from './helpers/settled.js';

const { dir, path, sealed, recordIn } = sealingFolderForFile();

describe('a sealed pair', () => {
  it('is all the file holds of the tokens: its expiry, fence and version beside it, in clear', async () => {
    const store = sealed({ keys: [KEY_1] });
    await store.set(PAIR, 7);
    await store.setAccount({ ...accountRecord(), refusedRefresh: ['fingerprint'] });

    const record = await recordIn();
    expect(record).toEqual({
      version: 1,
      fence: 7,
      // eslint-disable-next-line @typescript-eslint/no-unsafe-assignment -- jest types its asymmetric matchers as any
      pair: { sealed: expect.stringMatching(SEALED), expiresAt: PAIR.expiresAt },
    });
    expect(secretsAtRest(await filesUnder(dir()), [...tokensOf(PAIR), ...KEY_SECRETS])).toEqual([]);
    expect(await sealed({ keys: [KEY_1] }).get()).toEqual(PAIR);
  });

  it('takes a fresh IV at every seal: the same pair sealed twice is two different texts', async () => {
    const store = sealed({ keys: [KEY_1] });
    await store.set(PAIR);
    const first = String((await recordIn()).pair.sealed);
    await store.set(PAIR);
    const second = String((await recordIn()).pair.sealed);

    expect(first.split('.')[2]).not.toBe(second.split('.')[2]);
    expect(first.split('.')[3]).not.toBe(second.split('.')[3]);
  });

  it('does not open once copied to another file, or to another account’s file: read as no pair, and reported', async () => {
    const store = sealed({ keys: [KEY_1] });
    await store.set(PAIR);
    const elsewhere = join(dir(), 'other.json');
    await copyFile(path(), elsewhere);
    const account = store.forAccount('tenant-1');
    await mkdir(join(dir(), 'tokens.json.accounts'), { recursive: true });
    await copyFile(path(), account.path);

    for (const holder of [sealed({ keys: [KEY_1] }, {}, elsewhere), account]) {
      const error = await failureOf(holder.get(), isTokenAuthError);
      expect(error.code).toBe('STORE_FAILED');
      expect(error.message).toBe(
        `The token file ${holder.path} holds a sealed pair that failed authentication with \`encryption.keys\` ` +
          '(tampered, corrupt, or copied from another place): it is read as no pair, and the next renewal logs in ' +
          'once and overwrites it sealed.',
      );
    }
    expect(await store.get()).toEqual(PAIR);
  });

  it.each([
    ['the IV', 2],
    ['the ciphertext', 3],
  ])('does not open with a byte of %s flipped: read as no pair, reported', async (_, part) => {
    await sealed({ keys: [KEY_1] }).set(PAIR);
    const record = await recordIn();
    const parts = String(record.pair.sealed).split('.');
    const bytes = Buffer.from(parts[part]!, 'base64url');
    bytes[bytes.length >> 1]! ^= 0x01;
    parts[part] = bytes.toString('base64url');
    await writeFile(path(), JSON.stringify({ ...record, pair: { ...record.pair, sealed: parts.join('.') } }));

    expect((await failureOf(sealed({ keys: [KEY_1] }).get(), isTokenAuthError)).code).toBe('STORE_FAILED');
  });

  it('names a key this holder lacks: STORE_KEY_MISSING, naming `encryption.keys` and the key’s id, never a secret', async () => {
    await sealed({ keys: [KEY_2] }).set(PAIR);

    const missing = await failureOf(sealed({ keys: [KEY_1] }).get(), isTokenAuthError);
    const none = await failureOf(new FileTokenStore(path()).get(), isTokenAuthError);

    expect(missing.code).toBe('STORE_KEY_MISSING');
    expect(missing.message).toMatch(
      new RegExp(
        `^The token file ${path()} holds a pair sealed with key "k2", and \`encryption\\.keys\` lacks key "k2" here \\(it has "k1"\\): add it\\.`,
      ),
    );
    expect(none.code).toBe('STORE_KEY_MISSING');
    expect(none.message).toMatch(
      /holds a pair sealed with key "k2", and this store has no `encryption`: give it the `encryption\.keys` of the holders that wrote it, key "k2" among them/,
    );
    expectNoLeaks([missing, none], [...KEY_SECRETS, ...tokensOf(PAIR)]);
  });

  it('is kept for a named account with the store’s keys: its file sealed, bound to that file', async () => {
    const account = sealed({ keys: [KEY_1] }).forAccount('jane@example.com');
    await account.set(PAIR);

    expect((await recordIn(account.path)).pair).toEqual({
      // eslint-disable-next-line @typescript-eslint/no-unsafe-assignment -- jest types its asymmetric matchers as any
      sealed: expect.stringMatching(SEALED),
      expiresAt: PAIR.expiresAt,
    });
    expect(
      await sealed({ keys: [KEY_1] })
        .forAccount('jane@example.com')
        .get(),
    ).toEqual(PAIR);
    expect(
      (await failureOf(new FileTokenStore(path()).forAccount('jane@example.com').get(), isTokenAuthError)).code,
    ).toBe('STORE_KEY_MISSING');
    expect(secretsAtRest(await filesUnder(dir()), tokensOf(PAIR))).toEqual([]);
  });

  it('is opened once: reading the same record again, or what this holder wrote, decrypts nothing', async () => {
    const { subtle } = await webCrypto();
    const decrypt = jest.spyOn(subtle, 'decrypt');
    const writer = sealed({ keys: [KEY_1] });
    const reader = sealed({ keys: [KEY_1] });
    await writer.set(PAIR, 3);

    expect(await writer.get()).toEqual(PAIR);
    expect(decrypt).toHaveBeenCalledTimes(0);
    for (let read = 0; read < 3; read += 1) expect(await reader.get()).toEqual(PAIR);
    expect(decrypt).toHaveBeenCalledTimes(1);
    // A new record is a new text: opened once more.
    await writer.set({ ...PAIR, access: 'acc_second' }, 4);
    expect((await reader.get())?.access).toBe('acc_second');
    expect(decrypt).toHaveBeenCalledTimes(2);
  });
});

/** An account's record, as a holder writes it: it stays in clear, holding no token. */
function accountRecord() {
  const now = Date.now();
  return {
    version: 1 as const,
    loginPause: null,
    refusals: { uncured: [], general: false, uncuredRenewals: 0, until: 0 },
    spent: { login: [now], refresh: [] },
    cookieRefreshRefused: false,
    refusedRefresh: [],
    expiresAt: now + 60_000,
  };
}
