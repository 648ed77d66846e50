// A pair the service refused is not sent again while its renewal fails: at most one 401 per refused token per holder.
// Later requests wait for the next renewal, or fail with its error, unsent; a pair whose refusal renewing does not
// cure (one endpoint's permission) goes on to the other endpoints as before.
import { isTokenAuthError } from '../lib/index.js';
import { FakeTokenService } from './helpers/service.js';
import { burst, fulfilled, rig } from './helpers/setup.js';
import { failureOf } from './helpers/settled.js';

/** The data calls that carried `token` and were refused. */
function refusedWith(service: FakeTokenService, token: string): number {
  return service.received.filter((entry) => entry.route === 'data' && entry.authorization === `Bearer ${token}`).length;
}

describe('a refused pair while its renewal fails', () => {
  it('is sent once: the requests that follow fail with the renewal’s error unsent, then go with the next pair', async () => {
    const { service, api, auth } = rig({ tokenRetries: 0 });
    await api.get('/orders/0');
    const refused = (await auth.getTokens())!.access;
    service.expireAccessTokens();
    // The token service is down for the next three token calls.
    service.tokenFaults.push([503, { detail: 'down' }], [503, { detail: 'down' }], [503, { detail: 'down' }]);

    const first = await failureOf(api.get('/orders/1'));
    const later = [await failureOf(api.get('/orders/2')), await failureOf(api.get('/orders/3'))];

    expect([first, ...later].map((error) => isTokenAuthError(error) && error.code)).toEqual(
      Array(3).fill('TOKEN_SERVICE_UNAVAILABLE'),
    );
    // One 401 for the refused token: the later requests each waited for a renewal of their own and sent nothing.
    expect(refusedWith(service, refused)).toBe(2);
    expect(service.counters).toMatchObject({ unauthorized: 1, refreshCalls: 3, loginCalls: 1, dataCalls: 2 });

    // The service is back: the next request renews and goes with the new pair.
    const answer = await api.get('/orders/4');
    expect(answer.status).toBe(200);
    expect(service.counters).toMatchObject({ unauthorized: 1, refreshes: 1, dataCalls: 3 });
    expect(refusedWith(service, refused)).toBe(2);
  });

  it('is not sent by a burst after its renewal failed: the burst shares one renewal, and its failure, unsent', async () => {
    const { service, api, auth } = rig({ tokenRetries: 0 });
    await api.get('/orders/0');
    const refused = (await auth.getTokens())!.access;
    service.expireAccessTokens();
    service.tokenFaults.push([503, { detail: 'down' }], [503, { detail: 'down' }]);
    await failureOf(api.get('/orders/1'));

    const results = await burst(10, (i) => api.get(`/orders/${i + 2}`));

    expect(fulfilled(results)).toBe(0);
    expect(service.counters).toMatchObject({ unauthorized: 1, refreshCalls: 2, dataCalls: 2 });
    expect(refusedWith(service, refused)).toBe(2);
  });

  it('still goes to the other endpoints when renewing did not cure its refusal (a permission of one endpoint)', async () => {
    const { service, api } = rig({ tokenRetries: 0 });
    service.alwaysUnauthorized.add('/forbidden');
    await api.get('/orders/0');

    // Refused, renewed, refused again with the new pair: renewing does not cure this endpoint.
    expect(isTokenAuthError(await failureOf(api.get('/forbidden')))).toBe(false);
    const results = await burst(5, (i) => api.get(`/orders/${i + 1}`));

    expect(fulfilled(results)).toBe(5);
    expect(service.counters).toMatchObject({ refreshes: 1, unauthorized: 2 });
  });
});
