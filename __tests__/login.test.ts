import axios from 'axios';
import { attachTokenAuth, isTokenAuthError } from '../lib/index.js';
import { API, LOGIN, PASSWORD, TOKEN, USERNAME } from './helpers/service.js';
import { burst, fulfilled, rig } from './helpers/setup.js';

describe('login with nothing stored', () => {
  it('shares one login among concurrent first requests and stores both tokens', async () => {
    const { service, api, auth } = rig();

    const results = await burst(25, (i) => api.get(`/orders/${i}`));

    expect(fulfilled(results)).toBe(25);
    expect(service.counters.loginCalls).toBe(1);
    expect(service.counters.refreshCalls).toBe(0);
    const tokens = await auth.getTokens();
    expect(tokens?.access).toBe(service.issued[0]);
    expect(tokens?.refresh).toBe(service.issued[1]);
    expect(auth.stats()).toMatchObject({ logins: 1, refreshes: 0, replays: 0, failures: 0 });
  });

  it('sends Basic base64(username:password) over UTF-8, with a password holding colons and spaces', async () => {
    const { service, api } = rig();

    await api.get('/orders');

    const login = service.received.find((entry) => entry.route === 'login');
    expect(login?.authorization).toBe(`Basic ${Buffer.from(`${USERNAME}:${PASSWORD}`, 'utf8').toString('base64')}`);
    expect(login?.path).toBe(LOGIN);
    expect(service.received.filter((entry) => entry.route === 'data').map((entry) => entry.authorization)).toEqual([
      `Bearer ${service.issued[0]}`,
    ]);
  });

  it('asks a credentials function only when a login is needed, and accepts an async one', async () => {
    const credentials = jest.fn(() => Promise.resolve({ username: USERNAME, password: PASSWORD }));
    const { api } = rig({ credentials });
    expect(credentials).not.toHaveBeenCalled();

    await Promise.all([api.get('/a'), api.get('/b')]);
    await api.get('/c');

    expect(credentials).toHaveBeenCalledTimes(1);
  });

  it('fails every waiting request with NO_CREDENTIALS when the function gives nothing, without calling the service', async () => {
    const { service, api } = rig({ credentials: () => null });

    const results = await burst(3, () => api.get('/orders'));

    expect(results.map((r) => r.status === 'rejected' && isTokenAuthError(r.reason) && r.reason.code)).toEqual([
      'NO_CREDENTIALS',
      'NO_CREDENTIALS',
      'NO_CREDENTIALS',
    ]);
    expect(service.received).toHaveLength(0);
  });

  it('wraps a throwing credentials function as NO_CREDENTIALS with the cause', async () => {
    const problem = new Error('vault sealed');
    const { api } = rig({ credentials: () => Promise.reject(problem) });

    const error = await api.get('/orders').catch((e: unknown) => e);

    expect(isTokenAuthError(error) && error.code).toBe('NO_CREDENTIALS');
    // A redacted copy of it: the function's own error might quote a token.
    expect((error as Error).cause).toBeInstanceOf(Error);
    expect(((error as Error).cause as Error).message).toBe(problem.message);
  });

  it('refuses a username with a colon, which Basic cannot carry: given as an object at attach, from a function at login', async () => {
    const attach = () =>
      attachTokenAuth(axios.create({ baseURL: API }), { credentials: { username: 'ja:ne', password: 'x' } });
    expect(attach).toThrow(TypeError);
    expect(attach).toThrow(/`credentials` cannot be sent: the username contains ":"/);

    const { service, api } = rig({ credentials: () => ({ username: 'ja:ne', password: 'x' }) });
    const error = await api.get('/orders').catch((e: unknown) => e);

    expect(isTokenAuthError(error) && error.code).toBe('NO_CREDENTIALS');
    expect((error as Error).message).toMatch(/username contains ":"/);
    expect(service.received).toHaveLength(0);
  });

  it('refuses what a credentials function returns without a password by the rule attach applies', async () => {
    const { service, api } = rig({ credentials: () => ({ username: USERNAME }) as never });

    const error = await api.get('/orders').catch((e: unknown) => e);

    expect(isTokenAuthError(error) && error.code).toBe('NO_CREDENTIALS');
    expect((error as Error).message).toMatch(/must have a string `username` and a string `password`/);
    expect(service.received).toHaveLength(0);
  });

  it('reads the seed shape {access, refresh} from the login answer', async () => {
    const { service, api, auth } = rig();
    service.tokenShape = 'seed';

    await api.get('/orders');

    expect((await auth.getTokens())?.refresh).toBe(service.issued[1]);
    expect(service.received.some((entry) => entry.path === TOKEN)).toBe(false);
  });
});
