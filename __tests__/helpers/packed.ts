// The package as npm would publish it, packed once per run (scripts/test-pack.js) for the suites that use it as a
// consumer does: each copies it into a project of its own.
import { spawn } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const root = join(__dirname, '..', '..');

let ownDir: string | undefined;

/**
 * The run's pack folder, which jest's globalSetup made as .tmp/packed-<pid of jest's main process>: this worker's
 * parent, or this process in a run in band. A run without it (another config) gets one of its own.
 */
function packDir(): string {
  for (const pid of [process.ppid, process.pid]) {
    const dir = join(root, '.tmp', `packed-${pid}`);
    if (existsSync(dir)) return dir;
  }
  mkdirSync(join(root, '.tmp'), { recursive: true });
  return (ownDir ??= mkdtempSync(join(root, '.tmp', 'packed-own-')));
}

/**
 * Makes `project` a consumer of the packed package: its node_modules/axios-token-keeper, the tarball beside it, and a
 * package.json. Starts the pack if nothing did, and waits for it (a build: up to a few minutes on a busy machine).
 */
export async function consumerOfPackedPackage(project: string): Promise<void> {
  const dir = packDir();
  if (!existsSync(join(dir, 'started')))
    spawn(process.execPath, [join(root, 'scripts', 'test-pack.js'), dir], { cwd: root, stdio: 'ignore' });
  // Checked every 100 ms: a pack takes tens of seconds, and a tighter loop would take CPU from it.
  const deadline = Date.now() + 280_000;
  while (!existsSync(join(dir, 'done'))) {
    if (Date.now() > deadline) throw new Error(`The package was not packed within 280 s (${join(dir, 'pack.log')}).`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const status = readFileSync(join(dir, 'done'), 'utf8');
  if (status !== '0')
    throw new Error(`Packing the package failed (${status}):\n${readFileSync(join(dir, 'pack.log'), 'utf8')}`);
  const packed = join(dir, 'consumer');
  const tarball = readdirSync(packed).find((name) => name.endsWith('.tgz'))!;
  cpSync(join(packed, tarball), join(project, tarball));
  cpSync(join(packed, 'node_modules', 'axios-token-keeper'), join(project, 'node_modules', 'axios-token-keeper'), {
    recursive: true,
  });
  writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'consumer', private: true }));
}
