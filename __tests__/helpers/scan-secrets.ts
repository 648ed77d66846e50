/**
 * The leak scanner: finds test secrets in what a user of the plugin could see. One scanner, used two ways.
 *
 * As jest's setup file (setupFilesAfterEnv), which every test file gets, it records everything a user could see while
 * the file runs, and fails the file if any of it holds a test secret. Recorded:
 *  - rejections of requests made through an axios instance with the plugin attached: the reason when it is a
 *    TokenAuthError, or an AxiosError whose `config` carries one of the plugin's per-request symbols (description
 *    `axios-token-keeper.*`, see lib/attach.ts). Errors of plain instances (tests talking to the emulator directly,
 *    the plugin's private token-call instance) do not count;
 *  - what `attachTokenAuth` throws, and rejections of `auth.login()`, `auth.refresh()`, `auth.logout()` and
 *    `auth.accessToken()` (whose value is the token, by design);
 *  - every payload passed to `Emitter.prototype.emit` (lib/support/emitter.ts), whether or not anyone listens;
 *  - every console.log/info/warn/error/debug/trace call (still passed through).
 * Scanned (afterAll of the file, and again after each later afterAll hook for what those produced) through what a
 * logger would print (`renderings` in leak-finder.ts), and the formatted console line. Secrets are the known test passwords, the
 * Basic value of each known or sent username:password, any `Basic <base64 of user:password>`, token-shaped strings
 * (`acc-<n>-<nonce>`, `ref-<n>-<nonce>`, `acc_<hex>`, `ref_<hex>`, JWTs), and the tokens the token service handed out
 * during the file.
 *
 * From a test (the secrets-*.test.ts files), with the secrets the test knows: `expectNoLeaks` also walks the value,
 * and counts a secret anywhere it can be reached, even where no logger would print it (a non-enumerable property, a
 * symbol key, a getter, a byte buffer).
 *
 * This file is that setup file, and the one import of the scanner's parts: the secrets and their spellings
 * (test-secrets.ts), where a secret can show (leak-finder.ts), what a test listens to (listeners.ts), and the
 * recording and scan of every test file (leak-recording.ts, installed when this file loads).
 *
 * None of them may import nock (helpers/service.ts does): a test file that imports the scanner would then count as a
 * file that uses nock (helpers/nock-per-file.ts), and have it armed, while some suites test connection errors over
 * real sockets.
 */
export {
  atRestSpellingsOf,
  basicHeader,
  basicOf,
  credentialSecrets,
  filesUnder,
  formEncoded,
  KNOWN_CREDENTIALS,
  KNOWN_LITERALS,
  literalSecrets,
  pairSpellings,
  preview,
  secretsAtRest,
  secretsOf,
  spellingsOf,
  tokenShapedIn,
} from './test-secrets.js';
export type { PlaceAtRest, Secret } from './test-secrets.js';
export { causeChain, expectNoLeaks, findLeaks } from './leak-finder.js';
export type { Finding, ScanOptions } from './leak-finder.js';
export { captureConsole, EVENT_NAMES, recordEvents } from './listeners.js';
export type { Recorded } from './listeners.js';
export { isPluginRejection, scanPending, scanRecords } from './leak-recording.js';
export type { ScanRecord } from './leak-recording.js';
