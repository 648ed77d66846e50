// `dpop` and the places a pair lives: bad settings refused at attach, naming the option; a shared store that cannot
// keep the key refused rather than sending tokens no other holder can prove; `setTokens` taking the key the tokens are
// bound to; a sealed token file carrying the key to another holder, and no private member of it in clear; a service
// that answers a Bearer token refused clearly.
import { readFile } from 'node:fs/promises';
import axios from 'axios';
import nock from 'nock';
import { attachTokenAuth } from '../lib/index.js';
import { createDpopKey } from '../lib/dpop/index.js';
import { FileTokenStore } from '../lib/stores/file/index.js';
import { closeEmulatorsAfterEach, E2E_PASSWORD, E2E_USER, emulator } from './helpers/emulator.js';
import { fileStoreForFile } from './helpers/file-store.js';
import { KEY_1 } from './helpers/sealing.js';
import { failureOf } from './helpers/settled.js';

// The emulator over the loopback, which nock lets through; a service that does not bind, over nock.
beforeEach(() => {
  nock.enableNetConnect('127.0.0.1');
});
closeEmulatorsAfterEach();
const { file } = fileStoreForFile();
const credentials = { username: E2E_USER, password: E2E_PASSWORD };
const api = () => axios.create({ baseURL: 'https://api.test' });

describe('dpop at attach', () => {
  it.each([
    ['yes', /`dpop` must be true, false or \{ algorithm: 'ES256' \| 'EdDSA' \}, got the string "yes"/],
    [{ algorithm: 'RS256' }, /`dpop.algorithm` must be 'ES256' or 'EdDSA', got the string "RS256"/],
    [{ alg: 'ES256' }, /`dpop` takes \{ algorithm \} alone, got `alg`/],
  ])('refuses dpop: %j, naming it', (dpop, message) => {
    expect(() => attachTokenAuth(api(), { credentials, dpop } as never)).toThrow(message);
  });

  it('refuses `applyToken` beside it: the token goes on as DPoP, with its proof', () => {
    expect(() => attachTokenAuth(api(), { credentials, dpop: true, applyToken: () => undefined })).toThrow(
      /`dpop` puts the token on each request itself .*leave out `applyToken`/,
    );
  });

  it.each([
    ['without `encryption`', {}],
    ['with `writeClear`', { encryption: { keys: [KEY_1], acceptClear: true, writeClear: true } }],
  ])('refuses a token file %s, which would keep the private key in clear', (_label, options) => {
    const store = new FileTokenStore(file(), options);
    expect(() => attachTokenAuth(api(), { credentials, dpop: true, store })).toThrow(
      /`dpop` binds the tokens to a key the holders of the `store` must share, and this store keeps no key .*give the store `encryption` \(without `writeClear`\)/,
    );
  });

  it('refuses a store of its own that does not say it keeps keys', () => {
    const pairs = new Map<string, unknown>();
    const store = { get: () => null, set: (pair: unknown) => void pairs.set('pair', pair), clear: () => undefined };
    expect(() => attachTokenAuth(api(), { credentials, dpop: true, store })).toThrow(/its `dpopKeys` is undefined/);
  });
});

describe('dpop and the pair', () => {
  it('takes the key of tokens obtained elsewhere in setTokens, and refuses them without it', async () => {
    const auth = attachTokenAuth(api(), { credentials, dpop: true });
    await expect(auth.setTokens({ access: 'a', refresh: 'r' })).rejects.toThrow(
      /with `dpop`, pass the key the tokens are bound to as `dpopKey`/,
    );
    const dpopKey = await createDpopKey();
    await auth.setTokens({ access: 'a', refresh: 'r', dpopKey });
    expect((await auth.getTokens())!.dpopKey).toBe(dpopKey);
    const plain = attachTokenAuth(api(), { credentials });
    await expect(plain.setTokens({ access: 'a', dpopKey })).rejects.toThrow(/`dpop` is off: attach with `dpop: true`/);
  });

  it('shares the key through a sealed token file: a second holder proves the pair the first obtained, and the file holds no private member in clear', async () => {
    const service = await emulator({ dpop: true });
    const holder = () => {
      const instance = axios.create({ baseURL: service.url });
      const store = new FileTokenStore(file(), { encryption: { keys: [KEY_1] } });
      return { instance, auth: attachTokenAuth(instance, { credentials, dpop: true, store }) };
    };
    const first = holder();
    await first.instance.get('/orders');
    await first.auth.flush();
    const second = holder();
    await second.instance.get('/orders');
    service.expireAccessTokens();
    await Promise.all([first.instance.get('/orders'), second.instance.get('/orders')]);

    expect(service.counters).toMatchObject({ logins: 1, refreshes: 1, rejected: 0 });
    // Proofs: the login, a request each, the two refused for the expired token, the token call, the two replays.
    expect(service.dpopCounters).toEqual({ accepted: 8, nonce: 0, invalid: 0, wrongKey: 0 });
    expect(first.auth.stats()).toMatchObject({ logins: 1, replays: 1, failures: 0 });
    expect(second.auth.stats()).toMatchObject({ logins: 0, replays: 1, failures: 0 });
    const key = (await first.auth.getTokens())!.dpopKey!;
    expect((await second.auth.getTokens())!.dpopKey!.thumbprint).toBe(key.thumbprint);
    const { d } = await globalThis.crypto.subtle.exportKey('jwk', key.privateKey);
    const text = await readFile(file(), 'utf8');
    expect(text).not.toContain(d!);
    expect(text).not.toMatch(/"d"|privateKey|dpopKey/);
  });
});

describe('dpop and a service that does not bind', () => {
  it('refuses a token answered as Bearer: the service did not bind it to the key', async () => {
    nock('https://api.test')
      .post('/auth/api/v1/accounts/login')
      .reply(200, { access: 'a', refresh: 'r', token_type: 'Bearer' });
    const auth = attachTokenAuth(api(), { credentials, dpop: true });
    const error = await failureOf(auth.login());
    expect(error).toMatchObject({ code: 'TOKEN_RESPONSE_INVALID' });
    expect((error as Error).message).toMatch(/a token of type Bearer, not DPoP: .*leave out `dpop`/);
  });
});
