import axios from 'axios';
import type { AxiosInstance } from 'axios';
import { attachTokenAuth } from '../../lib/index.js';
import type { TokenAuth, TokenAuthOptions } from '../../lib/index.js';
import { API, FakeTokenService, PASSWORD, USERNAME } from './service.js';

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
