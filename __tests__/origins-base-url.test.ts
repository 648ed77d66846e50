// The token service on one host and the API on another, end to end; and, without `origins`, the instance's baseURL
// as each request is sent: set after attach, assigned anew, or `instance.defaults` replaced whole.
import axios from 'axios';
import { attachTokenAuth } from '../lib/index.js';
import { PASSWORD, USERNAME } from './helpers/credentials.js';
import { watchedHost } from './helpers/origins.js';
import { FakeTokenService, LOGIN, TOKEN } from './helpers/service.js';
import { rig } from './helpers/setup.js';
import { failureOf } from './helpers/settled.js';

describe('auth and data on different hosts', () => {
  const AUTH = 'https://auth.test';
  const DATA = 'https://data.test';

  it('logs in and renews at authBaseURL, and sends the token to the data host, end to end', async () => {
    const service = new FakeTokenService(AUTH, DATA);
    const { api, auth } = rig({ authBaseURL: AUTH }, service);

    await api.get('/orders');
    service.expireAccessTokens();
    const response = await api.post('/orders', { qty: 2 });

    expect(response.status).toBe(200);
    const [access1, refresh1, access2] = service.issued;
    expect(service.received.map((entry) => [entry.origin, entry.route, entry.path, entry.authorization])).toEqual([
      [AUTH, 'login', LOGIN, expect.stringMatching(/^Basic /)],
      [DATA, 'data', '/orders', `Bearer ${access1}`],
      [DATA, 'data', '/orders', `Bearer ${access1}`],
      [AUTH, 'token', TOKEN, undefined],
      [DATA, 'data', '/orders', `Bearer ${access2}`],
    ]);
    expect(JSON.parse(service.received[3]!.body)).toEqual({ refresh_token: refresh1 });
    expect(auth.stats()).toMatchObject({ logins: 1, refreshes: 1, replays: 1, failures: 0 });
  });
});

describe('without `origins`, the instance’s baseURL as each request is sent', () => {
  const AUTH = 'https://auth.test';
  const DATA = 'https://data.test';
  const MOVED = 'https://moved.test';

  it('honours a baseURL set after attach, and renews there on expiry', async () => {
    const service = new FakeTokenService(AUTH, DATA);
    const api = axios.create();
    const auth = attachTokenAuth(api, { credentials: { username: USERNAME, password: PASSWORD }, authBaseURL: AUTH });

    api.defaults.baseURL = DATA;
    await api.get('/orders');
    service.expireAccessTokens();
    await api.get('/orders');

    const [access1, , access2] = service.issued;
    expect(service.received.filter((entry) => entry.route === 'data').map((entry) => entry.authorization)).toEqual([
      `Bearer ${access1}`,
      `Bearer ${access1}`,
      `Bearer ${access2}`,
    ]);
    expect(auth.stats()).toMatchObject({ logins: 1, refreshes: 1, replays: 1, failures: 0 });
  });

  it('follows a baseURL assigned: the new origin gets the token, the one it replaced no longer does', async () => {
    const service = new FakeTokenService(AUTH, DATA);
    const api = axios.create({ baseURL: DATA });
    attachTokenAuth(api, { credentials: { username: USERNAME, password: PASSWORD }, authBaseURL: AUTH });
    await api.get('/orders');
    const moved = watchedHost(MOVED, service);

    api.defaults.baseURL = MOVED;
    await api.get('/orders');
    await failureOf(api.get(`${DATA}/orders`), axios.isAxiosError);

    expect(moved).toEqual([`Bearer ${service.issued[0]}`]);
    expect(service.received.filter((entry) => entry.route === 'data').map((entry) => entry.authorization)).toEqual([
      `Bearer ${service.issued[0]}`,
      undefined,
    ]);
    expect(service.counters.loginCalls).toBe(1);
  });

  it('follows `instance.defaults` replaced whole, as hey-api’s setConfig does before it sends baseURL with each request', async () => {
    const service = new FakeTokenService(AUTH, DATA);
    const api = axios.create();
    attachTokenAuth(api, { credentials: { username: USERNAME, password: PASSWORD }, authBaseURL: AUTH });
    // What @hey-api/client-axios' setConfig({ baseURL }) and its request do: axios' own defaults stay as they were.
    api.defaults = { ...api.defaults, baseURL: DATA };
    await api.get('/orders', { baseURL: api.defaults.baseURL });

    expect(service.received.map((entry) => [entry.origin, entry.route, entry.authorization])).toEqual([
      [AUTH, 'login', expect.stringMatching(/^Basic /)],
      [DATA, 'data', `Bearer ${service.issued[0]}`],
    ]);
  });
});
