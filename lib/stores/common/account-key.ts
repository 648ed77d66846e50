// How an account's name goes into a key, a channel or a file name: one escaping, used by every store, so that no name,
// however hostile (`../x`, `{a}`, `a:`), can reach another account's keys or files. A leaf: nothing from Node, so that
// the browser store takes it too; the file store passes its hash in.
import { shown } from './options.js';

/** The characters an account's name keeps as they are; every other one is percent-encoded. */
const KEPT = /^[A-Za-z0-9_-]$/;

/**
 * `name` in `[A-Za-z0-9_-]` and `%XX`: every other character as the percent-encoding (upper-case hex) of its UTF-8
 * bytes, `%` itself included, so that two names never give one result (`a:` is `a%3A`, and `a%3A` is `a%253A`). The
 * result never holds `.`, `/`, `\`, `:`, `{`, `}`, `#`, `+`, `@` or a space, which the stores use to build their keys
 * and file names around it. A lone surrogate (a string cut within an emoji) goes as the three bytes of its own code
 * point (WTF-8), which no character's UTF-8 is, rather than as U+FFFD, which would give it another name's result.
 *
 * @example
 * escapeAccountName('jane@example.com'); // 'jane%40example%2Ecom'
 */
export function escapeAccountName(name: string): string {
  let escaped = '';
  // By code point: an emoji is one character of four bytes, not two surrogates of three.
  for (const character of name) {
    if (KEPT.test(character)) escaped += character;
    else
      for (const byte of utf8(character.codePointAt(0)!))
        escaped += `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return escaped;
}

/** The UTF-8 bytes of a code point; a surrogate's as if it were a character (WTF-8). */
function utf8(point: number): number[] {
  if (point < 0x80) return [point];
  if (point < 0x800) return [0xc0 | (point >> 6), 0x80 | (point & 0x3f)];
  if (point < 0x10000) return [0xe0 | (point >> 12), 0x80 | ((point >> 6) & 0x3f), 0x80 | (point & 0x3f)];
  return [0xf0 | (point >> 18), 0x80 | ((point >> 12) & 0x3f), 0x80 | ((point >> 6) & 0x3f), 0x80 | (point & 0x3f)];
}

/**
 * The longest account part of a file name. The files of an account add at most 54 characters to it (`.json.account.`,
 * a UUID and `.tmp`, for the record's temporary file), and a file name may have 255 bytes.
 */
export const ACCOUNT_FILE_NAME_LIMIT = 128;

/** Between the kept beginning of a long name and its hash: a character the escaping never gives. */
const HASHED = '+';

/** Names Windows keeps for devices, whatever follows the first dot: `con.json` cannot be created there. */
const WINDOWS_DEVICE = /^(con|prn|aux|nul|com[0-9]|lpt[0-9])$/i;

/**
 * The account part of a file name: the escaped name as it is, when it is at most {@link ACCOUNT_FILE_NAME_LIMIT}
 * characters, holds no capital letter of the name, and is no Windows device name. Otherwise its beginning, `+` (which
 * the escaping never gives, so no short name can take this form) and the SHA-256 (in hex) of the whole escaped name:
 * names that differ only past the limit get two files, and so do `Alice` and `alice` where the file system ignores
 * case (macOS, Windows), since the hex is in lower case and an escape's in upper case.
 *
 * @param sha256Hex The SHA-256 of a string, in lower-case hex: the file store passes Node's.
 */
export function accountFileName(name: string, sha256Hex: (text: string) => string): string {
  const escaped = escapeAccountName(name);
  const capitals = /[A-Z]/.test(escaped.replace(/%[0-9A-F]{2}/g, ''));
  if (escaped.length <= ACCOUNT_FILE_NAME_LIMIT && !capitals && !WINDOWS_DEVICE.test(escaped)) return escaped;
  let kept = escaped.slice(0, ACCOUNT_FILE_NAME_LIMIT - HASHED.length - 64);
  // Not cut within an escape, so that what is kept reads as the name's beginning.
  const escape = kept.lastIndexOf('%');
  if (escape !== -1 && escape > kept.length - 3) kept = kept.slice(0, escape);
  return `${kept}${HASHED}${sha256Hex(escaped)}`;
}

/** Refuses, naming the store, a name that is no account's: the plugin checks its names; this is for direct callers. */
export function checkAccountName(store: string, name: unknown): asserts name is string {
  if (typeof name !== 'string' || name === '') {
    throw new TypeError(
      `${store}.forAccount: the account's name must be a non-empty string, such as a tenant id; got ${shown(name)}.`,
    );
  }
}

/**
 * Refuses, naming the store and its option, a `key` or `prefix` that holds `#` when it is to keep named accounts: `#`
 * separates an account's name in the store's entries or keys, so that `a#b` with the account `c`, and `a` with the
 * account `b` of its account `c`, would share them.
 *
 * @param places What the store names with it, as the message says: `'entries'`, `'keys'`.
 */
export function checkAccountsRoot(store: string, option: string, value: string, places: 'entries' | 'keys'): void {
  if (value.includes('#')) {
    throw new TypeError(
      `${store}: \`${option}\` ${shown(value)} holds \`#\`, which separates an account's name in its ${places}, so ` +
        `that two accounts could share ${places}: give the store a ${option} without \`#\` to keep named accounts in it.`,
    );
  }
}
