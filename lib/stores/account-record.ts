// The check of the account's record as a store hands it back (parsed JSON, or what a custom store kept): a leaf, which
// the stores and the link to them share.
import type { AccountRecord, LoginPause, RefusalMemory, TokenStore } from '../contract/store.js';

/**
 * Whether the holders of `store` share the account's record: a store the user gave (the default memory store has no
 * other holder) with both `getAccount` and `setAccount`. Decided once, at attach.
 */
export function keepsAccount(store: TokenStore | undefined): boolean {
  return typeof store?.getAccount === 'function' && typeof store.setAccount === 'function';
}

/**
 * The record pauses logins now: what a store announces to the holders waiting for its lock (`subscribeAccount`), where
 * a message to every holder costs.
 */
export function pausesLogins(record: AccountRecord): boolean {
  return record.loginPause !== null && record.loginPause.until > Date.now();
}

const isNumber = (value: unknown): value is number => typeof value === 'number' && Number.isFinite(value);
const isNumbers = (value: unknown): value is number[] => Array.isArray(value) && value.every(isNumber);

/**
 * The account's record in `data` (parsed JSON), checked field by field; undefined for anything else, which a store
 * then treats as no record (the guards start afresh) rather than as an error: the record only holds a fleet back.
 */
export function accountRecordIn(data: unknown): AccountRecord | undefined {
  const record = data as Partial<Record<keyof AccountRecord, unknown>> | null;
  if (record === null || typeof record !== 'object' || record.version !== 1 || !isNumber(record.expiresAt)) return;
  const pause = record.loginPause as Partial<Record<keyof LoginPause, unknown>> | null | undefined;
  const pauseOk =
    pause === null ||
    (typeof pause === 'object' &&
      pause !== undefined &&
      isNumber(pause.until) &&
      isNumber(pause.rejections) &&
      typeof pause.code === 'string' &&
      typeof pause.message === 'string' &&
      (pause.status === undefined || isNumber(pause.status)) &&
      (pause.by === undefined || typeof pause.by === 'string'));
  const refusals = record.refusals as Partial<Record<keyof RefusalMemory, unknown>> | null | undefined;
  const refusalsOk =
    typeof refusals === 'object' &&
    refusals !== null &&
    Array.isArray(refusals.uncured) &&
    refusals.uncured.every(
      (entry: unknown) => Array.isArray(entry) && typeof entry[0] === 'string' && isNumber(entry[1]),
    ) &&
    (refusals.refusedOn === undefined || typeof refusals.refusedOn === 'string') &&
    typeof refusals.general === 'boolean' &&
    isNumber(refusals.uncuredRenewals) &&
    isNumber(refusals.until);
  const spent = record.spent as Partial<Record<'login' | 'refresh', unknown>> | null | undefined;
  const spentOk = typeof spent === 'object' && spent !== null && isNumbers(spent.login) && isNumbers(spent.refresh);
  const refusedOk =
    Array.isArray(record.refusedRefresh) && record.refusedRefresh.every((print) => typeof print === 'string');
  const signedOutOk = record.signedOut === undefined || isNumber(record.signedOut);
  if (
    !pauseOk ||
    !refusalsOk ||
    !spentOk ||
    !refusedOk ||
    !signedOutOk ||
    typeof record.cookieRefreshRefused !== 'boolean'
  )
    return;
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
