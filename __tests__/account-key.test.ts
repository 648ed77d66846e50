// The one escaping of account names (lib/stores/common/account-key.ts), which every store builds its keys and file names
// from: hostile names stay inside their account, two names never share a result, and a file name stays short.
import { createHash } from 'node:crypto';
import fc from 'fast-check';
import {
  ACCOUNT_FILE_NAME_LIMIT,
  accountFileName,
  checkAccountName,
  escapeAccountName,
} from '../lib/stores/common/account-key.js';
import { SEPARATOR_NAMES } from './helpers/store-contract.js';

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
const fileName = (name: string) => accountFileName(name, sha256);

/** The escaping undone, bytes read back as WTF-8 (a lone surrogate too): proof that no two names share a result. */
function unescape(escaped: string): string {
  const bytes: number[] = [];
  for (let i = 0; i < escaped.length; i += 1) {
    if (escaped[i] === '%') {
      bytes.push(parseInt(escaped.slice(i + 1, i + 3), 16));
      i += 2;
    } else bytes.push(escaped.charCodeAt(i));
  }
  let name = '';
  for (let i = 0; i < bytes.length;) {
    const first = bytes[i]!;
    const length = first < 0x80 ? 1 : first < 0xe0 ? 2 : first < 0xf0 ? 3 : 4;
    let point = length === 1 ? first : first & (0xff >> (length + 1));
    for (let k = 1; k < length; k += 1) point = (point << 6) | (bytes[i + k]! & 0x3f);
    name += String.fromCodePoint(point);
    i += length;
  }
  return name;
}

const HOSTILE = [
  ...SEPARATOR_NAMES,
  ' ',
  'a b',
  'tenant:42',
  '{tokens}:pair',
  'a\\b',
  'jane@example.com',
  'ünïcødé',
  '🙂',
  '租户',
  '\uD83D',
  '\uFFFD',
  '\u0000',
  'x'.repeat(256),
];

describe('escapeAccountName', () => {
  it.each(HOSTILE.map((name) => [JSON.stringify(name).slice(0, 40), name]))(
    'escapes %s into [A-Za-z0-9_-] and %%XX only, and back',
    (_shown, name) => {
      const escaped = escapeAccountName(name);
      expect(escaped).toMatch(/^([A-Za-z0-9_-]|%[0-9A-F]{2})+$/);
      expect(escaped).not.toMatch(/[.:/\\{}#+@ ]/);
      expect(unescape(escaped)).toBe(name);
    },
  );

  it('keeps letters, digits, `_` and `-`, and encodes everything else, `%` and `.` included, as UTF-8', () => {
    expect(escapeAccountName('Tenant_42-eu')).toBe('Tenant_42-eu');
    expect(escapeAccountName('a:')).toBe('a%3A');
    expect(escapeAccountName('a%3A')).toBe('a%253A');
    expect(escapeAccountName('..')).toBe('%2E%2E');
    expect(escapeAccountName('../x')).toBe('%2E%2E%2Fx');
    expect(escapeAccountName('{a}')).toBe('%7Ba%7D');
    expect(escapeAccountName('# ~')).toBe('%23%20%7E');
    expect(escapeAccountName('é')).toBe('%C3%A9');
    expect(escapeAccountName('🙂')).toBe('%F0%9F%99%82');
  });

  it('gives distinct results for names that look alike once encoded', () => {
    const names = ['a:', 'a%3A', 'a%253A', 'a.lock', 'a%2Elock', '\uD83D', '\uFFFD', 'é', 'e\u0301', 'A', 'a'];
    expect(new Set(names.map(escapeAccountName)).size).toBe(names.length);
  });

  it('a property: any two strings, lone surrogates included, have distinct results (it can be undone)', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 64 }), (name) => {
        expect(unescape(escapeAccountName(name))).toBe(name);
      }),
      { numRuns: 2_000 },
    );
  });
});

describe('accountFileName', () => {
  it('is the escaped name for a short name in lower case', () => {
    expect(fileName('tenant-42')).toBe('tenant-42');
    expect(fileName('../x')).toBe('%2E%2E%2Fx');
    expect(fileName('a.lock')).toBe('a%2Elock');
  });

  it('hashes a long name, past ACCOUNT_FILE_NAME_LIMIT characters, keeping its beginning', () => {
    const long = 'x'.repeat(256);
    const name = fileName(long);
    expect(name).toHaveLength(ACCOUNT_FILE_NAME_LIMIT);
    expect(name).toBe(`${'x'.repeat(ACCOUNT_FILE_NAME_LIMIT - 65)}+${sha256(long)}`);
  });

  it('gives names that differ only past the limit two files', () => {
    const head = 'tenant-'.repeat(30);
    expect(fileName(`${head}a`)).not.toBe(fileName(`${head}b`));
    expect(fileName(`${head}a`).startsWith('tenant-tenant-')).toBe(true);
  });

  it('never cuts within an escape, and stays within the limit for 256 characters of any width', () => {
    for (const name of [
      'é'.repeat(256),
      '🙂'.repeat(128),
      `a${'é'.repeat(255)}`,
      `ab${':'.repeat(254)}`,
      '\uD83D'.repeat(256),
    ]) {
      const file = fileName(name);
      expect(file.length).toBeLessThanOrEqual(ACCOUNT_FILE_NAME_LIMIT);
      expect(file).toMatch(/^([A-Za-z0-9_-]|%[0-9A-F]{2})*\+[0-9a-f]{64}$/);
    }
  });

  it('keeps apart names that a file system ignoring case would merge (macOS, Windows)', () => {
    const names = ['alice', 'Alice', 'ALICE', 'é', 'É', '%c3%a9'];
    const files = names.map(fileName);
    expect(new Set(files.map((file) => file.toLowerCase())).size).toBe(names.length);
    expect(files[0]).toBe('alice');
    expect(files[1]).toMatch(/^Alice\+[0-9a-f]{64}$/);
  });

  it('hashes the names Windows keeps for devices', () => {
    for (const name of ['con', 'nul', 'com1', 'lpt9', 'aux', 'prn'])
      expect(fileName(name)).toMatch(/^[a-z0-9]+\+[0-9a-f]{64}$/);
    expect(fileName('console')).toBe('console');
  });

  it('a property: two names never share a file name, even with case ignored', () => {
    fc.assert(
      fc.property(
        fc.string({ unit: 'binary', maxLength: 40 }),
        fc.string({ unit: 'binary', maxLength: 40 }),
        (a, b) => {
          fc.pre(a !== b);
          expect(fileName(a).toLowerCase()).not.toBe(fileName(b).toLowerCase());
        },
      ),
      { numRuns: 2_000 },
    );
  });
});

describe('checkAccountName', () => {
  it.each([[''], [undefined], [42]])('refuses %p, naming the store', (name) => {
    expect(() => checkAccountName('FileTokenStore', name)).toThrow(
      /^FileTokenStore\.forAccount: the account's name must be a non-empty string/,
    );
  });
});
