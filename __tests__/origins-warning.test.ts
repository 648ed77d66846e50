// A refusal from an origin the token does not go to is said in one `warning` per origin, naming the origin and the
// `origins` option (or on console.warn when nobody listens), and left alone: on an instance and on the global axios.
import axios from 'axios';
import nock from 'nock';
import { attachTokenAuth } from '../lib/index.js';
import { PASSWORD, USERNAME } from './helpers/credentials.js';
import { THIRD, watchedHost } from './helpers/origins.js';
import type { OriginWarning } from './helpers/origins.js';
import { API, FakeTokenService } from './helpers/service.js';
import { rig } from './helpers/setup.js';
import { failureOf } from './helpers/settled.js';

describe('a refusal outside origins is said, once per origin', () => {
  const AUTH = 'https://auth.test';
  const DATA = 'https://data.test';

  it('names the origin and the `origins` option in one warning per origin, and leaves the refusals alone', async () => {
    const { service, api, auth } = rig();
    const warnings: OriginWarning[] = [];
    auth.on('warning', (warning) => warning.code === 'ORIGIN_NOT_IN_ORIGINS' && warnings.push(warning));
    watchedHost(THIRD);
    watchedHost('https://other.test');

    const refused = await Promise.all(
      [`${THIRD}/a`, `${THIRD}/b`, 'https://other.test/c', `${THIRD}/d`].map((url) =>
        failureOf(api.get(url), axios.isAxiosError),
      ),
    );

    expect(refused.map((error) => error.response?.status)).toEqual([401, 401, 401, 401]);
    expect(warnings.map(({ code, origin }) => [code, origin])).toEqual([
      ['ORIGIN_NOT_IN_ORIGINS', THIRD],
      ['ORIGIN_NOT_IN_ORIGINS', 'https://other.test'],
    ]);
    expect(warnings[0]!.message).toBe(
      `${THIRD} refused a request that went without the access token: that origin is not in \`origins\` (${API}). ` +
        `If it should get the token, list it: \`origins: [..., '${THIRD}']\` (without \`origins\`, only the origins of ` +
        "`authBaseURL` and of the instance's `baseURL` get it). Said once per origin.",
    );
    expect(service.received).toHaveLength(0);
    expect(auth.stats()).toEqual({
      logins: 0,
      refreshes: 0,
      replays: 0,
      failures: 0,
      waiting: 0,
      budget: { login: 10, refresh: 30 },
    });
  });

  it('says nothing of an answer that is no token refusal, nor of a request sent with skipAuth', async () => {
    const { api, auth } = rig();
    const warnings: unknown[] = [];
    auth.on('warning', (warning) => warnings.push(warning));
    nock(THIRD).get('/missing').reply(404).get('/open').reply(200).get('/skipped').reply(401);

    await failureOf(api.get(`${THIRD}/missing`), axios.isAxiosError);
    await api.get(`${THIRD}/open`);
    await failureOf(api.get(`${THIRD}/skipped`, { skipAuth: true }), axios.isAxiosError);

    expect(warnings).toEqual([]);
  });

  it('asks isTokenRejected whether a refusal outside origins looks like a token’s', async () => {
    const { auth, api } = rig({
      isTokenRejected: (error) => (error.response?.data as { code?: string })?.code === 'expired',
    });
    const warnings: string[] = [];
    auth.on('warning', (warning) => warning.code === 'ORIGIN_NOT_IN_ORIGINS' && warnings.push(warning.origin));
    nock(THIRD).get('/a').reply(403, { code: 'forbidden' }).get('/b').reply(403, { code: 'expired' });

    await failureOf(api.get(`${THIRD}/a`), axios.isAxiosError);
    expect(warnings).toEqual([]);
    await failureOf(api.get(`${THIRD}/b`), axios.isAxiosError);
    expect(warnings).toEqual([THIRD]);
  });

  it('goes to console.warn when nobody listens to `warning`, once', async () => {
    const { api } = rig();
    watchedHost(THIRD);
    const warned = jest.spyOn(console, 'warn').mockImplementation(() => undefined);
    try {
      await failureOf(api.get(`${THIRD}/a`), axios.isAxiosError);
      await failureOf(api.get(`${THIRD}/b`), axios.isAxiosError);

      expect(warned.mock.calls).toEqual([
        [expect.stringMatching(/^axios-token-keeper: https:\/\/third\.test refused/)],
      ]);
    } finally {
      warned.mockRestore();
    }
  });

  it('on the global axios, with the API on another host and no `origins`: the first 401 names the missing origin', async () => {
    const service = new FakeTokenService(AUTH, DATA);
    const auth = attachTokenAuth(axios, { credentials: { username: USERNAME, password: PASSWORD }, authBaseURL: AUTH });
    try {
      const warnings: OriginWarning[] = [];
      auth.on('warning', (warning) => warning.code === 'ORIGIN_NOT_IN_ORIGINS' && warnings.push(warning));

      const error = await failureOf(axios.get(`${DATA}/orders`), axios.isAxiosError);

      expect(error.response?.status).toBe(401);
      expect(warnings.map(({ origin }) => origin)).toEqual([DATA]);
      expect(warnings[0]!.message).toContain(`not in \`origins\` (${AUTH})`);
      expect(service.counters.loginCalls).toBe(0);
    } finally {
      auth.eject();
    }
  });

  it('on the global axios with `origins` listing the API: one login, the token on every request, nothing warned', async () => {
    const service = new FakeTokenService(AUTH, DATA);
    const auth = attachTokenAuth(axios, {
      credentials: { username: USERNAME, password: PASSWORD },
      authBaseURL: AUTH,
      origins: [DATA],
    });
    try {
      const warnings: unknown[] = [];
      auth.on('warning', (warning) => warnings.push(warning));

      await Promise.all([axios.get(`${DATA}/a`), axios.post(`${DATA}/b`, { qty: 1 })]);

      expect(service.counters).toMatchObject({ loginCalls: 1, refreshCalls: 0, dataCalls: 2 });
      expect(service.received.filter((entry) => entry.route === 'data').map((entry) => entry.authorization)).toEqual([
        `Bearer ${service.issued[0]}`,
        `Bearer ${service.issued[0]}`,
      ]);
      expect(warnings).toEqual([]);
    } finally {
      auth.eject();
    }
    await failureOf(axios.get(`${DATA}/after-eject`), axios.isAxiosError);
    expect(service.received.at(-1)?.authorization).toBeUndefined();
  });
});
