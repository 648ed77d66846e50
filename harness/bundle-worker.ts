import { mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { build } from 'esbuild';

/** The package root: the bundles go to its .tmp/ (gitignored). */
const ROOT = join(__dirname, '..');

/**
 * Bundles a worker of the harness (`harness/<name>.ts`) into one CommonJS file, `.tmp/<name>/worker-<pid>.cjs`, for
 * `node` to start without a TypeScript loader, and gives its path. `packages: 'external'` leaves the packages to
 * node_modules, as a process run from the repository finds them; by default they are bundled too, as an app's bundler
 * would.
 */
export async function bundleWorker(name: string, { packages }: { packages?: 'external' } = {}): Promise<string> {
  const outfile = join(ROOT, '.tmp', name, `worker-${process.pid}.cjs`);
  mkdirSync(dirname(outfile), { recursive: true });
  await build({
    entryPoints: [join(__dirname, `${name}.ts`)],
    bundle: true,
    ...(packages && { packages }),
    platform: 'node',
    format: 'cjs',
    target: 'node18',
    outfile,
    logLevel: 'silent',
  });
  return outfile;
}
