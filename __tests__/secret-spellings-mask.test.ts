// Mask, the library's one way to mask a secret, over secrets drawn from the whole of Unicode (the characters that
// encodings change weighted in): every spelling a transport gives a secret, in any text around it, becomes
// [REDACTED], and text without one is left alone. SPELLING_RUNS=2000 npx jest secret-spellings for a longer run.
import fc from 'fast-check';
import { Mask } from '../lib/support/redact.js';
import { pairSpellings, spellingsOf } from './helpers/scan-secrets.js';
import { anyChar, RUNS, secretOf, USER } from './helpers/spelling-cases.js';

it('Mask: every spelling of a secret, in any text around it, becomes [REDACTED]; text without one is left alone', () => {
  fc.assert(
    fc.property(secretOf(anyChar), fc.string(), fc.string(), (secret, before, after) => {
      const mask = new Mask([secret, `${USER}:${secret}`]);
      for (const { name, value } of [...spellingsOf('secret', secret), ...pairSpellings('pair', USER, secret)]) {
        const masked = mask.text(`${before}${value}${after}`);
        expect({ name, leaked: masked.includes(value) }).toEqual({ name, leaked: false });
        expect(masked).toContain('[REDACTED]');
      }
      expect(mask.text(`${before}|${after}`)).toBe(`${before}|${after}`);
    }),
    { numRuns: RUNS },
  );
});
