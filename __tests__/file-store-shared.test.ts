// Two FileTokenStores on one path, standing in for two processes of a host that share nothing but the files: each
// tells its listeners of the other's writes, and the plugin on top of them, against the emulator over real HTTP, is
// one client, which releases the lock file by the time `auth.flush()` resolves.
import fs from 'node:fs';
import { stat } from 'node:fs/promises';
import axios from 'axios';
import { attachTokenAuth } from '../lib/index.js';
import { FileTokenStore } from '../lib/stores/file/index.js';
import { closeEmulatorsAfterEach, E2E_PASSWORD, E2E_USER, emulator } from './helpers/emulator.js';
import { fileStoreForFile } from './helpers/file-store.js';
import { until } from './helpers/flow.js';
import { expectOneClientForTwoHolders } from './helpers/holders.js';
import { PAIR_A, PAIR_B } from './helpers/store-contract.js';

closeEmulatorsAfterEach();
const { file, lockFile, undo, store, listen } = fileStoreForFile();

describe('FileTokenStore: subscribe', () => {
  it('tells another instance on the same path of a write, and the writer’s own listeners once', async () => {
    const one = store();
    const two = store();
    const ofOne = listen(one);
    const ofTwo = listen(two);

    await one.set(PAIR_A);
    await until(() => ofTwo.heard.length >= 1, 5_000);
    await two.set(PAIR_B);
    await until(() => ofOne.heard.length >= 2, 5_000);
    await one.clear();
    await until(() => ofTwo.heard.length >= 3, 5_000);

    // Each writer hears its own write once (at once), not again from its watcher; the other hears it from the watcher.
    expect(ofOne.heard).toEqual([PAIR_A, PAIR_B, null]);
    expect(ofTwo.heard).toEqual([PAIR_A, PAIR_B, null]);
  });

  it('stops calling a listener after its unsubscribe', async () => {
    const one = store();
    const two = store();
    const gone = listen(two);
    const stays = listen(two);

    await one.set(PAIR_A);
    await until(() => gone.heard.length === 1 && stays.heard.length === 1, 5_000);
    gone.stop();
    await one.set(PAIR_B);
    await until(() => stays.heard.length === 2, 5_000);

    expect(gone.heard).toEqual([PAIR_A]);
    expect(stays.heard).toEqual([PAIR_A, PAIR_B]);
  });

  it('with `watch: false`, hears nothing of the writes of other instances', async () => {
    const writer = store();
    const deaf = listen(store({ watch: false }));
    const witness = listen(store());

    await writer.set(PAIR_A);
    await until(() => witness.heard.length === 1, 5_000);
    await writer.set(PAIR_B);
    await until(() => witness.heard.length === 2, 5_000);

    expect(witness.heard).toEqual([PAIR_A, PAIR_B]);
    expect(deaf.heard).toEqual([]);
  });
});

describe('FileTokenStore: with the plugin', () => {
  it('gives two instances on one file one login and one refresh per expiry, and a restart no login', async () => {
    await expectOneClientForTwoHolders(
      await emulator(),
      () => new FileTokenStore(file()),
      (auth) => undo.push(() => auth.eject()),
    );
    expect((await stat(file())).mode & 0o777).toBe(0o600);
  });

  it('has released the lock file when `auth.flush()` resolves: a process that exits right after it leaves no lock behind', async () => {
    const service = await emulator();
    const api = axios.create({ baseURL: service.url });
    const auth = attachTokenAuth(api, { credentials: { username: E2E_USER, password: E2E_PASSWORD }, store: store() });
    undo.push(() => auth.eject());

    await api.get('/orders');
    await auth.flush();

    expect(fs.existsSync(lockFile())).toBe(false);
    expect(await store().get()).toEqual(await auth.getTokens());
  });
});
