// The sealing keys stay out of sight: in what a log shows of what `sealing()` made, of the file stores and their
// accounts' stores and of what they throw, and in what the plugin reports and rejects with while a holder lacks a key.
import { join } from 'node:path';
import { format, inspect } from 'node:util';
import { isTokenAuthError } from '../lib/index.js';
import { sealing } from '../lib/stores/sealing/index.js';
import type { TokenAuthError, TokenAuthEvents } from '../lib/index.js';
import { captureConsole, expectNoLeaks } from './helpers/scan-secrets.js';
import { KEY_1, KEY_2, KEY_SECRETS, PAIR, sealingFolderForFile, tokensOf } from './helpers/sealing.js';
import { rig } from './helpers/setup.js';
import { failureOf } from './helpers/settled.js';

const { dir, sealed } = sealingFolderForFile();

describe('the keys stay out of sight', () => {
  it('in `util.inspect()`, `console.log()`, `JSON.stringify()` and a spread of what `sealing()` made', () => {
    const console = captureConsole();
    const keys = sealing({ keys: [KEY_1, { id: 'k2', secret: Buffer.from(KEY_2.secret, 'base64') }] });
    globalThis.console.log(keys);

    const views = [
      inspect(keys, { showHidden: true, depth: Infinity }),
      JSON.stringify(keys),
      JSON.stringify({ ...keys }),
      format(...console[0]!),
    ];
    expect(views[0]).toMatch(/^Sealing /);
    // The bytes of a key would show as numbers, which no spelling of the secret matches.
    expect(views.join('\n')).not.toMatch(/Uint8Array|Buffer|secret|material/);
    expectNoLeaks({ views }, KEY_SECRETS);
  });

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
        sealed({ keys: [KEY_1], acceptClear: true }, {}, join(dir(), 'x.json'))
          .set(PAIR)
          .then(() => sealed({ keys: [KEY_2] }, {}, join(dir(), 'x.json')).get()),
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
