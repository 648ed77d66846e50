// Timeouts of the token calls: a login or a token call that never answers fails every waiter after `tokenTimeoutMs`
// with TOKEN_SERVICE_UNAVAILABLE, and is not retried; each retry of a failed call has the whole `tokenTimeoutMs`.
import { isAxiosError } from 'axios';
import { burst, rig } from './helpers/setup.js';
import { reasons } from './helpers/settled.js';
import { callsTo, codeOf, faultsOf, loginsBefore, needing } from './helpers/token-calls.js';
import type { Route } from './helpers/token-calls.js';

// The budgets are seconds, far above the few milliseconds a nock answer takes: with 200 ms, a busy machine (a cold
// cache, the other worker compiling, npm run test:busy) timed out the calls that had been answered.
describe('timeouts of token calls', () => {
  it.each<Route>(['login', 'token'])(
    'fails a %s call that never answers after tokenTimeoutMs with TOKEN_SERVICE_UNAVAILABLE, and does not retry it',
    async (route) => {
      const setup = rig({ tokenTimeoutMs: 2_000, tokenRetries: 3 });
      const { service, api } = setup;
      await needing(route, setup);
      faultsOf(setup, route).push('hang');

      const results = await burst(5, (i) => api.get(`/orders/${i}`));

      const errors = reasons(results);
      expect(errors.map(codeOf)).toEqual(Array(5).fill('TOKEN_SERVICE_UNAVAILABLE'));
      expect(new Set(errors).size).toBe(1);
      const error = errors[0] as Error;
      expect(error.message).toMatch(/timed out after 2000 ms/);
      expect(isAxiosError(error.cause) && error.cause.code).toBe('ECONNABORTED');
      expect(callsTo(service, route)).toBe(1);
      expect(service.counters.loginCalls).toBe(loginsBefore(route) + (route === 'login' ? 1 : 0));

      // The service answers again: the next request renews by itself.
      await expect(api.get('/after')).resolves.toMatchObject({ status: 200 });
      expect(callsTo(service, route)).toBe(2);
    },
  );

  it('gives each retry its own tokenTimeoutMs: a 503 then a hang make two calls and end in a timeout', async () => {
    const { service, api } = rig({ tokenTimeoutMs: 2_000, tokenRetries: 3 });
    service.loginFaults.push([503, { detail: 'down' }], 'hang');

    const error = await api.get('/orders').catch((e: unknown) => e);

    expect(codeOf(error)).toBe('TOKEN_SERVICE_UNAVAILABLE');
    expect((error as Error).message).toMatch(/timed out after 2000 ms/);
    expect(service.counters.loginCalls).toBe(2);
    expect(service.counters.logins).toBe(0);
  });

  it('gives a retry the whole tokenTimeoutMs, not what the failed try left of it', async () => {
    // Each answer takes 2 s of the 3 allowed: a retry held to the remaining ~1 s would time out.
    const { service, api } = rig({ tokenTimeoutMs: 3_000, tokenRetries: 3 });
    service.tokenDelayMs = 2_000;
    service.loginFaults.push([503, { detail: 'down' }]);

    await expect(api.get('/orders')).resolves.toMatchObject({ status: 200 });

    expect(service.counters.loginCalls).toBe(2);
    expect(service.counters.logins).toBe(1);
  });
});
