/**
 * {@link FileTokenStore}: one token pair shared by the processes of one host. Node only.
 *
 * @module axios-token-keeper/file-store
 */
import { createHash } from 'node:crypto';
import { mkdir, readFile } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import type {
  AccountRecord,
  TokenPair,
  TokenStore,
  TokenStoreLock,
  TokenStoreLockRequest,
} from '../../contract/store.js';
import { parseAccountRecord } from '../common/account-record.js';
import { isPair, parseRecord } from '../common/record.js';
import { Announcer } from '../common/announcer.js';
import { accountFileName, checkAccountName } from '../common/account-key.js';
import { DirectoryWatch } from './directory-watch.js';
import { FileLock } from './lock.js';
import { LEASE_DEFAULTS } from '../common/lease.js';
import type { LeaseOptions } from '../common/lease.js';
import { checkStoreOptions, shown } from '../common/options.js';
import type { OptionNames } from '../common/options.js';
import { SealedRecords } from '../sealing/records.js';
import { sealerOf } from '../sealing/platform.js';
import type { Sealing } from '../sealing/index.js';
import type { StoreEncryption } from '../sealing/options.js';
import { ignoreMissing, readRecord, replaceFile } from './writes.js';

/** The lock's lease options, which this store's options extend. */
export type { LeaseOptions } from '../common/lease.js';

/** The `encryption` option: its keys, or the functions of your KMS, and the switch from clear; or `sealing()`'s. */
export type { SealingFunctions, SealingSecret, SealingSwitch, StoreEncryption } from '../sealing/options.js';
export type { Sealing } from '../sealing/index.js';

/** Options of {@link FileTokenStore}. */
export interface FileTokenStoreOptions extends LeaseOptions {
  /**
   * How often a waiting process looks at the lock again; it also looks when the token file changes.
   * @default 25
   */
  pollMs?: number;
  /**
   * Notice, through `fs.watch`, the pairs other processes write, so this one switches to them before its own token
   * is refused. Turn it off on file systems where `fs.watch` does not work (some network mounts).
   * @default true
   */
  watch?: boolean;
  /**
   * Seal the tokens in the file: `keys`, each `{ id, secret }` with 32 random bytes (`openssl rand -base64 32`), the
   * first sealing and every one opening (AES-256-GCM, bound to the file's path); or `seal` and `unseal` of your KMS.
   * The named accounts' files are sealed with them too. Or what `sealing()` (axios-token-keeper/sealing) made of them,
   * as the browser store takes it. See docs/stores.md, "Tokens sealed at rest".
   * @default none: the pair is kept in clear
   */
  encryption?: StoreEncryption | Sealing;
}

const FILE_DEFAULTS = { ...LEASE_DEFAULTS, pollMs: 25, watch: true } satisfies Required<
  Omit<FileTokenStoreOptions, 'encryption'>
>;

const FILE_OPTIONS: OptionNames<FileTokenStoreOptions> = {
  lockTtlMs: true,
  lockTimeoutMs: true,
  pollMs: true,
  watch: true,
  encryption: true,
};

/**
 * Keeps the pair in one JSON file (mode 0600) that the processes of a host share: cluster workers, cron jobs, CLI
 * runs. One process renews at a time under a lock file next to it, and the others take its pair without calling the
 * service; a process that starts while a valid pair is on disk makes no login. Node only.
 *
 * Beside `tokens.json` live `tokens.json.lock` (while a process holds the lock) and `tokens.json.fence` (the number of
 * the last lock granted). The fence refuses the writes of a holder whose lease lapsed (a paused process); as a file
 * system has no atomic compare-and-rename, that holds for a pause before the write starts, not within it. The named
 * accounts' files are in `tokens.json.accounts/` (see {@link FileTokenStore.forAccount}).
 *
 * @example
 * import { FileTokenStore } from 'axios-token-keeper/file-store';
 * attachTokenAuth(api, { credentials, store: new FileTokenStore('/var/lib/my-app/tokens.json') });
 */
export class FileTokenStore implements TokenStore {
  /** The token file, as an absolute path. */
  readonly path: string;
  private readonly accountPath: string;
  private readonly options: Required<Omit<FileTokenStoreOptions, 'encryption'>>;
  private readonly announcer = new Announcer();
  /** The lock file, its lease, and the fence it grants. */
  private readonly fileLock: FileLock;
  /** The watch of the token file's directory: this store's own, or the one its parent's accounts share. */
  private directoryWatch: DirectoryWatch;
  /** Ends this store's listening to that watch; set while it has listeners. */
  private unwatch: (() => void) | undefined;
  /** The watch of `tokens.json.accounts/`, made for the first account that listens, shared by every account. */
  private accountsWatch: DirectoryWatch | undefined;
  /** The pair's records, sealed with `encryption` (or in clear): private, so that nothing prints the keys. */
  #records: SealedRecords<TokenPair>;

  /**
   * @param path The token file. Its directory is created (mode 0700) when missing; keep it where only this
   * service's user can read, since the file holds the refresh token.
   * @param options Lease, lock wait, polling and watching; every one has a default.
   * @throws TypeError when `path` is empty or an option is unknown or out of range; when `encryption` is not an object
   * of `keys` (at least one, each an id and a secret of 32 bytes, ids not repeated) or of `seal` and `unseal`, naming
   * what to fix, or is what `sealing()` made of a CryptoKey, which only the browser store takes.
   */
  constructor(path: string, options: FileTokenStoreOptions = {}) {
    if (typeof path !== 'string' || path === '') {
      throw new TypeError(
        'FileTokenStore: the first argument must be the path of the token file, such as "/var/lib/my-app/tokens.json".',
      );
    }
    checkStoreOptions('FileTokenStore', options, FILE_OPTIONS);
    if (options.watch !== undefined && typeof options.watch !== 'boolean') {
      throw new TypeError(`FileTokenStore: \`watch\` must be true or false; got ${shown(options.watch)}.`);
    }
    this.path = resolve(path);
    this.accountPath = `${this.path}.account`;
    const { encryption, ...timings } = options;
    // Named one by one: `encryption` holds secrets, which the store keeps only in its sealing's private fields.
    this.options = { ...FILE_DEFAULTS, ...timings };
    this.fileLock = new FileLock(this.path, this.options);
    this.directoryWatch = new DirectoryWatch(dirname(this.path));
    this.#records = new SealedRecords<TokenPair>(
      sealerOf('FileTokenStore', encryption),
      this.path,
      `The token file ${this.path}`,
      isPair,
    );
  }

  /**
   * The store of account `name`, with the same options: its token file, lock, fence and record are
   * `tokens.json.accounts/<name>.json`, `.json.lock`, `.json.fence` and `.json.account`, locked on their own. The name
   * is escaped (see `escapeAccountName`): letters, digits, `_` and `-` as they are, anything else as `%XX`, so that no
   * name holds a `.` or a `/` and reaches another account's files or leaves the directory; past 128 characters, with a
   * capital letter, or for a Windows device name, it is cut and followed by `+` and its SHA-256. The directory is
   * created (mode 0700) at the first write. The accounts share one watch of it; this store keeps none of them.
   *
   * @example
   * const store = new FileTokenStore('/var/lib/my-app/tokens.json');
   * store.forAccount('tenant-42'); // /var/lib/my-app/tokens.json.accounts/tenant-42.json
   */
  forAccount(name: string): FileTokenStore {
    checkAccountName('FileTokenStore', name);
    const directory = `${this.path}.accounts`;
    const store = new FileTokenStore(join(directory, `${accountFileName(name, sha256Hex)}.json`), this.options);
    store.directoryWatch = this.accountsWatch ??= new DirectoryWatch(directory);
    store.#records = this.#records.at(store.path, `The token file ${store.path}`);
    return store;
  }

  /**
   * The stored pair, or null; rejects, naming the file, when the file is not a token file of this package. With
   * `encryption`, rejects with a `TokenAuthError`: `STORE_KEY_MISSING` for a pair sealed with a key it lacks,
   * `STORE_FAILED` for one that fails authentication (or is in clear without `acceptClear`), which the plugin reads as
   * no pair.
   */
  /** With `encryption` (not `writeClear`), a pair's DPoP key goes into the sealed record; without it, none is kept. */
  get dpopKeys(): 'sealed' | undefined {
    return this.#records.keepsDpopKeys ? 'sealed' : undefined;
  }

  async get(): Promise<TokenPair | null> {
    const record = await readRecord(this.path);
    return record ? this.#records.open(record) : null;
  }

  /** Writes the pair (sealed, with `encryption`); false, without writing, when `fence` is older than the last lock granted. */
  async set(pair: TokenPair, fence?: number): Promise<boolean> {
    return this.write(pair, fence);
  }

  /** Drops the pair (the file stays, with its fence); false, without writing, as for `set`. */
  async clear(fence?: number): Promise<boolean> {
    return this.write(null, fence);
  }

  /**
   * The account's record, kept in `tokens.json.account` beside the pair, which every process sharing the file
   * consults; null when there is none or it is not one.
   */
  async getAccount(): Promise<AccountRecord | null> {
    return parseAccountRecord(await readFile(this.accountPath, 'utf8').catch(ignoreMissing)) ?? null;
  }

  /** Writes the account's record; false, without writing, when `fence` is older than the last lock granted. */
  async setAccount(record: AccountRecord, fence?: number): Promise<boolean> {
    const fenced = async (): Promise<boolean> =>
      fence !== undefined && fence < (await this.fileLock.latestFence((await readRecord(this.path))?.fence ?? 0));
    if (await fenced()) return false;
    await mkdir(dirname(this.path), { recursive: true, mode: 0o700 });
    // Not synced: a record lost in a crash costs a pause or a budget window, not the account's tokens.
    return replaceFile(this.accountPath, JSON.stringify(record), false, fenced);
  }

  /** Waits for the lock file, at most `lockTimeoutMs`, and holds it, extending its lease, until `release()`. */
  lock(request?: TokenStoreLockRequest): Promise<TokenStoreLock> {
    return this.fileLock.take(request);
  }

  subscribe(listener: (pair: TokenPair | null) => void): () => void {
    return this.watchFor(this.announcer.add(listener));
  }

  /** Calls `listener` when the account's record (`tokens.json.account`) is written, by any process. */
  subscribeAccount(listener: () => void): () => void {
    return this.watchFor(this.announcer.addAccount(listener));
  }

  /** Watches the files (with `watch`) for a listener just added, until `remove`, which the answer calls. */
  private watchFor(remove: () => void): () => void {
    if (this.options.watch) {
      const [file, account] = [basename(this.path), basename(this.accountPath)];
      this.unwatch ??= this.directoryWatch.on([file, basename(this.fileLock.lockPath), account], (name) => {
        if (name === file) void this.onFileEvent();
        else if (name === account) this.announcer.announceAccount();
        else this.fileLock.wake();
      });
      // A watch that failed is tried again.
      this.directoryWatch.start();
    }
    return () => {
      remove();
      if (this.announcer.size > 0) return;
      this.unwatch?.();
      this.unwatch = undefined;
    };
  }

  private async write(pair: TokenPair | null, fence: number | undefined): Promise<boolean> {
    // Reads the record first in any case: a file that is not ours is reported, never overwritten.
    const current = await readRecord(this.path);
    // A holder whose lease lapsed, after a later lock was granted: the later holder's pair stays.
    const fenced = async (): Promise<boolean> =>
      fence !== undefined && fence < (await this.fileLock.latestFence(current?.fence ?? 0));
    if (await fenced()) return false;
    const text = await this.#records.toJson(fence ?? current?.fence ?? 0, pair);
    await mkdir(dirname(this.path), { recursive: true, mode: 0o700 });
    // Looked at again just before the rename, after the slow part (the sync), to keep the window small.
    const written = await replaceFile(this.path, text, true, fenced);
    if (written) this.announcer.announce(text, pair);
    return written;
  }

  private async onFileEvent(): Promise<void> {
    this.fileLock.wake();
    const text = await readFile(this.path, 'utf8').catch(() => undefined);
    if (text === undefined) return;
    this.announcer.announceRead(text, () => this.#records.open(parseRecord(text, this.path)));
  }
}

function sha256Hex(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}
