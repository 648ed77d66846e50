// The account-record contract, run against every store that keeps an account's record, and the record it writes.
import type { AccountRecord } from '../../lib/index.js';
import type { LockRig } from './store-lock-contract.js';

/** An account's record as a holder writes it: a login pause another holder caused, a spent budget, a dead token. */
export function accountRecord(expiresInMs = 3_600_000): AccountRecord {
  const now = Date.now();
  const pause = { until: now + 60_000, rejections: 1, code: 'LOGIN_REJECTED', message: 'refused (HTTP 401).', by: 'a' };
  return {
    version: 1,
    haltsUntil: pause.until,
    loginPause: pause,
    refusals: {
      uncured: [['GET http://api.test/forbidden', now + 60_000]],
      general: false,
      uncuredRenewals: 0,
      until: 0,
    },
    spent: { login: [now - 1_000], refresh: [now - 2_000, now - 500] },
    cookieRefreshRefused: false,
    refusedRefresh: ['1x2y3z'],
    expiresAt: now + expiresInMs,
  };
}

/**
 * The account-record contract, run against every store that keeps the account's record: none at first; what one
 * holder writes, another reads; and, where the lock fences its holders, a holder whose lock was overtaken cannot
 * overwrite the record of a later one.
 */
export function testAccountRecord(name: string, { open, fences }: Pick<LockRig, 'open' | 'fences'>): void {
  describe(`${name}: the account's record`, () => {
    it('has none at first; what one holder writes, another reads, as it was written', async () => {
      const first = open();
      const second = open();
      expect(await first.getAccount?.()).toBeNull();
      const record = accountRecord();
      expect(await first.setAccount?.(record)).not.toBe(false);
      expect(await second.getAccount?.()).toEqual(record);
      const later = { ...record, haltsUntil: 0, loginPause: null, spent: { login: [], refresh: [Date.now()] } };
      expect(await second.setAccount?.(later)).not.toBe(false);
      expect(await first.getAccount?.()).toEqual(later);
    });

    if (fences === 'every grant') {
      it('refuses the write of a holder whose lock a later holder was granted since, and keeps the later record', async () => {
        const first = open();
        const second = open();
        const a = await first.lock!();
        await a.release();
        const b = await second.lock!();
        const kept = accountRecord();
        expect(await second.setAccount?.(kept, b.fence)).toBe(true);
        expect(await first.setAccount?.({ ...kept, loginPause: null }, a.fence)).toBe(false);
        await b.release();
        expect(await first.getAccount?.()).toEqual(kept);
      });
    }
  });
}
