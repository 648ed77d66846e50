// `seal` and `unseal` of the user's own (a KMS) on the file store: the pair sealed by `seal`, bound to the file's path,
// opened by `unseal`, and what `unseal` says (a key missing, a pair refused, a failure of the service) passed on.
import { writeFile } from 'node:fs/promises';
import { isTokenAuthError, TokenAuthError } from '../lib/index.js';
import type { StoreEncryption } from '../lib/stores/file/index.js';
import { filesUnder, secretsAtRest } from './helpers/scan-secrets.js';
import { PAIR, sealingFolderForFile, tokensOf } from './helpers/sealing.js';
import { failureOf } from './helpers/settled.js';

const { dir, path, sealed, recordIn } = sealingFolderForFile();

describe('`seal` and `unseal` of your own (a KMS)', () => {
  /** A stand-in KMS that keeps what it sealed, by context, and answers as the contract says. */
  function kms() {
    const kept = new Map<string, { context: string; plaintext: Uint8Array }>();
    const contexts: string[] = [];
    return {
      contexts,
      encryption: {
        seal: (plaintext: Uint8Array, context: string) => {
          contexts.push(context);
          const handle = `kms-${kept.size + 1}`;
          kept.set(handle, { context, plaintext: Uint8Array.from(plaintext) });
          return Promise.resolve(handle);
        },
        // Async, so that what it throws is a rejection, as a KMS client's would be.
        // eslint-disable-next-line @typescript-eslint/require-await
        unseal: async (handle: string, context: string) => {
          const entry = kept.get(handle);
          if (handle === 'kms-throttled') throw new Error('ThrottlingException');
          if (handle === 'kms-lost')
            throw new TokenAuthError('STORE_KEY_MISSING', `The KMS key of "${handle}" is not granted to this process.`);
          if (!entry || entry.context !== context)
            throw new TokenAuthError('STORE_FAILED', 'The KMS refused the sealed pair for this context.');
          return entry.plaintext;
        },
      } satisfies StoreEncryption,
    };
  }

  it('seals with `seal`, bound to the file’s path, and opens with `unseal`', async () => {
    const { encryption, contexts } = kms();
    await sealed(encryption).set(PAIR);

    expect((await recordIn()).pair).toEqual({ sealed: 'kms-1', expiresAt: PAIR.expiresAt });
    expect(contexts).toEqual([path()]);
    expect(await sealed(encryption).get()).toEqual(PAIR);
    expect(secretsAtRest(await filesUnder(dir()), tokensOf(PAIR))).toEqual([]);
  });

  it('passes on what `unseal` says: a key missing, a pair refused, or a failure of the service', async () => {
    const { encryption } = kms();
    const store = sealed(encryption);
    const planted = async (handle: string) =>
      writeFile(path(), JSON.stringify({ version: 1, fence: 1, pair: { sealed: handle } }));

    await planted('kms-lost');
    expect(await failureOf(store.get(), isTokenAuthError)).toMatchObject({ code: 'STORE_KEY_MISSING' });
    await planted('kms-unknown');
    expect(await failureOf(store.get(), isTokenAuthError)).toMatchObject({ code: 'STORE_FAILED' });
    await planted('kms-throttled');
    await expect(store.get()).rejects.toThrow(/^`encryption\.unseal` failed/);
  });
});
