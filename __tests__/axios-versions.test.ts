import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import axios from 'axios';
import type { AxiosInstance, AxiosStatic, InternalAxiosRequestConfig } from 'axios';
import { attachTokenAuth } from '../lib/index.js';
import { AXIOS_RANGE } from '../lib/support/axios-version.js';

// An axios outside the peer range is refused at attach, with the version found and the range, instead of misbehaving
// (a refused refresh, a wrong password, a permission 401 went wrong on 1.0.0 and 0.27.2 with no word of the cause).
// The old axios here are real ones, dev dependencies under aliases: axios-0-27-2 (the last 0.x most codebases pin),
// axios-1-0-0; axios-oldest is the oldest of the range, which `npm run test:axios-range` runs the core and fault tests
// on.

const root = join(__dirname, '..');
const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
  peerDependencies: Record<string, string>;
  devDependencies: Record<string, string>;
};
const OLDEST = /^>=(\d+\.\d+\.\d+) <2$/.exec(AXIOS_RANGE)![1]!;
const credentials = { username: 'jane', password: 's3cret' };
const API = 'https://api.test';

/** An instance that says it is axios `version`, as the default export of every axios does. */
function claiming(version: string): AxiosInstance {
  return Object.assign(axios.create({ baseURL: API }), { VERSION: version });
}

const refusal = (found: string) =>
  `attachTokenAuth: ${found}, and axios-token-keeper needs axios ${AXIOS_RANGE}; install one in that range ` +
  '(`npm install axios@1`).';

describe('an axios outside the peer range is refused at attach', () => {
  it.each(['0.27.2', '1.0.0', '1.4.0', `1.${Number(OLDEST.split('.')[1]) - 1}.9`, `${OLDEST}-beta.1`, '2.0.0'])(
    'an instance that says it is axios %s: a TypeError naming that version and the range',
    (version) => {
      const instance = claiming(version);
      expect(() => attachTokenAuth(instance, { credentials })).toThrow(
        new TypeError(refusal(`this instance is axios ${version}`)),
      );
      // Nothing was installed on it.
      expect(instance.interceptors.request).toMatchObject({ handlers: [] });
      expect(instance.interceptors.response).toMatchObject({ handlers: [] });
    },
  );

  it.each([OLDEST, '1.21.1', '1.99.0'])('an instance that says it is axios %s is taken', (version) => {
    const instance = claiming(version);
    expect(() => attachTokenAuth(instance, { credentials }).eject()).not.toThrow();
  });

  it.each([
    ['0.27.2', 'axios-0-27-2'],
    ['1.0.0', 'axios-1-0-0'],
  ])("the real axios %s's default export, as attachTokenAuth(axios) would pass it", (version, name) => {
    const old = jest.requireActual<AxiosStatic>(name);
    expect(old.VERSION).toBe(version);
    expect(() => attachTokenAuth(old as unknown as AxiosInstance, { credentials })).toThrow(
      refusal(`this instance is axios ${version}`),
    );
  });

  // An instance of axios.create() does not tell its version; before 1.2 its default adapter, a function of axios' own,
  // gives it away.
  it.each(['axios-0-27-2', 'axios-1-0-0'])('an instance of the real %s, in a codebase with two axios', (name) => {
    const old = jest.requireActual<AxiosStatic>(name).create();
    expect(() => attachTokenAuth(old, { credentials })).toThrow(
      refusal('this instance comes from an axios older than 1.2 (its default adapter is a function, not a name)'),
    );
  });

  it("an adapter of the app's own (a function) is no sign of an old axios", () => {
    const adapter = (config: InternalAxiosRequestConfig) =>
      Promise.resolve({ data: {}, status: 200, statusText: 'OK', headers: {}, config });
    const instance = axios.create({ baseURL: API, adapter });
    expect(() => attachTokenAuth(instance, { credentials }).eject()).not.toThrow();
  });

  // Where npm resolved the peer dependency to an old axios (installed with --legacy-peer-deps, or by yarn and pnpm with
  // a warning only), the plugin's own import is that axios, whatever the instance says.
  it.each([
    ['0.27.2', 'axios-0-27-2'],
    ['1.0.0', 'axios-1-0-0'],
  ])('the axios the package imports is the real %s: refused, named as the one the package imports', (version, name) => {
    jest.isolateModules(() => {
      const old = jest.requireActual<AxiosStatic>(name);
      jest.doMock('axios', () => old);
      const isolated = jest.requireActual<typeof import('../lib/index.js')>('../lib/index.js');
      const instance = old.create();
      expect(() => isolated.attachTokenAuth(instance, { credentials })).toThrow(
        refusal(`axios ${version} is the axios this package imports (where npm resolved its peer dependency)`),
      );
    });
  });
});

describe('the range is one fact', () => {
  it('package.json says the range the check holds, and its oldest is the axios test:axios-range runs', () => {
    expect(manifest.peerDependencies.axios).toBe(AXIOS_RANGE);
    expect(manifest.devDependencies['axios-oldest']).toBe(`npm:axios@${OLDEST}`);
    expect(jest.requireActual<AxiosStatic>('axios-oldest').VERSION).toBe(OLDEST);
  });

  it('the README and the FAQ say it, and that 0.x is refused', () => {
    const readme = readFileSync(join(root, 'README.md'), 'utf8');
    const faq = readFileSync(join(root, 'docs', 'faq.md'), 'utf8');
    expect(readme).toContain(`axios ${OLDEST}`);
    expect(faq).toContain(`\`${AXIOS_RANGE}\``);
    expect(faq).toMatch(/0\.x[^.]*refused/);
  });
});
