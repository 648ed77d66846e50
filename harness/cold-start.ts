/**
 * Cold-started function instances sharing one pair through a REST Redis: each a fresh Node process
 * (cold-start-worker.ts, bundled once with esbuild so that it starts in about as long as a function does), with its
 * own @upstash/redis client to the bridge of Upstash's protocol (upstash-rest.ts). For the cold-start tests and the
 * serverless row of `npm run bench:fleet`; no jest here.
 *
 * @example
 * const worker = await bundleColdStartWorker();
 * const instance = await startInstance(worker, { restUrl, restToken, serviceUrl, prefix: 'tokens:fn' });
 * await instance.request('/orders'); // { status: 200 }
 * await instance.stop();
 */
import { fork } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { bundleWorker } from './bundle-worker.js';

/** What an instance is started with (COLD_START_CONFIG, as JSON). */
export interface ColdStartConfig {
  /** The REST Redis: the bridge's `url` and `token`. */
  restUrl: string;
  restToken: string;
  /** The emulator's base URL. */
  serviceUrl: string;
  prefix: string;
  /** The store's `lockTtlMs`. @default the store's */
  lockTtlMs?: number;
}

/** A request asked of an instance, over IPC. */
export interface InstanceAsk {
  id: number;
  path: string;
}

/** Its outcome: the status, or the error (code and message, masked). Id 0 says the instance is ready. */
export type InstanceAnswer = { id: number; status: number } | { id: number; error: string };

export interface Instance {
  readonly pid: number;
  /** Makes one request in the instance, and waits for it and the store's writes that follow it. */
  request(path: string): Promise<InstanceAnswer>;
  /** Freezes the process (SIGSTOP), as a platform freezes an instance between invocations; `thaw` undoes it. */
  freeze(): void;
  thaw(): void;
  /** Ends the instance, as a platform reclaims it. */
  stop(): Promise<void>;
}

/** Bundles cold-start-worker.ts and its packages into one file under .tmp/, and gives its path. */
export function bundleColdStartWorker(): Promise<string> {
  return bundleWorker('cold-start-worker');
}

/** Starts an instance from the bundled worker and resolves once it is ready (its module has run). */
export async function startInstance(worker: string, config: ColdStartConfig): Promise<Instance> {
  const child = fork(worker, [], {
    env: { ...process.env, COLD_START_CONFIG: JSON.stringify(config) },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const waiting = new Map<number, (answer: InstanceAnswer) => void>();
  let nextId = 1;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  await new Promise<void>((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`a cold-start instance exited with ${code} before it was ready`)));
    child.on('message', (answer: InstanceAnswer) => {
      if (answer.id === 0) return resolve();
      waiting.get(answer.id)?.(answer);
      waiting.delete(answer.id);
    });
  });
  return {
    pid: child.pid!,
    request(path) {
      const id = nextId++;
      return new Promise((resolve) => {
        waiting.set(id, resolve);
        child.send({ id, path } satisfies InstanceAsk);
      });
    },
    freeze: () => void child.kill('SIGSTOP'),
    thaw: () => void child.kill('SIGCONT'),
    stop: () => end(child, exited),
  };
}

async function end(child: ChildProcess, exited: Promise<void>): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill('SIGCONT');
  child.kill('SIGTERM');
  await exited;
}
