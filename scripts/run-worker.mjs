// Runs a module worker (a file whose default export is `{ fetch(request) }`) in an edge runtime of the runtime matrix,
// as a deployment would: bundled by esbuild for that runtime, axios and all, then sent one request; prints the answer's
// JSON with the runtime that gave it.
//
//   node scripts/run-worker.mjs workerd ENTRY [PATH [BINDINGS]]        in workerd, through miniflare
//   node scripts/run-worker.mjs edge-runtime ENTRY [PATH [BINDINGS]]   in Vercel's edge-runtime
//
// PATH (`/` by default, with its query) is the address the request asks for. BINDINGS, a JSON object of strings, is
// the worker's environment, the `env` its fetch gets as second argument (workerd's text bindings; on edge-runtime,
// which has none, handed to fetch the same way): a scenario that needs more than the control server (a store's address
// and token) gets it there. ENTRY's imports resolve from its own
// folder, so a consumer project's worker gets the package the project has. miniflare and edge-runtime come from
// .runtimes/ (`node scripts/runtimes.mjs install`), never from the repository's dependencies.
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, URL } from 'node:url';
import { build } from 'esbuild';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const fromRuntimes = createRequire(join(root, '.runtimes', 'package.json'));

/**
 * workerd's compatibility date: the date of the workerd that the pinned miniflare brings, so the worker meets the
 * behaviour of that release. No compatibility flag, `nodejs_compat` least of all: the package must load on workerd as
 * it is, with no Node built-in behind it.
 */
const COMPATIBILITY_DATE = '2026-04-26';
const COMPATIBILITY_FLAGS = [];

/** How each runtime wants the worker bundled: the export conditions its bundlers use, and the module format it loads. */
const BUNDLES = {
  // wrangler's conditions; workerd loads ES modules.
  workerd: { conditions: ['workerd', 'worker', 'browser'], format: 'esm' },
  // Vercel's bundler resolves `edge-light` first; edge-runtime evaluates a script, not a module.
  'edge-runtime': { conditions: ['edge-light', 'worker', 'browser'], format: 'iife', globalName: 'worker' },
};

async function bundle(entry, { conditions, format, globalName }) {
  const result = await build({
    entryPoints: [entry],
    bundle: true,
    write: false,
    format,
    globalName,
    // platform 'browser': a Node built-in anywhere in the graph fails the build ("Could not resolve").
    platform: 'browser',
    conditions,
    target: 'es2022',
    logLevel: 'silent',
  });
  return result.outputFiles[0].text;
}

const RUNTIMES = {
  async workerd(code, url, bindings) {
    const { Miniflare } = fromRuntimes('miniflare');
    const miniflare = new Miniflare({
      modules: true,
      script: code,
      compatibilityDate: COMPATIBILITY_DATE,
      compatibilityFlags: COMPATIBILITY_FLAGS,
      bindings,
    });
    try {
      const response = await miniflare.dispatchFetch(url);
      return {
        // The workerd package miniflare depends on, whose platform package holds the binary that ran the worker.
        runtime: `workerd ${createRequire(fromRuntimes.resolve('miniflare'))('workerd/package.json').version}`,
        compatibilityFlags: COMPATIBILITY_FLAGS,
        answer: await response.json(),
      };
    } finally {
      await miniflare.dispose();
    }
  },

  async 'edge-runtime'(code, url, bindings) {
    const { EdgeRuntime } = fromRuntimes('edge-runtime');
    // The module worker's fetch, under the service-worker event that edge-runtime dispatches.
    const env = JSON.stringify(bindings);
    const initialCode = `${code}\naddEventListener('fetch', (event) => event.respondWith(worker.default.fetch(event.request, ${env})));`;
    const runtime = new EdgeRuntime({ initialCode });
    const response = await runtime.dispatchFetch(url);
    await response.waitUntil();
    return {
      runtime: `edge-runtime ${fromRuntimes('edge-runtime/package.json').version}`,
      answer: await response.json(),
    };
  },
};

const [kind, entry, path = '/', bindings = '{}'] = process.argv.slice(2);
try {
  if (!RUNTIMES[kind] || !entry)
    throw new Error('Usage: node scripts/run-worker.mjs workerd|edge-runtime ENTRY [PATH [BINDINGS]]');
  const code = await bundle(resolve(entry), BUNDLES[kind]);
  const url = new URL(path, 'http://worker.test').href;
  console.log(JSON.stringify(await RUNTIMES[kind](code, url, JSON.parse(bindings))));
} catch (error) {
  console.error(error?.stack ?? String(error));
  process.exitCode = 1;
}
