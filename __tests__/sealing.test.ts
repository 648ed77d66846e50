// Tokens sealed at rest (lib/stores/sealing.ts), on the file store, where every byte it keeps can be read back: the
// checks of `encryption`, the cipher and its format, what a holder does with a pair it cannot open, the keys' rotation,
// the switch from clear, the user's own seal and unseal, and the secrets kept out of sight. The Redis stores, the fleets
// and the browser have files of their own (sealed-stores, sealed-fleet, browser).
import { copyFile, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { format, inspect } from 'node:util';
import { isTokenAuthError, TokenAuthError } from '../lib/index.js';
import type { TokenAuthEvents, TokenPair } from '../lib/index.js';
import { FileTokenStore } from '../lib/stores/file.js';
import type { FileTokenStoreOptions, StoreEncryption } from '../lib/stores/file.js';
import { checkEncryption } from '../lib/stores/sealing-options.js';
import { webCrypto } from '../lib/stores/web-crypto.js';
import { captureConsole, expectNoLeaks, filesUnder, secretsAtRest, spellingsOf } from './helpers/scan-secrets.js';
import type { Secret } from './helpers/scan-secrets.js';
import { rig, useNock } from './helpers/setup.js';
import { failureOf } from './helpers/settled.js';

useNock();

/** 32 bytes each, printable, so that a scan finds them as bytes as well as in Base64. */
const KEY_1 = { id: 'k1', secret: Buffer.from('sealing-key-one-0123456789abcdef').toString('base64') };
const KEY_2 = { id: 'k2', secret: Buffer.from('sealing-key-two-0123456789abcdef').toString('base64') };
const PAIR: TokenPair = {
  access: 'acc_0a1b2c3d4e5f60718293',
  refresh: 'ref_f0e1d2c3b4a5968778695a4b',
  expiresAt: 1_900_000_000_000,
};
const SEALED = /^v1\.(k[12])\.[A-Za-z0-9_-]{16}\.[A-Za-z0-9_-]+$/;

/** The keys' secrets in every spelling, and as the bytes they are. */
const KEY_SECRETS: Secret[] = [KEY_1, KEY_2].flatMap(({ id, secret }) => [
  ...spellingsOf(`secret of key ${id}`, secret),
  ...spellingsOf(`bytes of key ${id}`, Buffer.from(secret, 'base64').toString('latin1')),
]);

const tokensOf = (...pairs: TokenPair[]): Secret[] =>
  pairs.flatMap((pair, index) => [
    { name: `access token #${index + 1}`, value: pair.access },
    ...(pair.refresh ? [{ name: `refresh token #${index + 1}`, value: pair.refresh }] : []),
  ]);

let dir: string;
let path: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'token-keeper-sealing-'));
  path = join(dir, 'tokens.json');
});
afterEach(async () => {
  jest.restoreAllMocks();
  await rm(dir, { recursive: true, force: true });
});

function sealed(encryption: StoreEncryption, options: FileTokenStoreOptions = {}, at = path): FileTokenStore {
  return new FileTokenStore(at, { ...options, encryption });
}

/** The record in the token file, as another process would read it. */
async function recordIn(file = path): Promise<{ version: number; fence: number; pair: Record<string, unknown> }> {
  return JSON.parse(await readFile(file, 'utf8')) as { version: number; fence: number; pair: Record<string, unknown> };
}

describe('`encryption` is checked at construction', () => {
  const short = Buffer.alloc(16, 1).toString('base64');
  it.each<[string, unknown, RegExp]>([
    [
      'no keys and no functions',
      {},
      /`encryption` needs `keys`, a list of \{ id: 'k1', secret \}, or `seal` and `unseal`/,
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
  ])('refuses %s, naming `encryption` and what to fix, with no secret in the message', (_, encryption, message) => {
    let thrown: unknown;
    try {
      sealed(encryption as StoreEncryption);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(TypeError);
    expect((thrown as Error).message).toMatch(/^FileTokenStore: `encryption/);
    expect((thrown as Error).message).toMatch(message);
    expectNoLeaks(thrown, KEY_SECRETS);
  });

  it('takes a secret as Base64, as Base64url, or as bytes (a Buffer, a Uint8Array)', async () => {
    const bytes = Buffer.from(KEY_1.secret, 'base64');
    const writer = sealed({ keys: [{ id: 'k1', secret: bytes.toString('base64url') }] });
    await writer.set(PAIR);
    for (const secret of [KEY_1.secret, bytes, new Uint8Array(bytes)])
      expect(await sealed({ keys: [{ id: 'k1', secret }] }).get()).toEqual(PAIR);
  });

  it('takes a CryptoKey only for the browser store, and only an AES-GCM key of 256 bits that can do its job', async () => {
    const { subtle } = await webCrypto();
    const aes256 = await subtle.generateKey({ name: 'AES-GCM', length: 256 }, false, ['encrypt', 'decrypt']);
    const aes128 = await subtle.generateKey({ name: 'AES-GCM', length: 128 }, false, ['encrypt', 'decrypt']);
    const hmac = await subtle.generateKey({ name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
    const openOnly = await subtle.generateKey({ name: 'AES-GCM', length: 256 }, false, ['decrypt']);
    const check = (keys: unknown[]) => () => checkEncryption('BrowserTokenStore', { keys }, true);

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
      /`encryption\.keys\[0\]\.key` is for the browser store: here pass `secret`/,
    );
  });
});

describe('a sealed pair', () => {
  it('is all the file holds of the tokens: its expiry, fence and version beside it, in clear', async () => {
    const store = sealed({ keys: [KEY_1] });
    await store.set(PAIR, 7);
    await store.setAccount({ ...accountRecord(), refusedRefresh: ['fingerprint'] });

    const record = await recordIn();
    expect(record).toEqual({
      version: 1,
      fence: 7,
      // eslint-disable-next-line @typescript-eslint/no-unsafe-assignment -- jest types its asymmetric matchers as any
      pair: { sealed: expect.stringMatching(SEALED), expiresAt: PAIR.expiresAt },
    });
    expect(secretsAtRest(await filesUnder(dir), [...tokensOf(PAIR), ...KEY_SECRETS])).toEqual([]);
    expect(await sealed({ keys: [KEY_1] }).get()).toEqual(PAIR);
  });

  it('takes a fresh IV at every seal: the same pair sealed twice is two different texts', async () => {
    const store = sealed({ keys: [KEY_1] });
    await store.set(PAIR);
    const first = String((await recordIn()).pair.sealed);
    await store.set(PAIR);
    const second = String((await recordIn()).pair.sealed);

    expect(first.split('.')[2]).not.toBe(second.split('.')[2]);
    expect(first.split('.')[3]).not.toBe(second.split('.')[3]);
  });

  it('does not open once copied to another file, or to another account’s file: read as no pair, and reported', async () => {
    const store = sealed({ keys: [KEY_1] });
    await store.set(PAIR);
    const elsewhere = join(dir, 'other.json');
    await copyFile(path, elsewhere);
    const account = store.forAccount('tenant-1');
    await mkdir(join(dir, 'tokens.json.accounts'), { recursive: true });
    await copyFile(path, account.path);

    for (const holder of [sealed({ keys: [KEY_1] }, {}, elsewhere), account]) {
      const error = await failureOf(holder.get(), isTokenAuthError);
      expect(error.code).toBe('STORE_FAILED');
      expect(error.message).toBe(
        `The token file ${holder.path} holds a sealed pair that failed authentication with \`encryption.keys\` ` +
          '(tampered, corrupt, or copied from another place): it is read as no pair, and the next renewal logs in ' +
          'once and overwrites it sealed.',
      );
    }
    expect(await store.get()).toEqual(PAIR);
  });

  it.each([
    ['the IV', 2],
    ['the ciphertext', 3],
  ])('does not open with a byte of %s flipped: read as no pair, reported', async (_, part) => {
    await sealed({ keys: [KEY_1] }).set(PAIR);
    const record = await recordIn();
    const parts = String(record.pair.sealed).split('.');
    const bytes = Buffer.from(parts[part]!, 'base64url');
    bytes[bytes.length >> 1]! ^= 0x01;
    parts[part] = bytes.toString('base64url');
    await writeFile(path, JSON.stringify({ ...record, pair: { ...record.pair, sealed: parts.join('.') } }));

    expect((await failureOf(sealed({ keys: [KEY_1] }).get(), isTokenAuthError)).code).toBe('STORE_FAILED');
  });

  it('names a key this holder lacks: STORE_KEY_MISSING, naming `encryption.keys` and the key’s id, never a secret', async () => {
    await sealed({ keys: [KEY_2] }).set(PAIR);

    const missing = await failureOf(sealed({ keys: [KEY_1] }).get(), isTokenAuthError);
    const none = await failureOf(new FileTokenStore(path).get(), isTokenAuthError);

    expect(missing.code).toBe('STORE_KEY_MISSING');
    expect(missing.message).toMatch(
      new RegExp(
        `^The token file ${path} holds a pair sealed with key "k2", and \`encryption\\.keys\` lacks key "k2" here \\(it has "k1"\\): add it\\.`,
      ),
    );
    expect(none.code).toBe('STORE_KEY_MISSING');
    expect(none.message).toMatch(
      /holds a pair sealed with key "k2", and this store has no `encryption`: give it the `encryption\.keys` of the holders that wrote it, key "k2" among them/,
    );
    expectNoLeaks([missing, none], [...KEY_SECRETS, ...tokensOf(PAIR)]);
  });

  it('is kept for a named account with the store’s keys: its file sealed, bound to that file', async () => {
    const account = sealed({ keys: [KEY_1] }).forAccount('jane@example.com');
    await account.set(PAIR);

    expect((await recordIn(account.path)).pair).toEqual({
      // eslint-disable-next-line @typescript-eslint/no-unsafe-assignment -- jest types its asymmetric matchers as any
      sealed: expect.stringMatching(SEALED),
      expiresAt: PAIR.expiresAt,
    });
    expect(
      await sealed({ keys: [KEY_1] })
        .forAccount('jane@example.com')
        .get(),
    ).toEqual(PAIR);
    expect(
      (await failureOf(new FileTokenStore(path).forAccount('jane@example.com').get(), isTokenAuthError)).code,
    ).toBe('STORE_KEY_MISSING');
    expect(secretsAtRest(await filesUnder(dir), tokensOf(PAIR))).toEqual([]);
  });

  it('is opened once: reading the same record again, or what this holder wrote, decrypts nothing', async () => {
    const { subtle } = await webCrypto();
    const decrypt = jest.spyOn(subtle, 'decrypt');
    const writer = sealed({ keys: [KEY_1] });
    const reader = sealed({ keys: [KEY_1] });
    await writer.set(PAIR, 3);

    expect(await writer.get()).toEqual(PAIR);
    expect(decrypt).toHaveBeenCalledTimes(0);
    for (let read = 0; read < 3; read += 1) expect(await reader.get()).toEqual(PAIR);
    expect(decrypt).toHaveBeenCalledTimes(1);
    // A new record is a new text: opened once more.
    await writer.set({ ...PAIR, access: 'acc_second' }, 4);
    expect((await reader.get())?.access).toBe('acc_second');
    expect(decrypt).toHaveBeenCalledTimes(2);
  });
});

describe('keys rotate without a login', () => {
  it('[k1] → [k1, k2] → [k2, k1] → [k2]: every holder reads what any other wrote, and a pair is sealed again with the first key at its next write', async () => {
    const steps = [[KEY_1], [KEY_1, KEY_2], [KEY_2, KEY_1], [KEY_2]];
    const sealedWith = async () => SEALED.exec(String((await recordIn()).pair.sealed))?.[1];
    for (const [index, keys] of steps.entries()) {
      const writer = sealed({ keys });
      // Written by a holder of this step, read by the holders of the steps beside it, which run meanwhile.
      const pair = { ...PAIR, access: `acc_step_${index}` };
      await writer.set(pair);
      expect(await sealedWith()).toBe(keys[0]!.id);
      for (const neighbour of [steps[index - 1], steps[index + 1]].filter((each) => each !== undefined))
        expect(await sealed({ keys: neighbour }).get()).toEqual(pair);
    }
    // Two steps apart is not a rolling deploy: a holder of [k1] alone cannot open what [k2] sealed, and says so.
    expect((await failureOf(sealed({ keys: [KEY_1] }).get(), isTokenAuthError)).message).toMatch(
      /sealed with key "k2"/,
    );
  });
});

describe('the switch from clear', () => {
  it('reads a pair in clear with `acceptClear` and writes sealed; with `writeClear` too it writes in clear; without, a pair in clear is read as no pair, and reported', async () => {
    await new FileTokenStore(path).set(PAIR);

    expect(await sealed({ keys: [KEY_1], acceptClear: true, writeClear: true }).get()).toEqual(PAIR);
    await sealed({ keys: [KEY_1], acceptClear: true, writeClear: true }).set(PAIR);
    expect((await recordIn()).pair).toEqual(PAIR);
    expect(await new FileTokenStore(path).get()).toEqual(PAIR);

    const refused = await failureOf(sealed({ keys: [KEY_1] }).get(), isTokenAuthError);
    expect(refused.code).toBe('STORE_FAILED');
    expect(refused.message).toBe(
      `The token file ${path} holds a pair in clear, which \`encryption\` takes only with \`acceptClear\` (a step of ` +
        'the switch to sealing): it is read as no pair, and the next renewal logs in once and overwrites it sealed.',
    );

    await sealed({ keys: [KEY_1], acceptClear: true }).set(PAIR);
    expect((await recordIn()).pair.sealed).toMatch(SEALED);
    expect(await sealed({ keys: [KEY_1] }).get()).toEqual(PAIR);
  });
});

describe('`seal` and `unseal` of your own (a KMS)', () => {
  /** A stand-in KMS that keeps what it sealed, by context, and answers as the contract says. */
  function kms() {
    const kept = new Map<string, { context: string; plaintext: Uint8Array }>();
    const contexts: string[] = [];
    return {
      contexts,
      encryption: {
        seal: (plaintext: Uint8Array, context: string) => {
          contexts.push(context);
          const handle = `kms-${kept.size + 1}`;
          kept.set(handle, { context, plaintext: Uint8Array.from(plaintext) });
          return Promise.resolve(handle);
        },
        // Async, so that what it throws is a rejection, as a KMS client's would be.
        // eslint-disable-next-line @typescript-eslint/require-await
        unseal: async (handle: string, context: string) => {
          const entry = kept.get(handle);
          if (handle === 'kms-throttled') throw new Error('ThrottlingException');
          if (handle === 'kms-lost')
            throw new TokenAuthError('STORE_KEY_MISSING', `The KMS key of "${handle}" is not granted to this process.`);
          if (!entry || entry.context !== context)
            throw new TokenAuthError('STORE_FAILED', 'The KMS refused the sealed pair for this context.');
          return entry.plaintext;
        },
      } satisfies StoreEncryption,
    };
  }

  it('seals with `seal`, bound to the file’s path, and opens with `unseal`', async () => {
    const { encryption, contexts } = kms();
    await sealed(encryption).set(PAIR);

    expect((await recordIn()).pair).toEqual({ sealed: 'kms-1', expiresAt: PAIR.expiresAt });
    expect(contexts).toEqual([path]);
    expect(await sealed(encryption).get()).toEqual(PAIR);
    expect(secretsAtRest(await filesUnder(dir), tokensOf(PAIR))).toEqual([]);
  });

  it('passes on what `unseal` says: a key missing, a pair refused, or a failure of the service', async () => {
    const { encryption } = kms();
    const store = sealed(encryption);
    const planted = async (handle: string) =>
      writeFile(path, JSON.stringify({ version: 1, fence: 1, pair: { sealed: handle } }));

    await planted('kms-lost');
    expect(await failureOf(store.get(), isTokenAuthError)).toMatchObject({ code: 'STORE_KEY_MISSING' });
    await planted('kms-unknown');
    expect(await failureOf(store.get(), isTokenAuthError)).toMatchObject({ code: 'STORE_FAILED' });
    await planted('kms-throttled');
    await expect(store.get()).rejects.toThrow(/^`encryption\.unseal` failed/);
  });
});

describe('the keys stay out of sight', () => {
  it('in `util.inspect()`, `console.log()` and `JSON.stringify()` of the stores and their accounts’ stores, and of what they throw', async () => {
    const console = captureConsole();
    const store = sealed({ keys: [KEY_1, KEY_2] });
    const account = store.forAccount('tenant-7');
    await store.set(PAIR);
    await account.set(PAIR);
    // What a user's log would show of the store.
    globalThis.console.log(store, account);

    const views = [
      inspect(store, { showHidden: true, depth: Infinity }),
      inspect(account, { showHidden: true, depth: Infinity }),
      JSON.stringify(store),
      JSON.stringify(account),
      format(...console[0]!),
    ];
    const thrown = await Promise.all([
      failureOf(sealed({ keys: [{ id: 'k3', secret: KEY_2.secret }] }).get(), isTokenAuthError),
      failureOf(
        sealed({ keys: [KEY_1], acceptClear: true }, {}, join(dir, 'x.json'))
          .set(PAIR)
          .then(() => sealed({ keys: [KEY_2] }, {}, join(dir, 'x.json')).get()),
        isTokenAuthError,
      ),
    ]);
    expectNoLeaks({ views, thrown }, KEY_SECRETS);
  });

  it('in what the plugin reports and rejects with, while a holder lacks a key', async () => {
    await sealed({ keys: [KEY_2] }).set(PAIR);
    const { api, auth, service } = rig({ store: sealed({ keys: [KEY_1] }) });
    const events: unknown[] = [];
    for (const name of ['failure', 'login', 'refresh', 'load'] as const)
      auth.on(name, (payload: TokenAuthEvents[typeof name]) => events.push(payload));

    const results = await Promise.allSettled([api.get('/orders'), api.get('/orders'), auth.accessToken()]);

    expect(results.map((result) => result.status === 'rejected' && (result.reason as TokenAuthError).code)).toEqual([
      'STORE_KEY_MISSING',
      'STORE_KEY_MISSING',
      'STORE_KEY_MISSING',
    ]);
    expect(service.counters.loginCalls).toBe(0);
    expect(events).toHaveLength(1);
    const reasons: unknown[] = results.map((result) =>
      result.status === 'rejected' ? (result.reason as unknown) : undefined,
    );
    expectNoLeaks({ events, reasons }, [...KEY_SECRETS, ...tokensOf(PAIR)]);
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

/** An account's record, as a holder writes it: it stays in clear, holding no token. */
function accountRecord() {
  const now = Date.now();
  return {
    version: 1 as const,
    loginPause: null,
    refusals: { uncured: [], general: false, uncuredRenewals: 0, until: 0 },
    spent: { login: [now], refresh: [] },
    cookieRefreshRefused: false,
    refusedRefresh: [],
    expiresAt: now + 60_000,
  };
}
