import axios from 'axios';
import type { AxiosRequestConfig } from 'axios';
import type { FakeTokenService } from './helpers/service.js';
import { fulfilled, rig, until } from './helpers/setup.js';

/** Rejections no one handled during the test: a shared renewal left with no waiter must not produce one. */
let unhandled: unknown[] = [];
const onUnhandled = (reason: unknown): void => {
  unhandled.push(reason);
};
beforeEach(() => {
  unhandled = [];
  process.on('unhandledRejection', onUnhandled);
});
afterEach(async () => {
  // Node reports an unhandled rejection after the microtasks of the turn that left it: let a few turns pass.
  await new Promise((resolve) => setTimeout(resolve, 20));
  process.off('unhandledRejection', onUnhandled);
  expect(unhandled).toEqual([]);
});

type Kind = 'AbortSignal' | 'CancelToken';
const KINDS: Kind[] = ['AbortSignal', 'CancelToken'];

/** One way of cancelling a request: the config that carries it, and the call that cancels. */
function canceller(kind: Kind): { config: AxiosRequestConfig; cancel: () => void } {
  if (kind === 'AbortSignal') {
    const controller = new AbortController();
    return { config: { signal: controller.signal }, cancel: () => controller.abort() };
  }
  const source = axios.CancelToken.source();
  return { config: { cancelToken: source.token }, cancel: () => source.cancel('the user went away') };
}

interface Outcome {
  ok: boolean;
  error?: unknown;
  /** The service's successful logins and refreshes when the request settled. */
  logins: number;
  refreshes: number;
}

/** Settles `request` and notes how far the renewal had gone at that moment. */
function observe(service: FakeTokenService, request: Promise<unknown>): Promise<Outcome> {
  const note = (ok: boolean, error?: unknown): Outcome => ({
    ok,
    error,
    logins: service.counters.logins,
    refreshes: service.counters.refreshes,
  });
  return request.then(
    () => note(true),
    (error: unknown) => note(false, error),
  );
}

function expectCanceled(outcome: Outcome, kind: Kind): void {
  expect(outcome.ok).toBe(false);
  expect(axios.isCancel(outcome.error)).toBe(true);
  if (kind === 'CancelToken') expect((outcome.error as Error).message).toBe('the user went away');
}

describe('a request aborted while it waits for a login', () => {
  it.each(KINDS)('rejects at once as a cancel (%s) when it started the login, and the others go on', async (kind) => {
    const { service, api, auth } = rig();
    const answer = service.hold('token');
    const { config, cancel } = canceller(kind);

    const aborted = observe(service, api.get('/a', config));
    await until(() => service.counters.loginCalls === 1);
    const others = [api.get('/b'), api.get('/c')];
    cancel();
    const outcome = await aborted;
    answer();

    expectCanceled(outcome, kind);
    expect(outcome.logins).toBe(0);
    expect(fulfilled(await Promise.allSettled(others))).toBe(2);
    expect(service.counters.loginCalls).toBe(1);
    expect(service.counters.logins).toBe(1);
    expect(service.received.filter((entry) => entry.path === '/a')).toHaveLength(0);
    expect(auth.stats()).toMatchObject({ logins: 1, failures: 0 });
  });

  it.each(KINDS)(
    'rejects at once as a cancel (%s) when it joined a login under way, and the others go on',
    async (kind) => {
      const { service, api } = rig();
      const answer = service.hold('token');
      const { config, cancel } = canceller(kind);

      const first = api.get('/b');
      await until(() => service.counters.loginCalls === 1);
      const aborted = observe(service, api.get('/a', config));
      const later = api.get('/c');
      cancel();
      const outcome = await aborted;
      answer();

      expectCanceled(outcome, kind);
      expect(outcome.logins).toBe(0);
      expect(fulfilled(await Promise.allSettled([first, later]))).toBe(2);
      expect(service.counters.loginCalls).toBe(1);
      expect(service.received.filter((entry) => entry.path === '/a')).toHaveLength(0);
    },
  );
});

describe('a request aborted while it waits for a refresh after a 401', () => {
  it.each(
    KINDS.flatMap((kind) => [
      [kind, 'started'],
      [kind, 'joined'],
    ]) as Array<[Kind, 'started' | 'joined']>,
  )('rejects at once as a cancel (%s) when its 401 %s the refresh, and the others are replayed', async (kind, role) => {
    const refused: string[] = [];
    const { service, api, auth } = rig({
      isTokenRejected: (error) => {
        refused.push(error.config?.url ?? '');
        return error.response?.status === 401;
      },
    });
    await api.get('/prime');
    service.expireAccessTokens();
    const answer = service.hold('token');
    // The first 401 back starts the refresh: '/a' is first, or last, as the case needs.
    service.dataDelayMs = (path) => ((path === '/a') === (role === 'started') ? 0 : 30);
    const { config, cancel } = canceller(kind);

    const aborted = observe(service, api.get('/a', config));
    const others = [api.get('/b'), api.get('/c')];
    // All three 401s are in the plugin's hands, waiting for the one refresh.
    await until(() => refused.length === 3);
    expect(refused[0] === '/a').toBe(role === 'started');
    expect(service.counters.refreshCalls).toBe(1);
    cancel();
    const outcome = await aborted;
    answer();

    expectCanceled(outcome, kind);
    expect(outcome.refreshes).toBe(0);
    expect(fulfilled(await Promise.allSettled(others))).toBe(2);
    expect(service.counters.refreshCalls).toBe(1);
    expect(service.counters.loginCalls).toBe(1);
    // Sent once, refused, and not replayed.
    expect(service.received.filter((entry) => entry.path === '/a')).toHaveLength(1);
    expect(auth.stats()).toMatchObject({ refreshes: 1, replays: 2, failures: 0 });
  });
});

describe('a request cancelled before it is sent', () => {
  it.each(KINDS)(
    'rejects at once as a cancel (%s) among requests that need a login, and is never sent',
    async (kind) => {
      const { service, api } = rig();
      const answer = service.hold('token');
      const { config, cancel } = canceller(kind);
      cancel();

      const aborted = observe(service, api.get('/a', config));
      const others = [api.get('/b'), api.get('/c')];
      const outcome = await aborted;
      answer();

      expectCanceled(outcome, kind);
      expect(outcome.logins).toBe(0);
      expect(fulfilled(await Promise.allSettled(others))).toBe(2);
      expect(service.counters.loginCalls).toBe(1);
      expect(service.received.filter((entry) => entry.path === '/a')).toHaveLength(0);
    },
  );

  it.each(KINDS)('rejects at once as a cancel (%s) when sent during a refresh, and is never sent', async (kind) => {
    const { service, api } = rig();
    await api.get('/prime');
    service.expireAccessTokens();
    const answer = service.hold('token');
    const first = api.get('/b');
    await until(() => service.counters.refreshCalls === 1);
    const { config, cancel } = canceller(kind);
    cancel();

    const outcome = await observe(service, api.get('/a', config));
    answer();

    expectCanceled(outcome, kind);
    expect(outcome.refreshes).toBe(0);
    await expect(first).resolves.toMatchObject({ status: 200 });
    expect(service.counters.refreshCalls).toBe(1);
    expect(service.counters.loginCalls).toBe(1);
    expect(service.received.filter((entry) => entry.path === '/a')).toHaveLength(0);
  });
});

describe('every waiter aborted', () => {
  it('lets the shared login complete and store its tokens for the next request', async () => {
    const { service, api, auth } = rig();
    const answer = service.hold('token');
    const controllers = [new AbortController(), new AbortController(), new AbortController()];

    const requests = controllers.map((controller, i) =>
      observe(service, api.get(`/orders/${i}`, { signal: controller.signal })),
    );
    await until(() => service.counters.loginCalls === 1);
    for (const controller of controllers) controller.abort();
    const outcomes = await Promise.all(requests);
    answer();

    for (const outcome of outcomes) expectCanceled(outcome, 'AbortSignal');
    expect(outcomes.map((outcome) => outcome.logins)).toEqual([0, 0, 0]);
    await until(() => auth.stats().logins === 1);
    expect(await auth.getTokens()).toMatchObject({ access: service.issued[0], refresh: service.issued[1] });

    await expect(api.get('/after')).resolves.toMatchObject({ status: 200 });
    expect(service.counters.loginCalls).toBe(1);
    expect(service.received.filter((entry) => entry.route === 'data').map((entry) => entry.path)).toEqual(['/after']);
  });

  it('lets a shared refresh that fails end with no unhandled rejection, and the next request renews', async () => {
    const { service, api, auth } = rig({ tokenRetries: 0 });
    await api.get('/prime');
    const primed = await auth.getTokens();
    service.expireAccessTokens();
    const answer = service.hold('token');
    service.tokenFaults.push([503, { detail: 'down' }]);
    const controllers = [new AbortController(), new AbortController()];

    const requests = controllers.map((controller, i) =>
      observe(service, api.get(`/orders/${i}`, { signal: controller.signal })),
    );
    await until(() => service.counters.refreshCalls === 1);
    for (const controller of controllers) controller.abort();
    const outcomes = await Promise.all(requests);
    answer();

    for (const outcome of outcomes) expectCanceled(outcome, 'AbortSignal');
    await until(() => auth.stats().failures === 1);
    expect(await auth.getTokens()).toEqual(primed);
    // afterEach checks that the failed renewal, with no one left to hear of it, was not an unhandled rejection.

    await expect(api.get('/after')).resolves.toMatchObject({ status: 200 });
    expect(service.counters.refreshCalls).toBe(2);
    expect(service.counters.loginCalls).toBe(1);
  });
});

describe('a request aborted before it starts', () => {
  it('starts no login when it is alone', async () => {
    const { service, api } = rig();
    const controller = new AbortController();
    controller.abort();

    const error = await api.get('/orders', { signal: controller.signal }).catch((e: unknown) => e);

    expect(axios.isCancel(error)).toBe(true);
    expect(service.received).toEqual([]);
  });
});
