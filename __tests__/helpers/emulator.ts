import axios from 'axios';
import type { AxiosInstance } from 'axios';
import { attachTokenAuth } from '../../lib/index.js';
import type { TokenAuth, TokenAuthOptions } from '../../lib/index.js';
import { startEmulator } from '../../lib/emulator/index.js';
import type { EmulatorOptions, TokenServiceEmulator } from '../../lib/emulator/index.js';
import { E2E_PASSWORD, E2E_USER } from '../../harness/account.js';

export { E2E_PASSWORD, E2E_USER };

export interface E2ERig {
  emulator: TokenServiceEmulator;
  api: AxiosInstance;
  auth: TokenAuth;
}

const running = new Set<TokenServiceEmulator>();

/** Closes every emulator the test started, after each test of the file that calls it. */
export function closeEmulatorsAfterEach(): void {
  afterEach(async () => {
    await Promise.all([...running].map((emulator) => emulator.close()));
    running.clear();
  });
}

/** An emulator that knows the test account, for the caller to close ({@link emulator}'s are closed after each test). */
export function accountEmulator(options: EmulatorOptions = {}): Promise<TokenServiceEmulator> {
  return startEmulator({ users: { [E2E_USER]: E2E_PASSWORD }, ...options });
}

export async function emulator(options: EmulatorOptions = {}): Promise<TokenServiceEmulator> {
  const started = await accountEmulator(options);
  running.add(started);
  return started;
}

/** An emulator, an axios instance on it and the plugin attached. */
export async function e2e(
  options: Partial<TokenAuthOptions> = {},
  emulatorOptions: EmulatorOptions = {},
): Promise<E2ERig> {
  const started = await emulator(emulatorOptions);
  const api = axios.create({ baseURL: started.url });
  const auth = attachTokenAuth(api, {
    credentials: { username: E2E_USER, password: E2E_PASSWORD },
    tokenRetryDelayMs: 5,
    ...options,
  });
  return { emulator: started, api, auth };
}

/** The refresh tokens the emulator's token calls carried, in order. */
export function refreshTokensSent(service: Pick<TokenServiceEmulator, 'calls'>): Array<string | undefined> {
  return service.calls
    .filter((call) => call.route === 'token')
    .map((call) => (JSON.parse(call.body) as { refresh_token?: string }).refresh_token);
}

/** The refresh tokens the emulator was sent, each counted once: fewer than the token calls when one was sent twice. */
export function refreshTokenCounts(service: Pick<TokenServiceEmulator, 'calls'>): { calls: number; distinct: number } {
  const sent = refreshTokensSent(service);
  return { calls: sent.length, distinct: new Set(sent).size };
}
