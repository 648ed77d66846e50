/**
 * nock around every test file, as jest's setup file (setupFilesAfterEnv): no test file arms, cleans or restores nock
 * itself, so none can leave it armed for the files its jest worker runs after it.
 *
 * nock 14 arms itself when it is imported: @mswjs/interceptors replace `http.request`, `http.get` and
 * `http.ClientRequest` (and the file's own `fetch`). Node's http module is one per worker, shared by every file the
 * worker runs, while each file gets its own nock from its own module registry. A file that left its nock armed sent
 * the requests of later files through its stale interceptors: token-client-connection-errors.test.ts, run after
 * edges.test.ts in one worker, failed with 'Unhandled error' where it expected a connection error.
 *
 * So this file imports nock first, in the test file's module registry (the file's `import nock from 'nock'` gets this
 * same instance), and restores it at once. Then:
 * - a file that does not import nock, directly or through a helper (helpers/service.ts), runs on Node's own http: the
 *   end-to-end tests on the emulator over loopback and the connection errors over real sockets never meet nock;
 * - a file that does has nock armed before its first hook, `nock.disableNetConnect()` before each test and
 *   `nock.cleanAll()` with `nock.enableNetConnect()` after it. A file that also talks to the emulator lets the
 *   loopback through in its own beforeEach: `nock.enableNetConnect('127.0.0.1')`;
 * - after the file's tests, nock is cleaned and restored, whatever happened; a file that fails while it loads has never
 *   armed it.
 */
import { ClientRequest } from 'node:http';
import nock from 'nock';

nock.restore();
// What restore() puts back is what http held before this file's nock: anything but Node's own class is a nock that a
// file run earlier in this worker left armed, which no file here can take off any more.
if (ClientRequest.name !== 'ClientRequest') {
  throw new Error(
    `Node's http.ClientRequest is ${ClientRequest.name}: a file run earlier in this jest worker left nock armed`,
  );
}

const { testPath } = expect.getState();
let armed = false;

/** Whether the test file imports nock, itself or through the modules it imports (jest records `module.children`). */
function fileImportsNock(): boolean {
  const nockModule = require.cache[require.resolve('nock')];
  const testModule = testPath === undefined ? undefined : require.cache[testPath];
  if (!nockModule || !testModule) return false;
  const seen = new Set<NodeJS.Module>();
  const next: NodeJS.Module[] = [testModule];
  for (let module = next.pop(); module; module = next.pop()) {
    if (module === nockModule) return true;
    if (seen.has(module)) continue;
    seen.add(module);
    next.push(...module.children);
  }
  return false;
}

function armIfUsed(): void {
  if (!armed && !fileImportsNock()) return;
  armed = true;
  if (!nock.isActive()) nock.activate();
}

beforeAll(armIfUsed);

beforeEach(() => {
  armIfUsed();
  if (armed) nock.disableNetConnect();
});

afterEach(() => {
  if (!armed) return;
  nock.cleanAll();
  nock.enableNetConnect();
});

afterAll(() => {
  nock.cleanAll();
  nock.enableNetConnect();
  nock.restore();
  armed = false;
});
