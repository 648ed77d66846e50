import axios from 'axios';
import type { AxiosInstance } from 'axios';
import nock from 'nock';
import { attachTokenAuth } from '../../lib/index.js';
import type { TokenAuth, TokenAuthOptions } from '../../lib/index.js';
import { API, FakeTokenService, PASSWORD, USERNAME } from './service.js';

/** nock.disableNetConnect() and nock.cleanAll() around every test of the file that calls it. */
export function useNock(): void {
  beforeEach(() => {
    nock.disableNetConnect();
  });
  afterEach(() => {
    nock.cleanAll();
    nock.enableNetConnect();
  });
}

export interface Rig {
  service: FakeTokenService;
  api: AxiosInstance;
  auth: TokenAuth;
}

/** A fake service, an instance on it and the plugin attached, with fast retries unless the test says otherwise. */
export function rig(options: Partial<TokenAuthOptions> = {}, service = new FakeTokenService()): Rig {
  const api = axios.create({ baseURL: service.dataBase });
  const auth = attachTokenAuth(api, { credentials: { username: USERNAME, password: PASSWORD }, tokenRetryDelayMs: 1, ...options });
  return { service, api, auth };
}

export { API };

/** Fires `n` calls at once and waits for all of them. */
export async function burst<T>(n: number, call: (index: number) => Promise<T>): Promise<PromiseSettledResult<T>[]> {
  return Promise.allSettled(Array.from({ length: n }, (_, index) => call(index)));
}

export function fulfilled<T>(results: PromiseSettledResult<T>[]): number {
  return results.filter((result) => result.status === 'fulfilled').length;
}

/** A clock the test moves by hand. */
export function manualClock(start = Date.parse('2026-01-01T00:00:00Z')): { now: () => number; advance: (ms: number) => void } {
  let time = start;
  return { now: () => time, advance: (ms) => void (time += ms) };
}

/** Waits until `condition` holds, checking every few milliseconds; fails after `timeoutMs`. */
export async function until(condition: () => boolean, timeoutMs = 2000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
}
