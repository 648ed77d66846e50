import { spawn, spawnSync } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import type { AddressInfo } from 'node:net';
import Redis from 'ioredis';

/** A real redis-server on 127.0.0.1 at a free port, with no persistence, that whoever started it (a test, a benchmark) stops. */
export interface RedisServer {
  readonly port: number;
  readonly url: string;
  /** Stops the server answering (SIGSTOP), as a paused VM or a partition without resets would; `resume` undoes it. */
  pause(): void;
  resume(): void;
  /**
   * Ends the server at once (SIGKILL), as a crash or an OOM kill would: its connections are reset and what it held is
   * gone. Resolves once the process has ended; `restart` starts it again.
   */
  kill(): Promise<void>;
  /**
   * Starts redis-server again on the same port, empty (as a restart without persistence is); kills it first if needed.
   * `afterMs`: it starts that long after it was killed, as a slow host or a supervisor's back-off would have it.
   */
  restart(options?: { afterMs?: number }): Promise<void>;
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
        `redis-server was not found ${where}. Install it with \`apt-get install redis-server\` (\`npm test\` does), ` +
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

/** A port nothing listens on now, on 127.0.0.1 (it may be taken before it is used: callers try again). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** What every server of ours runs with: loopback only, nothing written to disk. */
const EPHEMERAL = ['--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'];

/**
 * Spawns redis-server with `args` and resolves once it accepts connections (once it says `readyLine`: a sentinel says
 * no "Ready to accept connections"); rejects (the process ended) when it did not start, with its output.
 */
export async function launchRedisServer(
  args: readonly string[],
  readyLine = 'Ready to accept connections',
): Promise<ChildProcess> {
  const child = spawn(REDIS_SERVER, [...args, ...EPHEMERAL], { stdio: ['ignore', 'pipe', 'pipe'] });
  try {
    await ready(child, readyLine);
    return child;
  } catch (error) {
    await stopProcess(child, 'SIGKILL');
    throw error;
  }
}

/** @param args Besides the port: `['--replicaof', '127.0.0.1', '6379']` for a replica. Again on `restart()`. */
export async function startRedisServer(args: readonly string[] = []): Promise<RedisServer> {
  requireRedisServer();
  // The port may be taken between the probe and redis-server's bind: try a few.
  for (let attempt = 1; ; attempt += 1) {
    const port = await freePort();
    try {
      return serverOn(port, await launchRedisServer(['--port', String(port), ...outOfTheTree(port), ...args]), args);
    } catch (error) {
      if (attempt === 3) throw error;
    }
  }
}

/**
 * Where a server's files go: the system's temporary folder, one name per port. `--save ''` writes no snapshot, but a
 * replica writes the master's, as it syncs, to its `dir` (the working directory by default: a dump.rdb in the repo).
 */
function outOfTheTree(port: number): string[] {
  return ['--dir', tmpdir(), '--dbfilename', `token-keeper-${port}.rdb`];
}

function serverOn(port: number, first: ChildProcess, args: readonly string[]): RedisServer {
  let child = first;
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    pause: () => void child.kill('SIGSTOP'),
    resume: () => void child.kill('SIGCONT'),
    kill: () => stopProcess(child, 'SIGKILL'),
    async restart({ afterMs = 0 } = {}) {
      await stopProcess(child, 'SIGKILL');
      if (afterMs > 0) await new Promise((resolve) => setTimeout(resolve, afterMs));
      // The port is ours again at once (redis-server binds with SO_REUSEADDR), unless someone took it meanwhile.
      child = await launchRedisServer(['--port', String(port), ...outOfTheTree(port), ...args]);
    },
    stop: () => {
      child.kill('SIGCONT');
      return stopProcess(child);
    },
  };
}

function ready(child: ChildProcess, readyLine: string): Promise<void> {
  return new Promise((resolve, reject) => {
    let output = '';
    const timer = setTimeout(() => fail(new Error(`redis-server did not start within 10 s:\n${output}`)), 10_000);
    const fail = (error: Error): void => {
      clearTimeout(timer);
      reject(error);
    };
    child.stdout?.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes(readyLine)) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.on('error', fail);
    child.on('exit', (code) => fail(new Error(`redis-server exited with ${code}:\n${output}`)));
  });
}

/** Signals the process (SIGTERM unless told) and resolves once it has ended; at once if it already had. */
export function stopProcess(child: ChildProcess, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill(signal);
  });
}

/** Runs `command` on a connection of its own to the server at `port` (no retries: it is there or it fails), closed after. */
export async function withConnection<T>(port: number, command: (client: Redis) => Promise<T>): Promise<T> {
  const client = new Redis({
    host: '127.0.0.1',
    port,
    lazyConnect: true,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
    // No INFO of its own on connect: countCommands would count it among the commands it measures.
    enableReadyCheck: false,
  });
  try {
    await client.connect();
    return await command(client);
  } finally {
    client.disconnect();
  }
}

/** How many subscriptions the server at `port` counts on the channels that match `pattern` (`PUBSUB NUMSUB`). */
export function subscriptions(port: number, pattern: string): Promise<number> {
  return withConnection(port, async (client) => {
    const channels = (await client.call('PUBSUB', 'CHANNELS', pattern)) as string[];
    if (channels.length === 0) return 0;
    const counts = (await client.call('PUBSUB', 'NUMSUB', ...channels)) as Array<string | number>;
    return counts.filter((_, index) => index % 2 === 1).reduce<number>((sum, count) => sum + Number(count), 0);
  });
}

/**
 * How many times each command has run on the server at `port` since it started, from `INFO commandstats`: commands
 * run inside a script count too (an EVAL that sets and publishes counts 3), and so does every earlier reading's own
 * `info`.
 */
export function commandStats(port: number): Promise<Map<string, number>> {
  return withConnection(port, async (client) => {
    const text = await client.info('commandstats');
    const counts = new Map<string, number>();
    for (const match of text.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)) counts.set(match[1]!, Number(match[2]));
    return counts;
  });
}

/**
 * Runs `during` and counts the commands the servers at `ports` ran meanwhile (as {@link commandStats} counts them),
 * less the `info` of the reading taken before it: in all, and by command.
 */
export async function countCommands<T>(
  ports: readonly number[],
  during: () => Promise<T>,
): Promise<{ result: T; commands: number; byCommand: Map<string, number> }> {
  const before = await Promise.all(ports.map(commandStats));
  const result = await during();
  const after = await Promise.all(ports.map(commandStats));
  const byCommand = new Map<string, number>();
  after.forEach((counts, index) => {
    for (const [name, calls] of counts) {
      const delta = calls - (before[index]!.get(name) ?? 0) - (name === 'info' ? 1 : 0);
      if (delta > 0) byCommand.set(name, (byCommand.get(name) ?? 0) + delta);
    }
  });
  const commands = [...byCommand.values()].reduce((sum, calls) => sum + calls, 0);
  return { result, commands, byCommand };
}

/** Resolves once `condition` holds (a failing check counts as not yet), checked every 50 ms; throws `message()` past `timeoutMs`. */
export async function until(
  condition: () => Promise<boolean>,
  timeoutMs: number,
  message: () => string,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const met = await condition().catch(() => false);
    if (met) return;
    if (Date.now() > deadline) throw new Error(message());
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
