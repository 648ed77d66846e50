// The origins the token goes to by default, those of baseURL and authBaseURL: an absolute URL on them however it is
// spelled, nothing to a third-party host or one that only looks like theirs (its 401 left alone, no login for it),
// and nothing carried along a redirect from an allowed origin to a third party.
import axios from 'axios';
import nock from 'nock';
import { THIRD, watchedHost } from './helpers/origins.js';
import { API, FakeTokenService } from './helpers/service.js';
import { rig } from './helpers/setup.js';
import { failureOf } from './helpers/settled.js';

describe('default origins: those of baseURL and authBaseURL', () => {
  it('sends the token to an absolute URL on the baseURL origin, however it is spelled', async () => {
    const { service, api } = rig();

    await api.get(`${API}/a`);
    await api.get('https://API.test:443/b');

    const access = service.issued[0];
    expect(
      service.received.filter((entry) => entry.route === 'data').map((entry) => [entry.path, entry.authorization]),
    ).toEqual([
      ['/a', `Bearer ${access}`],
      ['/b', `Bearer ${access}`],
    ]);
  });

  it('sends nothing to a third-party host on the same instance, and leaves its 401 alone', async () => {
    const { service, api, auth } = rig();
    const third = watchedHost(THIRD);
    await api.get('/prime');

    const error = await failureOf(api.get(`${THIRD}/webhook`), axios.isAxiosError);

    expect(error.response?.status).toBe(401);
    expect(third).toEqual([undefined]);
    expect([service.counters.loginCalls, service.counters.refreshCalls, service.counters.dataCalls]).toEqual([1, 0, 1]);
    expect(auth.stats()).toMatchObject({ logins: 1, refreshes: 0, replays: 0, failures: 0 });
  });

  it('does not even log in for a request that will not carry the token', async () => {
    const { service, api, auth } = rig();
    const third = watchedHost(THIRD);

    const error = await failureOf(api.get(`${THIRD}/webhook`), axios.isAxiosError);

    expect(error.response?.status).toBe(401);
    expect(third).toEqual([undefined]);
    expect(service.received).toHaveLength(0);
    expect(await auth.getTokens()).toBeNull();
  });

  it('leaves an Authorization header the caller set for a third-party host as it is', async () => {
    const { service, api } = rig();
    const third = watchedHost(THIRD);
    await api.get('/prime');

    await failureOf(
      api.get(`${THIRD}/webhook`, { headers: { Authorization: 'Token partner-key' } }),
      axios.isAxiosError,
    );

    expect(third).toEqual(['Token partner-key']);
    expect(service.counters.refreshCalls).toBe(0);
  });

  it.each([
    ['another scheme', 'http://api.test', 'http://api.test/orders'],
    ['another port', 'https://api.test:8443', 'https://api.test:8443/orders'],
    ['a host that only starts like it', 'https://api.test.evil.test', 'https://api.test.evil.test/orders'],
    ['a subdomain', 'https://eu.api.test', 'https://eu.api.test/orders'],
    ['userinfo that names it', 'https://evil.test', 'https://api.test@evil.test/orders'],
  ])('sends nothing to %s of the baseURL host, and leaves its 401 alone', async (_what, origin, url) => {
    const { service, api, auth } = rig();
    const other = watchedHost(origin);
    await api.get('/prime');

    const error = await failureOf(api.get(url), axios.isAxiosError);

    expect(error.response?.status).toBe(401);
    expect(other).toHaveLength(1);
    expect(other[0] ?? '').not.toMatch(/^Bearer/);
    for (const token of service.issued) expect(other[0] ?? '').not.toContain(token);
    expect(service.counters.refreshCalls).toBe(0);
    expect(auth.stats()).toMatchObject({ logins: 1, refreshes: 0, replays: 0, failures: 0 });
  });

  it('includes the authBaseURL origin when the token service lives elsewhere', async () => {
    const AUTH = 'https://auth.test';
    const DATA = 'https://data.test';
    const service = new FakeTokenService(AUTH, DATA);
    const { api } = rig({ authBaseURL: AUTH }, service);
    const authHost = watchedHost(AUTH, service);
    const third = watchedHost(THIRD, service);

    await api.get(`${AUTH}/profile`);
    await failureOf(api.get(`${THIRD}/profile`), axios.isAxiosError);

    expect(authHost).toEqual([`Bearer ${service.issued[0]}`]);
    expect(third).toEqual([undefined]);
  });

  describe('a redirect from an allowed origin to a third-party host', () => {
    const PARTNER = 'https://partner.test';

    /** The partner answers every GET /moved with a redirect to the third party, recording what it got. */
    function redirecting(): Array<string | undefined> {
      const seen: Array<string | undefined> = [];
      nock(PARTNER)
        .persist()
        .get('/moved')
        .reply(function (this: nock.ReplyFnContext) {
          seen.push(this.req.headers.authorization);
          return [302, '', { Location: `${THIRD}/landing` }];
        });
      return seen;
    }

    it('does not carry the token to the third party', async () => {
      const partner = redirecting();
      const { api } = rig({ origins: [API, PARTNER] });
      const third = watchedHost(THIRD);

      const error = await failureOf(api.get(`${PARTNER}/moved`), axios.isAxiosError);

      expect(error.response?.status).toBe(401);
      // Every request the partner got (one, or two if its 401 was taken for ours) was redirected once.
      expect(partner.length).toBeGreaterThan(0);
      expect(third).toHaveLength(partner.length);
      for (const sent of partner) expect(sent).toMatch(/^Bearer /);
      for (const sent of third) expect(sent).toBeUndefined();
    });

    it("leaves the third party's 401 alone: no renewal, no replay", async () => {
      const partner = redirecting();
      const { service, api, auth } = rig({ origins: [API, PARTNER] });
      const third = watchedHost(THIRD);

      const error = await failureOf(api.get(`${PARTNER}/moved`), axios.isAxiosError);

      expect(error.response?.status).toBe(401);
      expect(partner).toEqual([`Bearer ${service.issued[0]}`]);
      expect(third).toEqual([undefined]);
      expect(service.counters.refreshCalls).toBe(0);
      expect(auth.stats()).toMatchObject({ logins: 1, refreshes: 0, replays: 0, failures: 0 });
    });
  });
});
