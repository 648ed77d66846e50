// What the FileTokenStore's test files (file-store-*.test.ts) share: a folder of its own for each test on the real
// file system, with the token file and its lock file in it; stores on that path, as the processes of a host would
// have; and the lease of a lock file, as the lock contract sees it.
import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, readFile, rm, stat, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { accountFileName } from '../../lib/stores/common/account-key.js';
import { FileTokenStore } from '../../lib/stores/file/index.js';
import type { FileTokenStoreOptions } from '../../lib/stores/file/index.js';
import { undoAfterEach } from './flow.js';
import { undoable } from './store-contract.js';
import type { LeaseRig } from './store-contract.js';

/** Whether there is a file or directory at `path`. */
export async function exists(path: string): Promise<boolean> {
  return stat(path).then(
    () => true,
    () => false,
  );
}

/** Sets a file's mtime into the past: its holder stopped extending it that long ago. */
export async function age(path: string, ms: number): Promise<void> {
  const past = new Date(Date.now() - ms);
  await utimes(path, past, past);
}

/** The lease of the lock file that `lockOf()` names, as the lock contract sees it. */
export function leaseAt(lockOf: () => string): LeaseRig {
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

/** What a test file of the FileTokenStore uses; `dir`, `file` and `lockFile` as the running test sees them. */
export interface FileStoreFile {
  /** The running test's folder. */
  dir: () => string;
  /** The token file in it. */
  file: () => string;
  /** The token file's lock file. */
  lockFile: () => string;
  /** Locks, subscriptions, plugin handles and the test's folder: undone after it, even when it fails half-way. */
  undo: Array<() => unknown>;
  /** A store on the test's token file, unless told another path. */
  store: (options?: FileTokenStoreOptions, path?: string) => FileTokenStore;
  listen: ReturnType<typeof undoable>['listen'];
  /** Where a named account's token file is, as FileTokenStore.forAccount documents it. */
  accountFile: (name: string) => string;
}

/** A folder of its own for each test of the file that calls this (at its top level), removed after the test. */
export function fileStoreForFile(): FileStoreFile {
  let dir: string;
  let file: string;
  let lockFile: string;
  const undo = undoAfterEach();
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'token-keeper-file-store-'));
    const made = dir;
    undo.push(() => rm(made, { recursive: true, force: true }));
    file = join(dir, 'tokens.json');
    lockFile = `${file}.lock`;
  });
  const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
  return {
    dir: () => dir,
    file: () => file,
    lockFile: () => lockFile,
    undo,
    store: (options = {}, path = file) => new FileTokenStore(path, options),
    listen: undoable(() => undo).listen,
    accountFile: (name) => join(`${file}.accounts`, `${accountFileName(name, sha256)}.json`),
  };
}
