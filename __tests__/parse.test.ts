import nock from 'nock';
import { DEFAULTS, isTokenAuthError } from '../lib/index.js';
import type { ParsedTokens, TokenAuthError, TokenAuthEvents, TokenCallRequest } from '../lib/index.js';
import { API, TOKEN } from './helpers/service.js';
import { burst, rig } from './helpers/setup.js';

/** The default parser, through its one door. */
const parseTokenBody = DEFAULTS.parseTokens;

describe('DEFAULTS.parseTokens', () => {
  it.each(['access', 'access_token', 'accessToken'])(
    'reads the access token as `%s`, at the top level and under `data`',
    (key) => {
      expect(parseTokenBody({ [key]: 'acc' })).toStrictEqual({ access: 'acc' });
      expect(parseTokenBody({ status: true, data: { [key]: 'acc' } })).toStrictEqual({ access: 'acc' });
    },
  );

  it.each(['refresh', 'refresh_token', 'refreshToken'])(
    'reads the refresh token as `%s`, at the top level and under `data`',
    (key) => {
      expect(parseTokenBody({ access: 'acc', [key]: 'ref' })).toStrictEqual({ access: 'acc', refresh: 'ref' });
      expect(parseTokenBody({ data: { access_token: 'acc', [key]: 'ref' } })).toStrictEqual({
        access: 'acc',
        refresh: 'ref',
      });
    },
  );

  it.each(['expires_in', 'expiresIn'])(
    'reads the lifetime in seconds as `%s`, at the top level and under `data`',
    (key) => {
      expect(parseTokenBody({ access: 'acc', [key]: 300 })).toStrictEqual({ access: 'acc', expiresIn: 300 });
      expect(parseTokenBody({ data: { accessToken: 'acc', [key]: 300 } })).toStrictEqual({
        access: 'acc',
        expiresIn: 300,
      });
    },
  );

  it("reads the real service's answer and the seed's", () => {
    expect(
      parseTokenBody({ status: true, data: { access_token: 'acc', refresh_token: 'ref', expires_in: 2700 } }),
    ).toStrictEqual({
      access: 'acc',
      refresh: 'ref',
      expiresIn: 2700,
    });
    expect(parseTokenBody({ access: 'acc', refresh: 'ref' })).toStrictEqual({ access: 'acc', refresh: 'ref' });
  });

  it('ignores empty strings, and takes the next spelling or place that has a token', () => {
    expect(parseTokenBody({ access: '' })).toBeUndefined();
    expect(parseTokenBody({ access: '', access_token: 'acc' })).toStrictEqual({ access: 'acc' });
    expect(parseTokenBody({ access: '', data: { access: 'inner' } })).toStrictEqual({ access: 'inner' });
    expect(parseTokenBody({ access: 'acc', refresh: '' })).toStrictEqual({ access: 'acc' });
    expect(parseTokenBody({ access: 'acc', refresh: '', refreshToken: 'ref' })).toStrictEqual({
      access: 'acc',
      refresh: 'ref',
    });
  });

  it('ignores a lifetime that is not a positive number', () => {
    for (const value of [0, -5, 'soon', '', null, NaN, Infinity]) {
      expect(parseTokenBody({ access: 'acc', expires_in: value })).toStrictEqual({ access: 'acc' });
    }
  });

  it('ignores access tokens that are not strings', () => {
    expect(parseTokenBody({ access: 42 })).toBeUndefined();
    expect(parseTokenBody({ access: { token: 'acc' } })).toBeUndefined();
    expect(parseTokenBody({ access_token: ['acc'] })).toBeUndefined();
    expect(parseTokenBody({ data: 'acc' })).toBeUndefined();
  });

  it('gives undefined for anything but an object with an access token', () => {
    for (const body of [
      undefined,
      null,
      '',
      'access=acc',
      42,
      true,
      [{ access: 'acc' }],
      {},
      { status: true, data: { token: 'acc' } },
    ]) {
      expect(parseTokenBody(body)).toBeUndefined();
    }
  });
});

/** The error of every rejected result; fails the test if one was fulfilled. */
function reasons(results: PromiseSettledResult<unknown>[]): unknown[] {
  return results.map((result) => {
    if (result.status === 'fulfilled') throw new Error('expected every request to be rejected');
    return result.reason as unknown;
  });
}

function expectInvalid(error: unknown): asserts error is TokenAuthError {
  expect(isTokenAuthError(error) && error.code).toBe('TOKEN_RESPONSE_INVALID');
}

describe('TOKEN_RESPONSE_INVALID', () => {
  it('rejects every request waiting for a login answered 200 without an access token, naming its keys and none of its values', async () => {
    const { service, api, auth } = rig();
    const failures: TokenAuthEvents['failure'][] = [];
    auth.on('failure', (event) => failures.push(event));
    service.loginFaults.push([200, { status: true, data: { token: 'tok-value-f00d' } }]);

    const errors = reasons(await burst(4, (i) => api.get(`/orders/${i}`)));

    const error = errors[0];
    expectInvalid(error);
    for (const other of errors) expect(other).toBe(error);
    expect(error.status).toBe(200);
    expect(error.message).toContain('status, data.token');
    expect(error.message).not.toContain('tok-value-f00d');
    expect(error.message).toContain('parseTokens');
    expect(await auth.getTokens()).toBeNull();
    expect(service.counters.loginCalls).toBe(1);
    expect(service.counters.dataCalls).toBe(0);
    expect(failures).toMatchObject([
      {
        operation: 'login',
        code: 'TOKEN_RESPONSE_INVALID',
        error,
        reason: 'no-token',
        attempts: 1,
        status: 200,
        waiting: 4,
      },
    ]);
    expect(Object.keys(failures[0]!).sort()).toEqual([
      'attempts',
      'code',
      'durationMs',
      'error',
      'operation',
      'reason',
      'status',
      'waiting',
    ]);
  });

  it('names a text body by its length, without its content', async () => {
    const { service, api, auth } = rig();
    const body = 'access=acc-text-beef&refresh=ref-text-beef';
    service.loginFaults.push([200, body, { 'Content-Type': 'text/plain' }]);

    const error = await api.get('/orders').catch((e: unknown) => e);

    expectInvalid(error);
    expect(error.message).toContain(`a text of ${body.length} characters`);
    expect(error.message).not.toContain('beef');
    expect(await auth.getTokens()).toBeNull();
  });

  it('keeps the stored pair when a token answer has no access token', async () => {
    const { service, api, auth } = rig();
    await api.get('/prime');
    const before = await auth.getTokens();
    service.tokenFaults.push([200, { status: true, data: { refresh_token: 'ref-orphan-cafe' } }]);
    service.expireAccessTokens();

    const error = await api.get('/orders').catch((e: unknown) => e);

    expectInvalid(error);
    expect(error.message).toContain('data.refresh_token');
    expect(error.message).not.toContain('ref-orphan-cafe');
    expect(await auth.getTokens()).toEqual(before);
    expect(service.counters.refreshCalls).toBe(1);
  });

  it('comes of a custom `parseTokens` that throws, with the thrown message as `cause`', async () => {
    const { service, api, auth } = rig({
      parseTokens: () => {
        throw new Error('answer has no session');
      },
    });

    const errors = reasons(await burst(3, (i) => api.get(`/orders/${i}`)));

    expectInvalid(errors[0]);
    for (const other of errors) expect(other).toBe(errors[0]);
    expect((errors[0].cause as Error).message).toBe('answer has no session');
    expect(await auth.getTokens()).toBeNull();
    expect(service.counters.loginCalls).toBe(1);
  });

  it('comes of a custom `parseTokens` that returns nothing or an empty access token', async () => {
    for (const parsed of [null, undefined, { access: '' }]) {
      const { api, auth } = rig({ parseTokens: () => parsed });
      expectInvalid(await api.get('/orders').catch((e: unknown) => e));
      expect(await auth.getTokens()).toBeNull();
      nock.cleanAll();
    }
  });

  it('keeps the tokens of the answer out of the `cause` of a throwing `parseTokens`', async () => {
    const { service, api } = rig({
      // A strict parser that quotes what it could not read, as JSON.parse does.
      parseTokens: (body) => {
        throw new Error(`unexpected answer ${JSON.stringify(body)}`);
      },
    });

    const error = await api.get('/orders').catch((e: unknown) => e);

    expectInvalid(error);
    const cause = error.cause as Error;
    expect(cause.message).toMatch(/^unexpected answer /);
    for (const token of service.issued) expect(`${cause.message}\n${cause.stack}`).not.toContain(token);
  });
});

describe('a custom refreshRequest and parseTokens for a service of another shape', () => {
  const RENEW = '/auth/v2/session/renew';

  it('sends the refresh token where refreshRequest puts it and reads the answer with parseTokens', async () => {
    const refreshRequest = (refreshToken: string): TokenCallRequest => ({
      headers: { 'X-Session-Renewal': refreshToken },
      params: { grant: 'renewal' },
    });
    // The login answers the seed shape; the renewal answers { session: { jwt, renewal } }.
    const parseTokens = (body: unknown): ParsedTokens | undefined => {
      const session = (body as { session?: { jwt?: unknown; renewal?: unknown } } | null)?.session;
      if (session === undefined) return parseTokenBody(body);
      return typeof session.jwt === 'string'
        ? { access: session.jwt, ...(typeof session.renewal === 'string' ? { refresh: session.renewal } : {}) }
        : undefined;
    };
    const { service, api, auth } = rig({ tokenPath: RENEW, refreshRequest, parseTokens });
    const renewals: { header: unknown; body: string }[] = [];
    let serial = 0;
    nock(API)
      .persist()
      .post(RENEW)
      .query({ grant: 'renewal' })
      .reply(function (this: nock.ReplyFnContext, _uri: string, body: unknown) {
        const presented = this.req.headers['x-session-renewal'];
        renewals.push({ header: presented, body: typeof body === 'string' ? body : JSON.stringify(body) });
        if (typeof presented !== 'string' || !service.validRefresh.delete(presented))
          return [401, { detail: 'bad renewal' }];
        serial += 1;
        const session = { jwt: `custom-acc-${serial}`, renewal: `custom-ref-${serial}` };
        service.validAccess.add(session.jwt);
        service.validRefresh.add(session.renewal);
        return [200, { session }];
      })
      // Anything else sent there is a wrong request: answer it as a service would, rather than as nock's no-match.
      .post(RENEW)
      .query(true)
      .reply(400, { detail: 'unexpected renewal request' });

    await api.get('/prime');
    const atLogin = await auth.getTokens();
    service.expireAccessTokens();
    await api.get('/orders');
    service.expireAccessTokens();
    await api.get('/more');

    expect(renewals.map((renewal) => renewal.header)).toEqual([atLogin?.refresh, 'custom-ref-1']);
    expect(renewals.every((renewal) => renewal.body === '')).toBe(true);
    expect(await auth.getTokens()).toMatchObject({ access: 'custom-acc-2', refresh: 'custom-ref-2' });
    expect(service.received.filter((entry) => entry.route === 'data').pop()?.authorization).toBe('Bearer custom-acc-2');
    expect(service.received.some((entry) => entry.path === TOKEN)).toBe(false);
    expect(service.counters.loginCalls).toBe(1);
    expect(auth.stats()).toMatchObject({ logins: 1, refreshes: 2, failures: 0 });
  });
});
