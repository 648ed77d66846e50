// The Redis store's `encryption` on a real redis-server: the pair sealed in its key with its expiry, fence and TTL
// beside it, bound to its key (another prefix's or account's key does not open it), a byte flipped or a key missing
// said as the sealing-*.test.ts files say it for the file store, and the keys out of sight; `encryption` as it is or as
// `sealing()` made it. The fleets are in sealed-fleet.test.ts.
import { randomBytes, randomUUID } from 'node:crypto';
import { inspect } from 'node:util';
import { isTokenAuthError } from '../lib/index.js';
import type { TokenPair } from '../lib/index.js';
import { RedisTokenStore } from '../lib/stores/redis/index.js';
import type { Sealing, StoreEncryption } from '../lib/stores/redis/index.js';
import { sealing } from '../lib/stores/sealing/index.js';
import { redisForFile } from './helpers/redis.js';
import { expectNoLeaks, secretsAtRest, spellingsOf } from './helpers/scan-secrets.js';
import { failureOf } from './helpers/settled.js';

const { redis } = redisForFile();

const K1 = { id: 'k1', secret: randomBytes(32).toString('base64') };
const K2 = { id: 'k2', secret: randomBytes(32).toString('base64') };
const KEY_SECRETS = [K1, K2].flatMap(({ id, secret }) => spellingsOf(`secret of ${id}`, secret));
const PAIR: TokenPair = { access: 'acc_5e41ed0a77c3', refresh: 'ref_9d0c1b2a3f4e5d6c', expiresAt: 1_900_000_000_000 };
const TOKENS = [
  { name: 'access token', value: PAIR.access },
  { name: 'refresh token', value: PAIR.refresh! },
];

let prefix: string;
beforeEach(() => {
  prefix = `sealed-stores:${randomUUID()}`;
});

function store(encryption?: StoreEncryption | Sealing, at = prefix): RedisTokenStore {
  return new RedisTokenStore(redis(), { prefix: at, ...(encryption && { encryption }) });
}

it('keeps in the pair’s key the tokens sealed, with the fence, expiry and TTL beside them in clear; nothing of a token in any key of the prefix', async () => {
  const sealed = store({ keys: [K1] });
  const account = sealed.forAccount('jane@example.com');
  await sealed.set(PAIR, 4);
  await account.set(PAIR, 2);

  const record = JSON.parse((await redis().get(`{${prefix}}:pair`))!) as unknown;
  expect(record).toEqual({
    version: 1,
    fence: 4,
    // eslint-disable-next-line @typescript-eslint/no-unsafe-assignment -- jest types its asymmetric matchers as any
    pair: { sealed: expect.stringMatching(/^v1\.k1\.[A-Za-z0-9_-]{16}\.[A-Za-z0-9_-]+$/), expiresAt: PAIR.expiresAt },
  });
  expect(await redis().pttl(`{${prefix}}:pair`)).toBeGreaterThan(0);
  const keys = await redis().keys(`{${prefix}*`);
  expect(keys).toHaveLength(2);
  const places = await Promise.all(
    keys.map(async (key) => ({ where: key, bytes: (await redis().getBuffer(key)) ?? Buffer.alloc(0) })),
  );
  expect(secretsAtRest(places, TOKENS)).toEqual([]);
  expect(await store({ keys: [K2, K1] }).get()).toEqual(PAIR);
  expect(
    await store({ keys: [K1] })
      .forAccount('jane@example.com')
      .get(),
  ).toEqual(PAIR);
});

it('refuses a sealed pair moved to another prefix, or to another account’s key: read as no pair, and said', async () => {
  await store({ keys: [K1] }).set(PAIR);
  const sealedText = (await redis().get(`{${prefix}}:pair`))!;
  const otherPrefix = `sealed-stores:${randomUUID()}`;
  const other = store({ keys: [K1] }, otherPrefix);
  const account = store({ keys: [K1] }).forAccount('tenant-2');
  await redis().set(`{${otherPrefix}}:pair`, sealedText);
  await redis().set(`{${prefix}#tenant-2}#pair`, sealedText);

  for (const [holder, key] of [
    [other, `{${otherPrefix}}:pair`],
    [account, `{${prefix}#tenant-2}#pair`],
  ] as const) {
    const error = await failureOf(holder.get(), isTokenAuthError);
    expect(error.code).toBe('STORE_FAILED');
    expect(error.message).toContain(key);
    expect(error.message).toMatch(
      /holds a sealed pair that failed authentication with `encryption\.keys` \(tampered, corrupt, or copied from another place\): it is read as no pair/,
    );
  }
  expect(await store({ keys: [K1] }).get()).toEqual(PAIR);
});

it('says which key is missing, naming `encryption.keys`, and never a secret; a pair in clear is refused without `acceptClear`', async () => {
  await store({ keys: [K2] }).set(PAIR);
  const missing = await failureOf(store({ keys: [K1] }).get(), isTokenAuthError);
  expect(missing.code).toBe('STORE_KEY_MISSING');
  expect(missing.message).toMatch(
    /holds a pair sealed with key "k2", and `encryption\.keys` lacks key "k2" here \(it has "k1"\)/,
  );

  await store().set(PAIR);
  expect((await failureOf(store({ keys: [K1] }).get(), isTokenAuthError)).code).toBe('STORE_FAILED');
  expect(await store({ keys: [K1], acceptClear: true }).get()).toEqual(PAIR);
  expectNoLeaks(
    [missing, inspect(store({ keys: [K1, K2] }), { showHidden: true, depth: Infinity })],
    [...KEY_SECRETS, ...TOKENS],
  );
  expect(JSON.stringify(store({ keys: [K1, K2] }))).not.toContain(K1.secret);
});

it('takes `encryption` as it is or as `sealing()` made it: each reads what the other sealed; a CryptoKey is the browser store’s', async () => {
  await store(sealing({ keys: [K1] })).set(PAIR);
  const record = JSON.parse((await redis().get(`{${prefix}}:pair`))!) as { pair: { sealed?: string } };
  expect(record.pair.sealed).toMatch(/^v1\.k1\./);
  expect(await store({ keys: [K1] }).get()).toEqual(PAIR);
  await store({ keys: [K2, K1] }).set(PAIR);
  expect(await store(sealing({ keys: [K1, K2] })).get()).toEqual(PAIR);

  const key = await crypto.subtle.generateKey({ name: 'AES-GCM', length: 256 }, false, ['encrypt', 'decrypt']);
  expect(() => store(sealing({ keys: [{ id: 'tab-1', key }] }))).toThrow(
    /^RedisTokenStore: `encryption\.keys\[0\]\.key` is for the browser store: here pass `secret`, a Base64 string of 32 random bytes/,
  );
});
