// The repository's commands and examples run as a user runs them: through tsx, each in a process of its own.
import { execFile, spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { join } from 'node:path';

export const root = join(__dirname, '..', '..');
const tsx = join(root, 'node_modules', '.bin', 'tsx');

export interface ScriptOptions {
  /** Added to this process's environment. */
  env?: NodeJS.ProcessEnv;
  /** @default the repository */
  cwd?: string;
}

export interface Finished {
  /** The exit code; -1 when the process was killed or could not start. */
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs a TypeScript file to its end. Never rejects: the test asserts on the exit code and the output. */
export function runScript(file: string, args: string[] = [], options: ScriptOptions = {}): Promise<Finished> {
  return new Promise((resolve) => {
    execFile(
      tsx,
      [file, ...args],
      { cwd: options.cwd ?? root, env: { ...process.env, ...options.env } },
      (error, stdout, stderr) =>
        resolve({ code: error ? (typeof error.code === 'number' ? error.code : -1) : 0, stdout, stderr }),
    );
  });
}

const serving = new Set<ChildProcess>();

/** Stops, after each test of the file that calls it, every script the test left serving. */
export function stopScriptsAfterEach(): void {
  afterEach(() => {
    for (const child of serving) child.kill();
    serving.clear();
  });
}

/**
 * Starts a TypeScript file that serves until it is stopped, and resolves once its output matches `ready` (with the
 * match, such as the address it listens on). `stop()` sends SIGTERM and resolves with the exit code.
 */
export function serveScript(
  file: string,
  args: string[],
  ready: RegExp,
  options: ScriptOptions = {},
): Promise<{ match: RegExpExecArray; stop: () => Promise<number | null> }> {
  const child = spawn(tsx, [file, ...args], { cwd: options.cwd ?? root, env: { ...process.env, ...options.env } });
  serving.add(child);
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  const stop = () => {
    child.kill('SIGTERM');
    serving.delete(child);
    return exited;
  };
  return new Promise((resolve, reject) => {
    let stdout = '';
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      const match = ready.exec(stdout);
      if (match) resolve({ match, stop });
    });
    void exited.then((code) => reject(new Error(`${file} exited with ${code} before ${ready}:\n${stdout}${stderr}`)));
  });
}
