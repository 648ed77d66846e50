// What the tests of tokens sealed at rest on the file store (sealing-*.test.ts) share: two keys and a pair, the keys'
// secrets and the tokens in every spelling a scan looks for, and a folder of its own for each test, where the token
// file is and every byte it keeps can be read back.
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TokenPair } from '../../lib/index.js';
import { FileTokenStore } from '../../lib/stores/file/index.js';
import type { FileTokenStoreOptions, Sealing, StoreEncryption } from '../../lib/stores/file/index.js';
import { spellingsOf } from './scan-secrets.js';
import type { Secret } from './scan-secrets.js';

/** 32 bytes each, printable, so that a scan finds them as bytes as well as in Base64. */
export const KEY_1 = { id: 'k1', secret: Buffer.from('sealing-key-one-0123456789abcdef').toString('base64') };
export const KEY_2 = { id: 'k2', secret: Buffer.from('sealing-key-two-0123456789abcdef').toString('base64') };
export const PAIR: TokenPair = {
  access: 'acc_0a1b2c3d4e5f60718293',
  refresh: 'ref_f0e1d2c3b4a5968778695a4b',
  expiresAt: 1_900_000_000_000,
};
/** A sealed pair as the file keeps it: the format's version, the key's id, the IV and the ciphertext. */
export const SEALED = /^v1\.(k[12])\.[A-Za-z0-9_-]{16}\.[A-Za-z0-9_-]+$/;

/** The keys' secrets in every spelling, and as the bytes they are. */
export const KEY_SECRETS: Secret[] = [KEY_1, KEY_2].flatMap(({ id, secret }) => [
  ...spellingsOf(`secret of key ${id}`, secret),
  ...spellingsOf(`bytes of key ${id}`, Buffer.from(secret, 'base64').toString('latin1')),
]);

/** The tokens of `pairs`, for the leak checks. */
export const tokensOf = (...pairs: TokenPair[]): Secret[] =>
  pairs.flatMap((pair, index) => [
    { name: `access token #${index + 1}`, value: pair.access },
    ...(pair.refresh ? [{ name: `refresh token #${index + 1}`, value: pair.refresh }] : []),
  ]);

/** What a test file of sealing uses; `dir` and `path` as the running test sees them. */
export interface SealingFile {
  /** The running test's folder. */
  dir: () => string;
  /** The token file in it. */
  path: () => string;
  /** A file store with `encryption` (as it is, or as `sealing()` made it), on the test's token file unless told. */
  sealed: (encryption: StoreEncryption | Sealing, options?: FileTokenStoreOptions, at?: string) => FileTokenStore;
  /** The record in the token file, as another process would read it. */
  recordIn: (file?: string) => Promise<{ version: number; fence: number; pair: Record<string, unknown> }>;
}

/** A folder of its own for each test of the file that calls this, removed after it, and the mocks restored. */
export function sealingFolderForFile(): SealingFile {
  let dir: string;
  let path: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'token-keeper-sealing-'));
    path = join(dir, 'tokens.json');
  });
  afterEach(async () => {
    jest.restoreAllMocks();
    await rm(dir, { recursive: true, force: true });
  });
  return {
    dir: () => dir,
    path: () => path,
    sealed: (encryption, options = {}, at = path) => new FileTokenStore(at, { ...options, encryption }),
    recordIn: async (file = path) =>
      JSON.parse(await readFile(file, 'utf8')) as { version: number; fence: number; pair: Record<string, unknown> },
  };
}
