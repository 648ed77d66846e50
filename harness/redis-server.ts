import { spawn, spawnSync } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';

/** A real redis-server on 127.0.0.1 at a free port, with no persistence, that whoever started it (a test, a benchmark) stops. */
export interface RedisServer {
  readonly port: number;
  readonly url: string;
  /** Stops the server answering (SIGSTOP), as a paused VM or a partition without resets would; `resume` undoes it. */
  pause(): void;
  resume(): void;
  stop(): Promise<void>;
}

/** The redis-server to start: REDIS_SERVER_PATH when set (another build, or a missing one to see the failure). */
const REDIS_SERVER = process.env.REDIS_SERVER_PATH || 'redis-server';

/**
 * Fails, rather than skips, when there is no redis-server to start: a suite that silently skips proves nothing.
 * Synchronous, so that a test file can call it while it loads: jest then fails that file once ("Test suite failed to
 * run") instead of every test with the same error, and no hook runs to trip over a server that never started.
 */
export function requireRedisServer(): void {
  const probe = spawnSync(REDIS_SERVER, ['--version'], { encoding: 'utf8' });
  if (probe.error || probe.status !== 0) {
    const where = process.env.REDIS_SERVER_PATH ? `at ${REDIS_SERVER} (REDIS_SERVER_PATH)` : 'on PATH';
    throw withoutStack(
      new Error(
        `redis-server was not found ${where}. Install it with \`apt-get install redis-server\` (\`.ci/run\` does), ` +
          'or set REDIS_SERVER_PATH to one; the Redis tests fail without it, they never skip.',
      ),
    );
  }
}

/** The message says what to do; a stack through jest's module loader would only bury it. */
function withoutStack(error: Error): Error {
  error.stack = `${error.name}: ${error.message}`;
  return error;
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

export async function startRedisServer(): Promise<RedisServer> {
  requireRedisServer();
  // The port may be taken between the probe and redis-server's bind: try a few.
  for (let attempt = 1; ; attempt += 1) {
    const port = await freePort();
    const child = spawn(
      REDIS_SERVER,
      ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
      {
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    try {
      await ready(child);
      return {
        port,
        url: `redis://127.0.0.1:${port}`,
        pause: () => void child.kill('SIGSTOP'),
        resume: () => void child.kill('SIGCONT'),
        stop: () => {
          child.kill('SIGCONT');
          return stop(child);
        },
      };
    } catch (error) {
      await stop(child);
      if (attempt === 3) throw error;
    }
  }
}

function ready(child: ChildProcess): Promise<void> {
  return new Promise((resolve, reject) => {
    let output = '';
    const timer = setTimeout(() => fail(new Error(`redis-server did not start within 10 s:\n${output}`)), 10_000);
    const fail = (error: Error): void => {
      clearTimeout(timer);
      reject(error);
    };
    child.stdout?.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes('Ready to accept connections')) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.on('error', fail);
    child.on('exit', (code) => fail(new Error(`redis-server exited with ${code}:\n${output}`)));
  });
}

function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
  });
}
