import axios from 'axios';
import type { AxiosInstance } from 'axios';
import { attachTokenAuth } from '../../lib/index.js';
import type { TokenAuth, TokenStore } from '../../lib/index.js';
import type { TokenServiceEmulator } from '../../lib/emulator/index.js';
import { E2E_PASSWORD, E2E_USER } from './emulator.js';
import { burst, fulfilled } from './flow.js';

const ORDERS = '/allocation/api/v1/tracking/order-list';

/**
 * Two holders of one shared store, each with its own store object as two processes would have, against one
 * emulator: 20 concurrent requests each, an expiry, 20 more each, then a third holder that starts later. Asserts
 * one login and one refresh between them, and none for the latecomer, which finds the pair in the store.
 * `track` receives the handles to eject after the test.
 */
export async function expectOneClientForTwoHolders(
  service: TokenServiceEmulator,
  store: () => TokenStore,
  track: (auth: TokenAuth) => void,
): Promise<void> {
  const attach = (): { api: AxiosInstance; auth: TokenAuth } => {
    const api = axios.create({ baseURL: service.url });
    const auth = attachTokenAuth(api, { credentials: { username: E2E_USER, password: E2E_PASSWORD }, store: store() });
    track(auth);
    return { api, auth };
  };
  const one = attach();
  const two = attach();
  const round = () => Promise.all([burst(20, () => one.api.get(ORDERS)), burst(20, () => two.api.get(ORDERS))]);

  const first = await round();
  expect(first.map(fulfilled)).toEqual([20, 20]);
  expect(service.counters).toMatchObject({ logins: 1, refreshes: 0 });

  service.expireAccessTokens();
  const second = await round();
  expect(second.map(fulfilled)).toEqual([20, 20]);
  expect(service.counters).toMatchObject({ logins: 1, refreshes: 1 });
  expect(one.auth.stats().logins + two.auth.stats().logins).toBe(1);
  expect(one.auth.stats().refreshes + two.auth.stats().refreshes).toBe(1);

  // A process that starts later finds the pair in the store.
  const three = attach();
  expect((await three.api.get(ORDERS)).status).toBe(200);
  expect(service.counters).toMatchObject({ logins: 1, refreshes: 1 });
  expect(three.auth.stats()).toMatchObject({ logins: 0, refreshes: 0 });
}
