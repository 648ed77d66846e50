// The emulator in a process of its own, so that the CPU time the benchmark reads is the client's alone. Started by
// remote-emulator.ts with its options in BENCH_EMULATOR (JSON); obeys IPC messages.
import { startEmulator } from '../lib/emulator/index.js';
import type { EmulatorOptions } from '../lib/emulator/index.js';
import { benchAccount, benchAccountPassword } from './remote-emulator.js';

/** What the parent may ask; latency of data calls is given as a range, since a function cannot cross IPC. */
export interface RemoteEmulatorOptions extends Omit<EmulatorOptions, 'latency' | 'log' | 'clock'> {
  latency?: { login?: number; token?: number; data?: number | { min: number; max: number } };
  /**
   * Users for the named accounts `benchAccount(0)` to `benchAccount(accounts - 1)`, beside `users`: made here, since
   * 20,000 of them in the environment would pass the length an environment variable may have.
   */
  accounts?: number;
  /** Keep the calls received, for `loginTimes` (every call is kept: for short runs). @default false */
  recordCalls?: boolean;
}

export type EmulatorRequest = { id: number; type: 'expire' | 'counters' | 'close' | 'login-times' };

async function main(): Promise<void> {
  const {
    latency,
    accounts = 0,
    recordCalls,
    ...options
  } = JSON.parse(process.env.BENCH_EMULATOR ?? '{}') as RemoteEmulatorOptions;
  const data = latency?.data;
  const users = { ...options.users };
  for (let i = 0; i < accounts; i += 1) users[benchAccount(i)] = benchAccountPassword(benchAccount(i));
  const emulator = await startEmulator({
    ...options,
    users,
    log: recordCalls === true,
    latency: {
      ...(latency?.login !== undefined && { login: latency.login }),
      ...(latency?.token !== undefined && { token: latency.token }),
      ...(data !== undefined && {
        data: typeof data === 'number' ? data : () => data.min + Math.random() * (data.max - data.min),
      }),
    },
  });
  process.on('message', (request: EmulatorRequest) => {
    if (request.type === 'expire') emulator.expireAccessTokens();
    if (request.type === 'close') {
      void emulator.close().then(() => process.exit(0));
      return;
    }
    if (request.type === 'login-times') {
      const at = emulator.calls.filter((call) => call.route === 'login').map((call) => call.at);
      process.send?.({ id: request.id, loginTimes: at });
      return;
    }
    process.send?.({ id: request.id, counters: { ...emulator.counters } });
  });
  process.on('disconnect', () => process.exit(0));
  process.send?.({ id: 0, url: emulator.url });
}

void main();
