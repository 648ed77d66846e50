// Token calls whose connection fails: the error codes another try cures (a refused or reset connection, a DNS lookup
// that timed out) are retried, those it would meet again (a name that does not resolve, a certificate) are not; and
// connections dropped by a real server, over real sockets.
import { AxiosError } from 'axios';
import nock from 'nock';
import type { TokenAuthOptions } from '../lib/index.js';
import { isRetried } from '../lib/token-calls/retries.js';
import { closeEmulatorsAfterEach, e2e } from './helpers/emulator.js';
import { burst, fulfilled, rig } from './helpers/setup.js';
import { codeOf } from './helpers/token-calls.js';
import type { Route } from './helpers/token-calls.js';

describe('retries of token calls', () => {
  /** A connection that fails with `code`, as Node reports it. */
  const failing = (code: string): Error => Object.assign(new Error(`connect ${code} api.test`), { code });

  // is-retry-allowed 2.2.0's list, through which axios-retry decided before the plugin wrote its retries out.
  const DENIED = [
    'ENOTFOUND',
    'ENETUNREACH',
    'UNABLE_TO_GET_ISSUER_CERT',
    'UNABLE_TO_GET_CRL',
    'UNABLE_TO_DECRYPT_CERT_SIGNATURE',
    'UNABLE_TO_DECRYPT_CRL_SIGNATURE',
    'UNABLE_TO_DECODE_ISSUER_PUBLIC_KEY',
    'CERT_SIGNATURE_FAILURE',
    'CRL_SIGNATURE_FAILURE',
    'CERT_NOT_YET_VALID',
    'CERT_HAS_EXPIRED',
    'CRL_NOT_YET_VALID',
    'CRL_HAS_EXPIRED',
    'ERROR_IN_CERT_NOT_BEFORE_FIELD',
    'ERROR_IN_CERT_NOT_AFTER_FIELD',
    'ERROR_IN_CRL_LAST_UPDATE_FIELD',
    'ERROR_IN_CRL_NEXT_UPDATE_FIELD',
    'OUT_OF_MEM',
    'DEPTH_ZERO_SELF_SIGNED_CERT',
    'SELF_SIGNED_CERT_IN_CHAIN',
    'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
    'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
    'CERT_CHAIN_TOO_LONG',
    'CERT_REVOKED',
    'INVALID_CA',
    'PATH_LENGTH_EXCEEDED',
    'INVALID_PURPOSE',
    'CERT_UNTRUSTED',
    'CERT_REJECTED',
    'HOSTNAME_MISMATCH',
  ];
  const RETRIED = ['ECONNREFUSED', 'ECONNRESET', 'EAI_AGAIN', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ERR_NETWORK'];

  it('tells the codes another try cures from those it would meet again, as is-retry-allowed did', () => {
    const fault = (code: string) => new AxiosError(`failed with ${code}`, code);
    const retried = (code: string) => isRetried(fault(code), { timeoutMs: 1_000 });
    expect(DENIED.filter(retried)).toEqual([]);
    expect(RETRIED.filter((code) => !retried(code))).toEqual([]);
  });

  it.each(['ENOTFOUND', 'ENETUNREACH', 'CERT_HAS_EXPIRED', 'DEPTH_ZERO_SELF_SIGNED_CERT', 'HOSTNAME_MISMATCH'])(
    'does not retry a login that failed with %s, which another try would meet again',
    async (code) => {
      const { service, api } = rig({ tokenRetries: 3 });
      service.loginFaults.push(failing(code));

      const error = await api.get('/orders').catch((e: unknown) => e);

      expect(codeOf(error)).toBe('TOKEN_SERVICE_UNAVAILABLE');
      expect(((error as Error).cause as { code?: string }).code).toBe(code);
      expect(service.counters.loginCalls).toBe(1);
    },
  );

  it.each(['ECONNREFUSED', 'ECONNRESET', 'EAI_AGAIN'])(
    'retries a login that failed with %s, and it succeeds',
    async (code) => {
      const { service, api } = rig({ tokenRetries: 3 });
      service.loginFaults.push(failing(code));

      await expect(api.get('/orders')).resolves.toMatchObject({ status: 200 });

      expect(service.counters.loginCalls).toBe(2);
      expect(service.counters.logins).toBe(1);
    },
  );
});

// Connection errors come from real sockets: nock 14's simulated socket errors are unreliable.
describe('token calls whose connection drops, over real sockets', () => {
  closeEmulatorsAfterEach();
  beforeEach(() => {
    nock.enableNetConnect('127.0.0.1');
  });

  async function needingOnEmulator(route: Route, options: Partial<TokenAuthOptions> = {}) {
    const setup = await e2e(options);
    if (route === 'token') {
      await setup.api.get('/prime');
      setup.emulator.expireAccessTokens();
    }
    return setup;
  }

  it.each<Route>(['login', 'token'])(
    'retries a %s call whose connection drops, and every waiter gets the one success',
    async (route) => {
      const { emulator: service, api } = await needingOnEmulator(route);
      service.inject(route, 'drop', 2);

      const results = await burst(5, (i) => api.get(`/orders/${i}`));

      expect(fulfilled(results)).toBe(5);
      expect(service.calls.filter((call) => call.route === route)).toHaveLength(3);
      expect(service.counters).toMatchObject(
        route === 'login' ? { logins: 1, refreshes: 0 } : { logins: 1, refreshes: 1 },
      );
    },
  );

  it('makes one call with tokenRetries: 0 when the connection drops, and recovers on the next request', async () => {
    const { emulator: service, api } = await needingOnEmulator('login', { tokenRetries: 0 });
    service.inject('login', 'drop');

    const error = await api.get('/orders').catch((e: unknown) => e);

    expect(codeOf(error)).toBe('TOKEN_SERVICE_UNAVAILABLE');
    expect(((error as Error).cause as { code?: string }).code).toBe('ECONNRESET');
    expect(service.counters.tokenCalls).toBe(1);
    await expect(api.get('/after')).resolves.toMatchObject({ status: 200 });
    expect(service.counters).toMatchObject({ tokenCalls: 2, logins: 1 });
  });
});
