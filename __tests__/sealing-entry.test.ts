// `sealing()` (axios-token-keeper/sealing) and what each store makes of it: the browser store takes nothing else and
// says how to wrap anything else, at construction; the file store takes it or `encryption` as it is, and each reads
// what the other sealed (the Redis store: sealed-stores.test.ts); what only a store can tell (`storage: 'none'`, a page
// without WebCrypto) is still refused when that store is made; and what a second copy of the package made is taken
// as this copy's. The checks of each value: sealing-options.test.ts; the keys out of sight: sealing-keys-hidden.
import { BrowserTokenStore } from '../lib/stores/browser/index.js';
import type { BrowserTokenStoreOptions } from '../lib/stores/browser/index.js';
import { sealing } from '../lib/stores/sealing/index.js';
import { expectNoLeaks } from './helpers/scan-secrets.js';
import { KEY_1, KEY_SECRETS, PAIR, SEALED, sealingFolderForFile } from './helpers/sealing.js';

const { recordIn, sealed } = sealingFolderForFile();

/** What the browser store says when `encryption` is not what `sealing()` made, whatever it is given. */
const WRAP =
  /^BrowserTokenStore: `encryption` takes what `sealing\(\)` makes of your keys: wrap them, `encryption: sealing\(\{ keys \}\)`, with `import \{ sealing \} from 'axios-token-keeper\/sealing'`, which checks them, so that an app without `encryption` loads none of sealing's code; got /;

/** The TypeError that making a browser store with `options` throws. */
function refusal(options: BrowserTokenStoreOptions): TypeError {
  let thrown: unknown;
  try {
    new BrowserTokenStore(options).close();
  } catch (error) {
    thrown = error;
  }
  expect(thrown).toBeInstanceOf(TypeError);
  return thrown as TypeError;
}

describe('BrowserTokenStore takes `encryption` from `sealing()` only', () => {
  const seal = () => Promise.resolve('sealed');
  const unseal = () => Promise.resolve(new Uint8Array());
  it.each<[string, unknown, string]>([
    ['`keys` as they are', { keys: [KEY_1] }, 'an object that `sealing()` did not make'],
    ['`seal` and `unseal` as they are', { seal, unseal }, 'an object that `sealing()` did not make'],
    ['a key’s secret', KEY_1.secret, 'a string'],
    ['a list of keys', [KEY_1], 'an array'],
    ['null', null, 'null'],
  ])(
    'refuses %s when the store is made, in a server render too, saying to wrap it in `sealing()`, with no secret in the message',
    (_what, encryption, got) => {
      // `storage: 'local'` where Node has none: `encryption` is said first.
      const thrown = refusal({ key: 'orders', encryption } as BrowserTokenStoreOptions);
      expect(thrown.message).toMatch(WRAP);
      expect(thrown.message.endsWith(`got ${got}.`)).toBe(true);
      expectNoLeaks(thrown, KEY_SECRETS);
    },
  );

  it('takes what `sealing()` made, and refuses it where the store has nothing to seal or no WebCrypto to seal with', () => {
    const encryption = sealing({ keys: [KEY_1] });
    // Past `encryption`, to what this Node process lacks: a localStorage.
    expect(refusal({ key: 'orders', encryption }).message).toMatch(
      /^BrowserTokenStore: `storage: 'local'` needs localStorage/,
    );
    expect(refusal({ key: 'orders', storage: 'none', encryption }).message).toMatch(
      /^BrowserTokenStore: `encryption` seals what the store writes to storage, and `storage: 'none'` writes nothing: leave `encryption` out, or keep the pair in `storage: 'local'` or `'session'`\./,
    );
    const descriptor = Object.getOwnPropertyDescriptor(globalThis, 'crypto');
    Object.defineProperty(globalThis, 'crypto', { value: undefined, configurable: true, writable: true });
    try {
      expect(refusal({ key: 'orders', storage: 'session', encryption }).message).toMatch(
        /^BrowserTokenStore: `encryption` needs WebCrypto \(`crypto\.subtle`\), which this page lacks: browsers offer it to pages served over https \(and from localhost\) only\./,
      );
    } finally {
      if (descriptor) Object.defineProperty(globalThis, 'crypto', descriptor);
      else delete (globalThis as { crypto?: unknown }).crypto;
    }
  });
});

describe('the file store takes `sealing()` or `encryption` as it is', () => {
  it('seals with either, and each reads what the other sealed', async () => {
    await sealed(sealing({ keys: [KEY_1] })).set(PAIR);
    expect((await recordIn()).pair['sealed']).toMatch(SEALED);
    expect(await sealed({ keys: [KEY_1] }).get()).toEqual(PAIR);

    await sealed({ keys: [KEY_1] }).set({ ...PAIR, access: 'acc_written_in_clear_options' });
    expect(await sealed(sealing({ keys: [KEY_1] })).get()).toEqual({ ...PAIR, access: 'acc_written_in_clear_options' });
  });

  it('takes the switch from clear as `sealing()` checked it', async () => {
    await sealed(sealing({ keys: [KEY_1], acceptClear: true, writeClear: true })).set(PAIR);
    expect((await recordIn()).pair).toEqual(PAIR);
    expect(await sealed(sealing({ keys: [KEY_1], acceptClear: true })).get()).toEqual(PAIR);
  });
});

it('what `sealing()` of a second copy of the package made is taken by this copy’s stores', async () => {
  let copy: typeof import('../lib/stores/sealing/index.js') | undefined;
  await jest.isolateModulesAsync(async () => {
    copy = await import('../lib/stores/sealing/index.js');
  });
  const theirs = copy!.sealing({ keys: [KEY_1] });
  // Another copy indeed: another class.
  expect(copy!.sealing).not.toBe(sealing);
  expect(Object.getPrototypeOf(theirs)).not.toBe(Object.getPrototypeOf(sealing({ keys: [KEY_1] })));

  await sealed(theirs).set(PAIR);
  expect((await recordIn()).pair['sealed']).toMatch(SEALED);
  expect(await sealed({ keys: [KEY_1] }).get()).toEqual(PAIR);
  expect(refusal({ key: 'orders', storage: 'none', encryption: theirs }).message).toMatch(
    /^BrowserTokenStore: `encryption` seals what the store writes to storage, and `storage: 'none'` writes nothing/,
  );
});
