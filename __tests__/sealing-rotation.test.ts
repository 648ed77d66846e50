// Moving a file store's sealed pair without a login: the keys rotate in a rolling deploy, every holder reading what
// any other wrote; and the switch from clear, with `acceptClear` and `writeClear` as its steps.
import { isTokenAuthError } from '../lib/index.js';
import { FileTokenStore } from '../lib/stores/file/index.js';
import { KEY_1, KEY_2, PAIR, SEALED, sealingFolderForFile } from './helpers/sealing.js';
import { failureOf } from './helpers/settled.js';

const { path, sealed, recordIn } = sealingFolderForFile();

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
    await new FileTokenStore(path()).set(PAIR);

    expect(await sealed({ keys: [KEY_1], acceptClear: true, writeClear: true }).get()).toEqual(PAIR);
    await sealed({ keys: [KEY_1], acceptClear: true, writeClear: true }).set(PAIR);
    expect((await recordIn()).pair).toEqual(PAIR);
    expect(await new FileTokenStore(path()).get()).toEqual(PAIR);

    const refused = await failureOf(sealed({ keys: [KEY_1] }).get(), isTokenAuthError);
    expect(refused.code).toBe('STORE_FAILED');
    expect(refused.message).toBe(
      `The token file ${path()} holds a pair in clear, which \`encryption\` takes only with \`acceptClear\` (a step of ` +
        'the switch to sealing): it is read as no pair, and the next renewal logs in once and overwrites it sealed.',
    );

    await sealed({ keys: [KEY_1], acceptClear: true }).set(PAIR);
    expect((await recordIn()).pair.sealed).toMatch(SEALED);
    expect(await sealed({ keys: [KEY_1] }).get()).toEqual(PAIR);
  });
});
