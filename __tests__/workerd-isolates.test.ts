// Three Cloudflare Worker isolates sharing one pair: the Cloudflare recipe (examples/cloudflare-worker.ts) bundled as
// wrangler bundles it (esbuild, workerd's export conditions, a Node built-in failing the build) and run in real workerd,
// through miniflare from the runtimes matrix (scripts/runtimes.mjs), each isolate a workerd of its own with no
// compatibility flag. They reach the emulator and the REST bridge of a real redis-server over 127.0.0.1; the counts are
// the emulator's: 1 login for the three, then 1 token call per expiry.
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { build } from 'esbuild';
import { closeEmulatorsAfterEach, E2E_PASSWORD, E2E_USER, emulator } from './helpers/emulator.js';
import { upstashBridgeForFile } from './helpers/redis.js';

const root = join(__dirname, '..');
const { bridge } = upstashBridgeForFile();
closeEmulatorsAfterEach();

/** The parts of miniflare this test uses. */
interface MiniflareLike {
  dispatchFetch(url: string): Promise<{ status: number; text(): Promise<string> }>;
  dispose(): Promise<void>;
}
type MiniflareClass = new (options: object) => MiniflareLike & { ready: Promise<unknown> };

let script: string;
let Miniflare: MiniflareClass;
const isolates: MiniflareLike[] = [];

beforeAll(async () => {
  // The runtimes matrix installs miniflare (and workerd's binary) into .runtimes/, from npm; at once when it is there.
  const install = spawnSync(process.execPath, [join(root, 'scripts', 'runtimes.mjs'), 'install'], {
    encoding: 'utf8',
    timeout: 300_000,
  });
  if (install.status !== 0) throw new Error(`scripts/runtimes.mjs install failed:\n${install.stderr}`);
  ({ Miniflare } = createRequire(join(root, '.runtimes', 'package.json'))('miniflare') as {
    Miniflare: MiniflareClass;
  });
  const bundled = await build({
    entryPoints: [join(root, 'examples', 'cloudflare-worker.ts')],
    bundle: true,
    write: false,
    format: 'esm',
    platform: 'browser',
    conditions: ['workerd', 'worker', 'browser'],
    target: 'es2022',
    logLevel: 'silent',
  });
  script = bundled.outputFiles[0]!.text;
}, 360_000);

afterAll(async () => {
  await Promise.all(isolates.map((isolate) => isolate.dispose()));
});

it('3 workerd isolates share one pair through @upstash/redis: 1 login, then 1 token call per expiry', async () => {
  const service = await emulator();
  const bindings = {
    API_URL: service.url,
    API_USERNAME: E2E_USER,
    API_PASSWORD: E2E_PASSWORD,
    UPSTASH_REDIS_REST_URL: bridge().url,
    UPSTASH_REDIS_REST_TOKEN: bridge().token,
  };
  for (let isolate = 0; isolate < 3; isolate += 1) {
    // The workerd of scripts/run-worker.mjs: its release's compatibility date, no flag (no `nodejs_compat`).
    isolates.push(
      new Miniflare({ modules: true, script, compatibilityDate: '2026-04-26', compatibilityFlags: [], bindings }),
    );
  }
  const serve = async (page: number) =>
    Promise.all(
      isolates.map(async (isolate, index) => {
        const response = await isolate.dispatchFetch(`http://worker.test/?page=${page}${index}`);
        return { status: response.status, body: await response.text() };
      }),
    );

  // One after another: the first logs in, the others take its pair from the store.
  for (const [index, isolate] of isolates.entries())
    expect((await isolate.dispatchFetch(`http://worker.test/?page=${index}`)).status).toBe(200);
  expect(service.counters).toMatchObject({ logins: 1, refreshes: 0 });

  for (let expiry = 1; expiry <= 2; expiry += 1) {
    service.expireAccessTokens();
    const answers = await serve(expiry);
    expect(answers.map((answer) => answer.status)).toEqual([200, 200, 200]);
    expect(service.counters).toMatchObject({ logins: 1, refreshes: expiry, rejected: 0 });
  }
}, 120_000);
