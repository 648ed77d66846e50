import { fork } from 'node:child_process';
import { join } from 'node:path';
import type { EmulatorCounters } from '../lib/emulator/index.js';
import type { EmulatorRequest, RemoteEmulatorOptions } from './emulator-process.js';

export const BENCH_USER = 'bench';
export const BENCH_PASSWORD = 'bench-password';

/** The name of the `i`th named account of the many-account scenarios, which is also its user at the emulator. */
export const benchAccount = (i: number): string => `tenant-${i}`;
/** The password of a named account's user at the emulator. */
export const benchAccountPassword = (account: string): string => `${account}-password`;

/** The emulator, running in a child process: its URL, and its counters and expiries over IPC. */
export interface RemoteEmulator {
  readonly url: string;
  /** Its process, to read what it holds (its open files). */
  readonly pid: number;
  /** Makes every access token issued so far refused, as if it had expired. Resolves once it is done. */
  expire(): Promise<void>;
  counters(): Promise<EmulatorCounters>;
  /** When each login call arrived (Date.now() there, one host, one clock); with `recordCalls` only. */
  loginTimes(): Promise<number[]>;
  close(): Promise<void>;
}

export async function startRemoteEmulator(options: RemoteEmulatorOptions = {}): Promise<RemoteEmulator> {
  const child = fork(join(__dirname, 'emulator-process.ts'), [], {
    execArgv: ['--import', 'tsx'],
    env: { ...process.env, BENCH_EMULATOR: JSON.stringify({ users: { [BENCH_USER]: BENCH_PASSWORD }, ...options }) },
  });
  const waiting = new Map<
    number,
    (answer: { url?: string; counters?: EmulatorCounters; loginTimes?: number[] }) => void
  >();
  child.on('message', (answer: { id: number; url?: string; counters?: EmulatorCounters; loginTimes?: number[] }) => {
    waiting.get(answer.id)?.(answer);
    waiting.delete(answer.id);
  });
  let next = 1;
  const ask = (type: EmulatorRequest['type']) =>
    new Promise<{ url?: string; counters?: EmulatorCounters; loginTimes?: number[] }>((resolve, reject) => {
      const id = next++;
      waiting.set(id, resolve);
      child.send({ id, type } satisfies EmulatorRequest, (error) => error && reject(error));
    });
  const started = await new Promise<{ url?: string }>((resolve, reject) => {
    waiting.set(0, resolve);
    child.once('exit', (code) =>
      reject(new Error(`The benchmark's emulator exited with ${code} before it was ready.`)),
    );
  });
  return {
    url: started.url!,
    pid: child.pid!,
    expire: async () => void (await ask('expire')),
    counters: async () => (await ask('counters')).counters!,
    loginTimes: async () => (await ask('login-times')).loginTimes!,
    close: () =>
      new Promise((resolve) => {
        child.once('exit', () => resolve());
        child.send({ id: next++, type: 'close' } satisfies EmulatorRequest);
      }),
  };
}
