import axios from 'axios';
import type { AxiosInstance } from 'axios';
import nock from 'nock';
import { attachTokenAuth } from '../../lib/index.js';
import type { TokenAuth, TokenAuthOptions } from '../../lib/index.js';
import { API, FakeTokenService, PASSWORD, USERNAME } from './service.js';

/**
 * nock.disableNetConnect() and nock.cleanAll() around every test of the file that calls it, and nock's patch of
 * Node's http taken off after the file, so it cannot leak into the next file the jest worker runs.
 */
export function useNock(): void {
  beforeAll(() => {
    if (!nock.isActive()) nock.activate();
  });
  afterAll(() => {
    nock.restore();
  });
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
  const auth = attachTokenAuth(api, {
    credentials: { username: USERNAME, password: PASSWORD },
    tokenRetryDelayMs: 1,
    ...options,
  });
  return { service, api, auth };
}

export { API };

export { burst, fulfilled, manualClock, until } from './flow.js';
