// Size budget of what a browser app pays for the plugin: each entry is bundled as an app's bundler would (minified,
// ESM, for the browser, with code splitting), gzipped, and what the app loads at start is checked against its budget.
// Run by `npm run size`, after a build.
//
// axios and @opentelemetry/api are left out: they are peers the app already ships. The package's two dependencies,
// axios-retry (with is-retry-allowed) and async-mutex, are bundled and counted, as they are in the app.
// `platform: 'browser'` also makes an import of a Node built-in (node:fs, crypto, …) a build error, so an entry that
// would break in a browser fails here, not in a user's bundler.
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { constants, gzipSync } from 'node:zlib';
import { build } from 'esbuild';

// What a browser app pays for the plugin: each line is an app's import, bundled as its bundler would (minified, ESM,
// for the browser, axios left out as the app's own, a module loaded by `import()` split into a chunk of its own),
// gzipped at level 9 file by file. What the app loads at start (the entry chunk, and the chunks it imports) is checked
// against its budget in bytes; the lazy chunks, loaded when the app first needs them, are listed apart. Each budget is
// the size measured when it was set, rounded up with about 5% headroom: growth past it must be a decision (raise the
// number here, and say why in the commit), not an accident.
//
// The goal set for a browser app (issue 34) was 12 kB for attachTokenAuth and 15 kB with BrowserTokenStore; the
// figures below are what the features weigh, measured part by part in docs/benchmarks.md ("Weight in a browser app").
// Issue 43 (2026-12-06): the core and its layers. What an app loads is what it loads at start and the layers its
// configuration loads by `import()` at attach or at the first call: the coordination with a shared store (a `store`
// given: BrowserTokenStore), DPoP's work (`dpop: true`). See each entry's `loads`, and the figures of issue 43's closing
// note and docs/benchmarks.md ("Weight in a browser app").
// Sealing's checks (stores/sealing/options.js, with its entry) load with `sealing()`, which the app imports from
// axios-token-keeper/sealing when it sets `encryption`; the cipher loads by `import()` at the first seal.
const LAYERS = {
  coordination: /(^|\/)coordination\//,
  dpop: /(^|\/)dpop\/(runtime|key|proof)\.js$/,
  sealing: /(^|\/)stores\/sealing\/(options|index)\.js$/,
  cipher: /(^|\/)stores\/sealing\/cipher\.js$/,
  clientAuth: /(^|\/)client-auth\//,
};
const ENTRIES = [
  {
    name: 'attachTokenAuth (the memory store)',
    imports: { 'dist/esm/index.js': ['attachTokenAuth'] },
    loads: [],
    gzipBudget: 27_900,
  },
  {
    name: 'attachTokenAuth with dpop: true',
    imports: { 'dist/esm/index.js': ['attachTokenAuth'] },
    loads: ['dpop'],
    gzipBudget: 29_900,
  },
  // Sealing's checks out of it (issue 43), measured 2026-12-06: 40,718 B gzip loaded before (36,093 at start), 39,276
  // after (34,651 at start). Budget 40,900, as it was: 4% over what it loads now.
  {
    name: 'attachTokenAuth and BrowserTokenStore',
    imports: { 'dist/esm/index.js': ['attachTokenAuth'], 'dist/esm/stores/browser/index.js': ['BrowserTokenStore'] },
    loads: ['coordination'],
    gzipBudget: 40_900,
  },
  // A browser app that seals its tokens: `encryption: sealing({ keys })`, the checks at start, the cipher at the first
  // seal, counted in what it loads. Measured 2026-12-06: 42,437 B gzip (36,324 at start). Budget 44,500.
  {
    name: 'attachTokenAuth, BrowserTokenStore and sealing',
    imports: {
      'dist/esm/index.js': ['attachTokenAuth'],
      'dist/esm/stores/browser/index.js': ['BrowserTokenStore'],
      'dist/esm/stores/sealing/index.js': ['sealing'],
    },
    loads: ['coordination', 'sealing', 'cipher'],
    gzipBudget: 44_500,
  },
  // An OAuth2 service account (issue 44): the preset alone, then each client authentication beside it; what each method
  // adds is its line less the first. An app that imports none loads none (`clientAuth` is a layer the others refuse).
  // Measured 2026-12-06: 28,095 B gzip; privateKeyJwt 30,783 (+2,688), clientSecretJwt 29,155 (+1,060), tlsClientAuth
  // 28,808 (+713). Budgets about 5% over.
  {
    name: 'attachTokenAuth and oauth2ClientCredentials',
    imports: { 'dist/esm/index.js': ['attachTokenAuth'], 'dist/esm/presets.js': ['oauth2ClientCredentials'] },
    loads: [],
    gzipBudget: 29_500,
  },
  {
    name: '... with privateKeyJwt',
    imports: {
      'dist/esm/index.js': ['attachTokenAuth'],
      'dist/esm/presets.js': ['oauth2ClientCredentials'],
      'dist/esm/client-auth/index.js': ['privateKeyJwt'],
    },
    loads: ['clientAuth'],
    gzipBudget: 32_300,
  },
  {
    name: '... with clientSecretJwt',
    imports: {
      'dist/esm/index.js': ['attachTokenAuth'],
      'dist/esm/presets.js': ['oauth2ClientCredentials'],
      'dist/esm/client-auth/index.js': ['clientSecretJwt'],
    },
    loads: ['clientAuth'],
    gzipBudget: 30_600,
  },
  {
    name: '... with tlsClientAuth',
    imports: {
      'dist/esm/index.js': ['attachTokenAuth'],
      'dist/esm/presets.js': ['oauth2ClientCredentials'],
      'dist/esm/client-auth/index.js': ['tlsClientAuth'],
    },
    loads: ['clientAuth'],
    gzipBudget: 30_200,
  },
  // The OpenTelemetry subpath, for a web app that traces with OpenTelemetry's web SDK: the API is the app's, like axios.
  // Measured 2026-11-25: 3,621 B minified, 1,590 B gzip. 2026-11-28 (issue 39), before the stores' refactor and after
  // it alike: 3,881 B minified, 1,682 B gzip. Budget 1,770.
  {
    name: 'instrumentTokenAuth',
    imports: { 'dist/esm/otel.js': ['instrumentTokenAuth'] },
    loads: [],
    gzipBudget: 1_770,
  },
];

const EXTERNAL = ['axios', '@opentelemetry/api'];

/** How a layer must be loaded, for the message when it is in what an app that does not configure it loads at start. */
const LOADED_ONLY = {
  default: 'it must be loaded by `import()` only where it is configured (ARCHITECTURE.md)',
  sealing:
    "sealing's checks must load only with `sealing()`, which an app that sets `encryption` imports from " +
    'axios-token-keeper/sealing: no static import of stores/sealing/options.js from what a store loads (the browser ' +
    'store knows what `sealing()` checked by stores/sealing/brand.js)',
};

/**
 * The sealing cipher (AES-GCM through WebCrypto, in stores/sealing/cipher.js) must be in a lazy chunk, never in what an
 * app loads at start: an app that uses BrowserTokenStore without `encryption` ships none of it. The string `AES-GCM`
 * alone cannot tell, since sealing's checks name it too (a CryptoKey must be an AES-GCM key of 256 bits), and they are
 * at start in an app that imports `sealing()`, so that a bad key still throws before the store is made. What only the
 * cipher has is its module, and WebCrypto called with the algorithm (`{name:"AES-GCM"…}` in minified code).
 */
const CIPHER = { module: LAYERS.cipher, code: 'name:"AES-GCM"' };

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
// Where esbuild would write the chunks: nothing is written (`write: false`), but code splitting needs a directory.
const OUTDIR = 'size-chunks';
// `npm run size -- --parts` lists every module of each chunk with its minified bytes (docs/benchmarks.md's table).
const listParts = process.argv.includes('--parts');
const kB = (bytes) => `${(bytes / 1000).toFixed(1)} kB`;
const gzipped = (code) => gzipSync(code, { level: constants.Z_BEST_COMPRESSION }).length;

/** An input as a person reads it: our module below dist/esm/, or a dependency by its package's path. */
const shortName = (path) => path.replace(/^dist\/esm\//, '').replace(/^.*node_modules\//, '');

/** Bundles the app that imports `imports`, split into chunks; throws esbuild's error. */
async function bundle(imports) {
  // The app: one module importing what it names, so that only what it uses is counted, as its bundler would.
  const contents = Object.entries(imports)
    .map(([entry, names]) => `export { ${names.join(', ')} } from ${JSON.stringify(join(root, entry))};`)
    .join('\n');
  return build({
    stdin: { contents, resolveDir: root, loader: 'js' },
    absWorkingDir: root,
    bundle: true,
    minify: true,
    format: 'esm',
    splitting: true,
    outdir: OUTDIR,
    platform: 'browser',
    external: EXTERNAL,
    write: false,
    metafile: true,
    logLevel: 'silent',
  });
}

/**
 * The chunks of a bundle, each with its code, its sizes and its inputs, in two lists: what the app loads at start (the
 * entry chunk, and every chunk it imports, statically, from there) and the lazy chunks, loaded by an `import()`.
 */
function chunksOf(result) {
  const files = new Map(result.outputFiles.map((file) => [file.path, file]));
  const chunks = new Map(
    Object.entries(result.metafile.outputs)
      .filter(([path]) => path.endsWith('.js'))
      .map(([path, output]) => {
        const { contents, text } = files.get(join(root, path));
        const inputs = Object.entries(output.inputs)
          .filter(([, { bytesInOutput }]) => bytesInOutput > 0)
          .sort(([, a], [, b]) => b.bytesInOutput - a.bytesInOutput);
        return [path, { path, output, text, bytes: contents.length, gzip: gzipped(contents), inputs }];
      }),
  );
  const entry = [...chunks.values()].find(({ output }) => output.entryPoint === '<stdin>');
  const atStart = new Set();
  const visit = (chunk) => {
    if (atStart.has(chunk)) return;
    atStart.add(chunk);
    for (const { path, kind } of chunk.output.imports)
      if (kind === 'import-statement' && chunks.has(path)) visit(chunks.get(path));
  };
  visit(entry);
  return { start: [...atStart], lazy: [...chunks.values()].filter((chunk) => !atStart.has(chunk)) };
}

/** The lazy chunks that `layers` load: each holding a module of one of them, and the lazy chunks those import. */
function layerChunks(lazy, layers) {
  const byPath = new Map(lazy.map((chunk) => [chunk.path, chunk]));
  const found = new Set();
  const visit = (chunk) => {
    if (found.has(chunk)) return;
    found.add(chunk);
    for (const { path, kind } of chunk.output.imports)
      if (kind === 'import-statement' && byPath.has(path)) visit(byPath.get(path));
  };
  for (const chunk of lazy)
    if (layers.some((layer) => chunk.inputs.some(([path]) => LAYERS[layer].test(path)))) visit(chunk);
  return [...found];
}

/** The lines that list the chunks' inputs, the largest first: where to look when an entry is over its budget. */
const partsOf = (chunks) =>
  chunks
    .flatMap(({ inputs }) => inputs)
    .sort(([, a], [, b]) => b.bytesInOutput - a.bytesInOutput)
    .map(([path, { bytesInOutput }]) => `  ${String(bytesInOutput).padStart(6)} B  ${shortName(path)}`);

/** Why the chunks loaded at start hold the sealing cipher, or undefined when they do not. */
function cipherAtStart(start) {
  for (const chunk of start) {
    const module = chunk.inputs.find(([path]) => CIPHER.module.test(path));
    if (module) return `${shortName(module[0])} is in ${chunk.path}, which the app loads at start`;
    if (chunk.text.includes(CIPHER.code))
      return `${chunk.path}, which the app loads at start, calls WebCrypto with AES-GCM (\`${CIPHER.code}\`)`;
  }
  return undefined;
}

/** Measures one entry and prints what it weighs; answers whether it failed. */
async function measure({ name, imports, loads, gzipBudget }) {
  const missing = Object.keys(imports).filter((entry) => !existsSync(join(root, entry)));
  if (missing.length > 0) {
    console.error(`${name}: ${missing.join(', ')} not found. Build first (\`npm run size\` does).`);
    return true;
  }
  let result;
  try {
    result = await bundle(imports);
  } catch (error) {
    // esbuild's errors name the file and the import, e.g. `Could not resolve "node:fs"` for a Node built-in.
    const messages = (error.errors ?? [{ text: String(error) }]).map(
      (e) => `  ${e.location ? `${e.location.file}:${e.location.line}: ` : ''}${e.text}`,
    );
    console.error(
      `${name}: does not bundle for the browser (no Node built-ins; axios and @opentelemetry/api are the only imports left out):\n` +
        messages.join('\n'),
    );
    return true;
  }
  const { start, lazy } = chunksOf(result);
  const configured = layerChunks(lazy, loads);
  const loaded = [...start, ...configured];
  const sum = (chunks, field) => chunks.reduce((total, chunk) => total + chunk[field], 0);
  const [bytes, gzip] = [sum(loaded, 'bytes'), sum(loaded, 'gzip')];
  const files = (chunks) => (chunks.length === 1 ? '1 file' : `${chunks.length} files`);
  const layers =
    loads.length === 0 ? '' : ` with the layers it loads (${loads.join(', ')}: ${sum(configured, 'gzip')} B gzip)`;
  console.log(
    `${name}: loads ${bytes} B minified (${kB(bytes)}), ${gzip} B gzip (${kB(gzip)}) in ${files(loaded)}: ` +
      `${sum(start, 'gzip')} B gzip at start${layers}; budget ${gzipBudget} B gzip`,
  );
  if (listParts) console.log(partsOf(loaded).join('\n'));
  for (const chunk of lazy.filter((chunk) => !configured.includes(chunk))) {
    const modules = chunk.inputs.map(([path]) => shortName(path)).join(', ');
    console.log(`  lazy chunk: ${chunk.bytes} B minified, ${chunk.gzip} B gzip (${modules})`);
    if (listParts) console.log(partsOf([chunk]).join('\n'));
  }
  let failed = false;
  if (gzip > gzipBudget) {
    console.error(
      `${name}: ${gzip} B gzip loaded is over its budget of ${gzipBudget} B by ${gzip - gzipBudget} B. ` +
        'Shrink it, or raise the budget in scripts/size.mjs on purpose. Largest inputs (minified):\n' +
        partsOf(loaded).slice(0, 5).join('\n'),
    );
    failed = true;
  }
  // A layer the entry does not configure must not be in what it loads at start: an app pays for what it configures.
  for (const [layer, pattern] of Object.entries(LAYERS)) {
    if (layer === 'cipher' || loads.includes(layer)) continue;
    const at = start.find((chunk) => chunk.inputs.some(([path]) => pattern.test(path)));
    if (at) {
      console.error(
        `${name}: the ${layer} layer is in ${at.path}, which the app loads at start; ` +
          `${LOADED_ONLY[layer] ?? LOADED_ONLY.default}.`,
      );
      failed = true;
    }
  }
  const cipher = cipherAtStart(start);
  if (cipher) {
    console.error(
      `${name}: ${cipher}. The sealing cipher must be loaded by \`import()\` only, with \`encryption\` ` +
        '(stores/browser/lazy-sealer.ts): no static import of stores/sealing/cipher.js from what the browser store ' +
        'loads.',
    );
    failed = true;
  }
  return failed;
}

let failed = 0;
for (const entry of ENTRIES) if (await measure(entry)) failed++;

// `npm run size -- --peers`: the peers measured the same way, for docs/benchmarks.md (no budget: they are not ours).
if (process.argv.includes('--peers')) {
  const PEERS = [
    ['axios-auth-refresh', 'export { default } from "axios-auth-refresh";', ['axios']],
    ['axios-jwt', 'export { applyAuthTokenInterceptor } from "axios-jwt";', ['axios']],
    ['axios itself', 'export { default } from "axios";', []],
  ];
  for (const [name, contents, external] of PEERS) {
    const peer = await build({
      stdin: { contents, resolveDir: root, loader: 'js' },
      bundle: true,
      minify: true,
      format: 'esm',
      platform: 'browser',
      external,
      write: false,
      logLevel: 'silent',
    });
    const code = peer.outputFiles[0].contents;
    const gzip = gzipped(code);
    console.log(`peer ${name}: ${code.length} B minified (${kB(code.length)}), ${gzip} B gzip (${kB(gzip)})`);
  }
}

if (failed > 0) {
  console.error(`size: ${failed} of ${ENTRIES.length} entries failed`);
  process.exit(1);
}
