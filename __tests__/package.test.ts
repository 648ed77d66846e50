import { execFile, execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { consumerOfPackedPackage } from './helpers/packed.js';

// The package packed as npm would publish it (once per run: helpers/packed.ts), used from CommonJS, ESM and TypeScript.
// Dependencies resolve from the repository's node_modules (the scratch project sits under the repository), so
// nothing is downloaded.

const root = join(__dirname, '..');
const fixtures = join(__dirname, 'fixtures', 'consumer');
let project: string;

function run(command: string, args: string[], cwd: string, env: NodeJS.ProcessEnv = {}): string {
  return execFileSync(command, args, {
    cwd,
    env: { ...process.env, ...env },
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

beforeAll(async () => {
  mkdirSync(join(root, '.tmp'), { recursive: true });
  project = mkdtempSync(join(root, '.tmp', 'consumer-'));
  await consumerOfPackedPackage(project);
  for (const file of readdirSync(fixtures)) copyFileSync(join(fixtures, file), join(project, file));
}, 300_000);

afterAll(() => {
  if (project) rmSync(project, { recursive: true, force: true });
});

it('ships only the built files, the README and the guides it links to', () => {
  const files = run(
    'tar',
    [
      '-tzf',
      join(
        project,
        readdirSync(project).find((name) => name.endsWith('.tgz'))!,
      ),
    ],
    project,
  )
    .split('\n')
    .filter(Boolean);
  expect(files).toEqual(
    expect.arrayContaining([
      'package/package.json',
      'package/README.md',
      'package/dist/cjs/index.js',
      'package/dist/cjs/index.d.ts',
      'package/dist/esm/index.js',
      'package/dist/esm/index.d.ts',
    ]),
  );
  // The guides the README links to ship beside it, so its links work in the package too; no source, test or
  // generated API reference does.
  expect(files).toEqual(expect.arrayContaining(['package/docs/recipes.md', 'package/CONTRIBUTING.md']));
  expect(
    files.filter(
      (file) =>
        !/^package\/(dist\/|docs\/[a-z-]+\.md$|package\.json$|(README|CHANGELOG|CONTRIBUTING|ARCHITECTURE)\.md$|LICENSE$)/.test(
          file,
        ),
    ),
  ).toEqual([]);
});

it.each(['use.cjs', 'use.mjs'])(
  'works from %s: logs in, renews after an expiry, on its own emulator subpath',
  async (script) => {
    const output = await new Promise<string>((resolve, reject) => {
      execFile('node', [script], { cwd: project }, (error, stdout, stderr) =>
        error ? reject(new Error(`${error.message}\n${stderr}`)) : resolve(stdout),
      );
    });
    expect(JSON.parse(output)).toEqual({
      status: 200,
      stats: { logins: 1, refreshes: 1, replays: 1, failures: 0, waiting: 0, budget: { login: 9, refresh: 29 } },
      guard: 'function',
    });
  },
);

it.each([
  ['node16', 'node16'],
  ['bundler', 'esnext'],
  ['node10', 'commonjs'],
])('type-checks for a TypeScript consumer with moduleResolution %s', (moduleResolution, module) => {
  const tsc = join(root, 'node_modules', '.bin', 'tsc');
  const args = [
    '--noEmit',
    '--strict',
    '--skipLibCheck',
    '--lib',
    'es2022,dom',
    '--module',
    module,
    '--moduleResolution',
    moduleResolution,
    'use.ts',
  ];
  expect(() => run(tsc, args, project)).not.toThrow();
});

it('ships the emulator as a command: npx axios-token-keeper-emulator --help', () => {
  const bin = (
    JSON.parse(readFileSync(join(project, 'node_modules', 'axios-token-keeper', 'package.json'), 'utf8')) as {
      bin: Record<string, string>;
    }
  ).bin['axios-token-keeper-emulator']!;
  const help = run('node', [join(project, 'node_modules', 'axios-token-keeper', bin), '--help'], project);

  expect(help).toMatch(/^Usage: npx axios-token-keeper-emulator \[options\]/);
  expect(help).toContain('--access-ttl <time>');
  expect(readFileSync(join(project, 'node_modules', 'axios-token-keeper', bin), 'utf8')).toMatch(
    /^#!\/usr\/bin\/env node\n/,
  );
});

it('serves the stores and sealing on their own subpaths, from CommonJS and ESM', async () => {
  const node = (script: string) =>
    new Promise<unknown>((done, reject) => {
      execFile('node', [script], { cwd: project }, (error, stdout, stderr) =>
        error ? reject(new Error(`${error.message}\n${stderr}`)) : done(JSON.parse(stdout)),
      );
    });
  expect(await node('stores.cjs')).toEqual({ logins: 1, sealed: 'string', redis: 'function', browser: 'function' });
  expect(await node('stores.mjs')).toEqual({
    file: 'function',
    redis: 'function',
    browser: 'function',
    sealing: 'function',
  });
});

it('serves OpenTelemetry on its own subpath, from CommonJS and ESM', async () => {
  const node = (script: string) =>
    new Promise<unknown>((done, reject) => {
      execFile('node', [script], { cwd: project }, (error, stdout, stderr) =>
        error ? reject(new Error(`${error.message}\n${stderr}`)) : done(JSON.parse(stdout)),
      );
    });
  expect(await node('otel.cjs')).toEqual({ spans: ['axios-token-keeper login'] });
  expect(await node('otel.mjs')).toEqual({ stop: 'function' });
});

it.each(['esm', 'cjs'])(
  'keeps Node built-ins, ioredis and OpenTelemetry out of everything the main %s entry loads, so browser bundles stay clean',
  (format) => {
    const dist = join(project, 'node_modules', 'axios-token-keeper', 'dist', format);
    const loaded = new Set<string>();
    const external = new Set<string>();
    const visit = (file: string): void => {
      if (loaded.has(file)) return;
      loaded.add(file);
      const source = readFileSync(file, 'utf8');
      for (const [, specifier] of source.matchAll(/(?:from\s+|import\s*\(?\s*|require\()\s*['"]([^'"]+)['"]/g)) {
        if (specifier!.startsWith('.'))
          visit(resolve(dirname(file), specifier!.endsWith('.js') ? specifier! : `${specifier}.js`));
        else external.add(specifier!);
      }
    };
    visit(join(dist, 'index.js'));

    expect(loaded.size).toBeGreaterThan(5);
    expect(
      [...loaded].filter(
        (file) =>
          file.includes('stores/file') ||
          file.includes('stores/redis') ||
          file.includes('emulator') ||
          file.endsWith('otel.js'),
      ),
    ).toEqual([]);
    expect(
      [...external].filter(
        (name) =>
          name.startsWith('node:') ||
          builtinModules.includes(name) ||
          name === 'ioredis' ||
          name.startsWith('@opentelemetry/'),
      ),
    ).toEqual([]);
  },
);
