// The axios errors of data calls that reach the caller are masked, and still usable: a 401 the replay did not cure, a
// token a custom applyToken put elsewhere, an error other than 401, a request aborted while it waits for a renewal.
import axios from 'axios';
import type { AxiosError } from 'axios';
import nock from 'nock';
import { isTokenAuthError } from '../lib/index.js';
import { events, leakCheckForFile } from './helpers/leak-checks.js';
import { recordEvents, secretsOf } from './helpers/scan-secrets.js';
import { API } from './helpers/service.js';
import { rig, until } from './helpers/setup.js';
import { failureOf } from './helpers/settled.js';

const expectNothingLeaked = leakCheckForFile();

describe('axios errors of data calls that reach the caller', () => {
  it('a 401 the replay did not cure is a masked AxiosError that user code can still read and retry', async () => {
    const { service, api, auth } = rig();
    const recorded = recordEvents(auth);
    await api.get('/prime');
    service.alwaysUnauthorized.add('/reports/7');

    const error = (await failureOf(api.post('/reports/7', { format: 'pdf' }))) as AxiosError;

    expect(axios.isAxiosError(error)).toBe(true);
    expect(isTokenAuthError(error)).toBe(false);
    expect(error.response?.status).toBe(401);
    expect(error.request).toBeTruthy();
    expect(error.config?.headers.Authorization).toMatch(/^Bearer \S/);
    expect(service.received.filter((entry) => entry.path === '/reports/7')).toHaveLength(2);
    expect(service.counters.refreshCalls).toBe(1);
    expect(events(recorded)).toEqual(['login', 'refresh', 'replay']);
    expectNothingLeaked(error, recorded, secretsOf(service));

    // The user retries with the config from the error: the plugin puts the current token back on it.
    service.alwaysUnauthorized.delete('/reports/7');
    const retried = await api.request(error.config!);
    const current = (await auth.getTokens())?.access;

    expect(retried.status).toBe(200);
    expect(retried.data).toMatchObject({ method: 'POST', path: '/reports/7', body: '{"format":"pdf"}' });
    expect(service.received.at(-1)).toMatchObject({ path: '/reports/7', authorization: `Bearer ${current}` });
    expect(current).toBe(service.issued[2]);
    expect(service.counters.refreshCalls).toBe(1);
    expect(auth.stats()).toMatchObject({ logins: 1, refreshes: 1, replays: 1, failures: 0 });
  });

  it('masks the token wherever a custom applyToken put it (another header, the query)', async () => {
    const { service, api, auth } = rig({
      applyToken: (config, access) => {
        config.headers.set('X-Api-Token', access);
        config.params = { ...(config.params as Record<string, unknown> | undefined), access_token: access };
      },
    });
    const recorded = recordEvents(auth);

    // The fake service wants a Bearer header, so it refuses this token and its successor: the replay's 401 reaches the caller.
    const error = (await failureOf(api.get('/reports', { params: { year: 2026 } }))) as AxiosError;

    expect(axios.isAxiosError(error)).toBe(true);
    expect(error.response?.status).toBe(401);
    expect(error.config?.params).toMatchObject({ year: 2026 });
    expect(error.config?.headers['X-Api-Token']).toEqual(expect.any(String));
    expect(
      service.received.filter((entry) => entry.route === 'data').map((entry) => entry.headers['x-api-token']),
    ).toEqual([service.issued[0], service.issued[2]]);
    expect(events(recorded)).toEqual(['login', 'refresh', 'replay']);
    expectNothingLeaked(error, recorded, secretsOf(service));
  });

  it('an error other than 401 of a request that carried the token is masked as well', async () => {
    nock(API).get('/unstable').reply(503, { detail: 'maintenance' });
    const { service, api, auth } = rig();
    const recorded = recordEvents(auth);
    await api.get('/prime');

    const error = (await failureOf(api.get('/unstable'))) as AxiosError;

    expect(axios.isAxiosError(error)).toBe(true);
    expect(error.response?.status).toBe(503);
    expect(error.request).toBeTruthy();
    expect(error.config?.headers.Authorization).toMatch(/^Bearer \S/);
    expect(events(recorded)).toEqual(['login']);
    expect(service.issued).toHaveLength(2);
    expectNothingLeaked(error, recorded, secretsOf(service));
  });

  it('a request aborted while it waits for the renewal its 401 started does not carry the refused token', async () => {
    const { service, api, auth } = rig();
    const recorded = recordEvents(auth);
    await api.get('/prime');
    service.expireAccessTokens();
    service.tokenDelayMs = 50;
    const controller = new AbortController();

    const pending = failureOf(api.get('/orders', { signal: controller.signal }));
    await until(() => service.counters.refreshCalls === 1);
    controller.abort();
    const error = (await pending) as AxiosError;

    expect(axios.isCancel(error)).toBe(true);
    expect(service.received.filter((entry) => entry.path === '/orders')).toHaveLength(1);
    await until(() => service.issued.length === 4);
    expectNothingLeaked(error, recorded, secretsOf(service));
  });
});
