// How the file store reads and writes its files: whole files or nothing, through a temporary file and a rename, the
// temporary files of writers killed mid-write swept away, and the token file's record read back. Node only.
import { randomUUID } from 'node:crypto';
import { open, readdir, readFile, rename, stat, unlink } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { parseRecord } from '../common/record.js';
import type { FencedPair, StoredPair } from '../common/record.js';

/**
 * Writes `text` to `path` through a temporary file and a rename, so that a reader sees the old content or the new,
 * never half. `durable` syncs it first: the pair must survive a crash, a fence can be granted again. Nothing is
 * written when `refuse` says so at the last moment; resolves to whether it was written.
 */
export async function replaceFile(
  path: string,
  text: string,
  durable: boolean,
  refuse?: () => Promise<boolean>,
): Promise<boolean> {
  const temporary = `${path}.${randomUUID()}.tmp`;
  try {
    const handle = await open(temporary, 'wx', 0o600);
    try {
      await handle.writeFile(text);
      if (durable) await handle.sync();
    } finally {
      await handle.close();
    }
    if (await refuse?.()) {
      await unlink(temporary);
      return false;
    }
    await rename(temporary, path);
    return true;
  } catch (error) {
    await unlink(temporary).catch(ignoreMissing);
    throw error;
  }
}

/** Removes the temporary files beside `path` older than `ageMs`: writers killed between write and rename left them. */
export async function sweepTemporaries(path: string, ageMs: number): Promise<void> {
  const prefix = `${basename(path)}.`;
  const names = await readdir(dirname(path)).catch(() => []);
  for (const name of names.filter((entry) => entry.startsWith(prefix) && entry.endsWith('.tmp'))) {
    const file = join(dirname(path), name);
    const info = await stat(file).catch(() => undefined);
    if (info && Date.now() - info.mtimeMs > ageMs) await unlink(file).catch(() => undefined);
  }
}

/** The record of the token file at `path`, or null when there is none; throws, naming the file, for one not ours. */
export async function readRecord(path: string): Promise<FencedPair<StoredPair> | null> {
  const text = await readFile(path, 'utf8').catch(ignoreMissing);
  return text === undefined ? null : parseRecord(text, `The token file ${path}`);
}

export function hasErrorCode(error: unknown, code: string): boolean {
  return (error as NodeJS.ErrnoException | null)?.code === code;
}

/** For `.catch()`: a file that is not there is `undefined`; any other error goes on. */
export function ignoreMissing(error: unknown): undefined {
  if (hasErrorCode(error, 'ENOENT')) return undefined;
  throw error;
}
