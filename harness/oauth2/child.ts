// An ESM-only server (oidc-provider, a resource server built on jose) in a child process: jest runs the tests as
// CommonJS, so they cannot import those packages, but they can start a Node process that does and talk to it over HTTP.
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';

/** A server in a child process, which the one who started it stops. */
export interface ChildServer<Announced> {
  /** The first line the child printed once it listened, parsed: where it listens. */
  readonly announced: Announced;
  stop(): Promise<void>;
}

/**
 * Starts `script` with Node, its one argument `config` as JSON, and waits for the one line of JSON it prints once it
 * listens. The child exits when its stdin closes (this process ended) or on SIGTERM; `name` says whose start failed.
 */
export async function startChild<Announced>(
  script: string,
  config: unknown,
  name: string,
): Promise<ChildServer<Announced>> {
  const child = spawn(process.execPath, [script, JSON.stringify(config)], { stdio: ['pipe', 'pipe', 'pipe'] });
  const announced = await announcedBy<Announced>(child, name);
  return { announced, stop: () => stopped(child) };
}

/** The line the child prints once it listens; its stderr (warnings, a stack) only if it fails first. */
function announcedBy<Announced>(child: ChildProcess, name: string): Promise<Announced> {
  return new Promise((resolve, reject) => {
    let out = '';
    let err = '';
    const timer = setTimeout(() => fail(new Error(`${name} did not start within 15 s`)), 15_000);
    const fail = (error: Error) => {
      clearTimeout(timer);
      child.kill('SIGKILL');
      reject(new Error(`${error.message}\n${err}`));
    };
    child.stderr!.on('data', (chunk: Buffer) => void (err += chunk.toString()));
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const line = out.split('\n')[0];
      if (out.includes('\n') && line) {
        clearTimeout(timer);
        resolve(JSON.parse(line) as Announced);
      }
    });
    child.once('exit', (code) => fail(new Error(`${name} exited with code ${code} before it listened`)));
    child.once('error', fail);
  });
}

function stopped(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    child.kill('SIGTERM');
  });
}
