// The account's record as a store holds it: a version-1 record whose `expiresAt` says until when it says anything, and
// whose halt (`haltsUntil`, a login pause) a store may announce. Its guards' fields are the plugin's, which checks them as it reads them back:
// a leaf, which the stores and the link to them share.
import type { AccountRecord } from '../../contract/store.js';

/**
 * The record halts the renewals that could only log in, now: what a store announces to the holders waiting for its
 * lock (`subscribeAccount`), where a message to every holder costs.
 */
export function pausesLogins(record: AccountRecord): boolean {
  const until = record.haltsUntil;
  return typeof until === 'number' && until > Date.now();
}

/**
 * The account's record in `data` (parsed JSON), or undefined for anything that is not one of version 1 (a store then
 * treats it as no record: the guards start afresh, for the record only holds a fleet back).
 */
export function accountRecordIn(data: unknown): AccountRecord | undefined {
  const record = data as { version?: unknown; expiresAt?: unknown; haltsUntil?: unknown } | null;
  if (record === null || typeof record !== 'object' || record.version !== 1) return undefined;
  if (typeof record.expiresAt !== 'number' || !Number.isFinite(record.expiresAt)) return undefined;
  if (record.haltsUntil !== undefined && typeof record.haltsUntil !== 'number') return undefined;
  return record as AccountRecord;
}

/** The account's record in `text` (JSON), or undefined: see {@link accountRecordIn}. */
export function parseAccountRecord(text: string | null | undefined): AccountRecord | undefined {
  if (!text) return undefined;
  try {
    return accountRecordIn(JSON.parse(text));
  } catch {
    return undefined;
  }
}
