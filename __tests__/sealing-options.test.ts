// Tokens sealed at rest (lib/stores/sealing/): the checks of `encryption`, by `sealing()` and by the file store given
// the option as it is, which name what to fix and never a secret, the forms a key's secret takes, a CryptoKey for the
// browser store alone, and WebCrypto found where Node 18 keeps it. What each store makes of `sealing()`: sealing-entry.
// The rest of sealing: sealing-pairs, -rotation, -kms and -keys-hidden.
import type { StoreEncryption } from '../lib/stores/file/index.js';
import { sealing } from '../lib/stores/sealing/index.js';
import { webCrypto } from '../lib/support/web-crypto.js';
import { expectNoLeaks } from './helpers/scan-secrets.js';
import { KEY_1, KEY_2, KEY_SECRETS, PAIR, sealingFolderForFile } from './helpers/sealing.js';

const { sealed } = sealingFolderForFile();

describe('`encryption` is checked by `sealing()`, and by a Node store given it as it is', () => {
  const short = Buffer.alloc(16, 1).toString('base64');
  /** Who checks: the message starts with its name. */
  const checkers: Array<[string, RegExp, (encryption: unknown) => unknown]> = [
    ['sealing()', /^sealing\(\): `encryption/, (encryption) => sealing(encryption as StoreEncryption)],
    ['FileTokenStore', /^FileTokenStore: `encryption/, (encryption) => sealed(encryption as StoreEncryption)],
  ];
  const cases: Array<[string, unknown, RegExp]> = [
    [
      'no keys and no functions',
      {},
      /`encryption` needs `keys`, a list of \{ id: 'k1', secret \}.*, or `seal` and `unseal`/,
    ],
    ['an empty list', { keys: [] }, /`encryption\.keys` must list at least one key, .*; got an empty list/],
    ['not an object', 'k1', /`encryption` must be an object, such as \{ keys: \[/],
    [
      'a secret of 16 bytes',
      { keys: [{ id: 'k1', secret: short }] },
      /`encryption\.keys\[0\]\.secret` must be 32 bytes once decoded, a Base64 string of 32 random bytes, such as `openssl rand -base64 32` prints, or a Uint8Array of 32 bytes; got 16 bytes/,
    ],
    [
      'a secret of 31 bytes as bytes',
      { keys: [KEY_1, { id: 'k2', secret: new Uint8Array(31) }] },
      /`encryption\.keys\[1\]\.secret` must be 32 bytes, .*; got 31 bytes/,
    ],
    [
      'a secret that is not Base64',
      { keys: [{ id: 'k1', secret: 'not base64 at all!' }] },
      /`encryption\.keys\[0\]\.secret` is not Base64/,
    ],
    [
      'a secret that is a number',
      { keys: [{ id: 'k1', secret: 42 }] },
      /`encryption\.keys\[0\]\.secret` must be .*; got a number/,
    ],
    [
      'an empty id',
      { keys: [{ id: '', secret: KEY_1.secret }] },
      /`encryption\.keys\[0\]\.id` must be a non-empty string, such as 'k1'; got ""/,
    ],
    [
      'an id with a dot',
      { keys: [{ id: 'k.1', secret: KEY_1.secret }] },
      /`encryption\.keys\[0\]\.id` "k\.1" may hold letters, digits, `_` and `-` only/,
    ],
    [
      'an id listed twice',
      { keys: [KEY_1, { ...KEY_2, id: 'k1' }] },
      /`encryption\.keys\[1\]\.id` "k1" is listed twice/,
    ],
    [
      'keys and functions',
      { keys: [KEY_1], seal: () => Promise.resolve('x'), unseal: () => Promise.resolve(new Uint8Array()) },
      /takes `keys`, or `seal` and `unseal`, not both/,
    ],
    [
      'seal without unseal',
      { seal: () => Promise.resolve('x') },
      /needs both `seal\(plaintext, context\)` and `unseal\(sealed, context\)`/,
    ],
    [
      'writeClear without acceptClear',
      { keys: [KEY_1], writeClear: true },
      /`encryption\.writeClear` needs `encryption\.acceptClear: true`/,
    ],
    ['an unknown field', { keys: [KEY_1], rotate: true }, /`encryption` has an unknown field `rotate`/],
    [
      'a key with an unknown field',
      { keys: [{ ...KEY_1, algorithm: 'AES' }] },
      /`encryption\.keys\[0\]` has an unknown field `algorithm`/,
    ],
  ];
  it.each(
    checkers.flatMap(([who, start, check]) =>
      cases.map(([what, encryption, message]) => ({ who, what, start, check, encryption, message })),
    ),
  )(
    '$who refuses $what, naming `encryption` and what to fix, with no secret in the message',
    ({ start, check, encryption, message }) => {
      let thrown: unknown;
      try {
        check(encryption);
      } catch (error) {
        thrown = error;
      }
      expect(thrown).toBeInstanceOf(TypeError);
      expect((thrown as Error).message).toMatch(start);
      expect((thrown as Error).message).toMatch(message);
      expectNoLeaks(thrown, KEY_SECRETS);
    },
  );

  it('takes a secret as Base64, as Base64url, or as bytes (a Buffer, a Uint8Array)', async () => {
    const bytes = Buffer.from(KEY_1.secret, 'base64');
    const writer = sealed({ keys: [{ id: 'k1', secret: bytes.toString('base64url') }] });
    await writer.set(PAIR);
    for (const secret of [KEY_1.secret, bytes, new Uint8Array(bytes)]) {
      expect(await sealed({ keys: [{ id: 'k1', secret }] }).get()).toEqual(PAIR);
      expect(await sealed(sealing({ keys: [{ id: 'k1', secret }] })).get()).toEqual(PAIR);
    }
  });

  it('takes a CryptoKey only for the browser store, and only an AES-GCM key of 256 bits that can do its job', async () => {
    const { subtle } = await webCrypto();
    const aes256 = await subtle.generateKey({ name: 'AES-GCM', length: 256 }, false, ['encrypt', 'decrypt']);
    const aes128 = await subtle.generateKey({ name: 'AES-GCM', length: 128 }, false, ['encrypt', 'decrypt']);
    const hmac = await subtle.generateKey({ name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
    const openOnly = await subtle.generateKey({ name: 'AES-GCM', length: 256 }, false, ['decrypt']);
    const check = (keys: unknown[]) => () => sealing({ keys } as StoreEncryption);

    expect(check([{ id: 'k1', key: aes256 }])).not.toThrow();
    expect(check([{ id: 'k1', key: aes256 }, { id: 'k0', key: openOnly }, KEY_2])).not.toThrow();
    expect(check([{ id: 'k1', key: aes128 }])).toThrow(
      /`encryption\.keys\[0\]\.key` must be an AES-GCM key of 256 bits, .*; got AES-GCM key of 128 bits/,
    );
    expect(check([{ id: 'k1', key: hmac }])).toThrow(/must be an AES-GCM key of 256 bits.*got HMAC key/);
    expect(check([{ id: 'k1', key: openOnly }])).toThrow(
      /`encryption\.keys\[0\]\.key` lacks the usage "encrypt" that the first key, which seals, needs/,
    );
    expect(check([{ id: 'k1', key: 'a key' }])).toThrow(
      /`encryption\.keys\[0\]\.key` must be a CryptoKey; got a string/,
    );
    expect(check([{ id: 'k1', key: aes256, secret: KEY_1.secret }])).toThrow(/takes `secret` or `key`, not both/);
    expect(() => sealed({ keys: [{ id: 'k1', key: aes256 }] } as never)).toThrow(
      /^FileTokenStore: `encryption\.keys\[0\]\.key` is for the browser store: here pass `secret`/,
    );
    // What `sealing()` checked, which takes a CryptoKey for the browser store, the file store refuses the same way.
    expect(() => sealed(sealing({ keys: [KEY_2, { id: 'k1', key: aes256 }] }))).toThrow(
      /^FileTokenStore: `encryption\.keys\[1\]\.key` is for the browser store: here pass `secret`/,
    );
  });
});

it('finds WebCrypto where Node 18 keeps it (node:crypto’s `webcrypto`) when there is no `globalThis.crypto`', async () => {
  const descriptor = Object.getOwnPropertyDescriptor(globalThis, 'crypto');
  Object.defineProperty(globalThis, 'crypto', { value: undefined, configurable: true, writable: true });
  try {
    expect(typeof (await webCrypto()).subtle.encrypt).toBe('function');
    await sealed({ keys: [KEY_1] }).set(PAIR);
    expect(await sealed({ keys: [KEY_1] }).get()).toEqual(PAIR);
  } finally {
    if (descriptor) Object.defineProperty(globalThis, 'crypto', descriptor);
    else delete (globalThis as { crypto?: unknown }).crypto;
  }
});
