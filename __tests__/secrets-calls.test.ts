// Which call carries which secret: the Basic header goes to the login call alone, each refresh token to the token call
// alone, access tokens to data calls alone; and the payloads of every event carry none of them.
import { MemoryTokenStore } from '../lib/index.js';
import { BASIC, BASIC_PART, events, leakCheckForFile } from './helpers/leak-checks.js';
import { recordEvents, secretsOf } from './helpers/scan-secrets.js';
import { FakeTokenService, LOGIN, PASSWORD, TOKEN } from './helpers/service.js';
import { rig } from './helpers/setup.js';
import { failureOf } from './helpers/settled.js';

const expectNothingLeaked = leakCheckForFile();

/** Which secrets each call to the service carried in any header or its body, in the order received. */
function carried(service: FakeTokenService): Array<[string, string, string[]]> {
  const names = new Map<string, string>([
    [PASSWORD, 'password'],
    [BASIC_PART, 'basic'],
  ]);
  service.issued.forEach((token, index) =>
    names.set(token, `${index % 2 === 0 ? 'access' : 'refresh'}${Math.floor(index / 2) + 1}`),
  );
  return service.received.map((entry) => {
    const text = `${JSON.stringify(entry.headers)}\n${entry.body}`;
    return [entry.route, entry.path, [...names].filter(([secret]) => text.includes(secret)).map(([, name]) => name)];
  });
}

describe('which call carries which secret', () => {
  it('sends the Basic header to the login call alone, each refresh token to the token call alone, and access tokens to data calls alone', async () => {
    const { service, api } = rig();

    await api.get('/a');
    service.expireAccessTokens();
    await api.post('/b', { note: 'hello' });
    service.expireAccessTokens();
    await api.get('/c');

    expect(service.issued).toHaveLength(6);
    expect(carried(service)).toEqual([
      ['login', LOGIN, ['basic']],
      ['data', '/a', ['access1']],
      ['data', '/b', ['access1']],
      ['token', TOKEN, ['refresh1']],
      ['data', '/b', ['access2']],
      ['data', '/c', ['access2']],
      ['token', TOKEN, ['refresh2']],
      ['data', '/c', ['access3']],
    ]);
    const [access1, refresh1, access2, refresh2, access3] = service.issued;
    expect(service.received.map((entry) => entry.authorization)).toEqual([
      BASIC,
      `Bearer ${access1}`,
      `Bearer ${access1}`,
      undefined,
      `Bearer ${access2}`,
      `Bearer ${access2}`,
      undefined,
      `Bearer ${access3}`,
    ]);
    const tokenBodies = service.received
      .filter((entry) => entry.route === 'token')
      .map((entry) => JSON.parse(entry.body) as unknown);
    expect(tokenBodies).toEqual([{ refresh_token: refresh1 }, { refresh_token: refresh2 }]);
    expect(service.received.filter((entry) => entry.route === 'data').map((entry) => entry.body)).toEqual([
      '',
      '{"note":"hello"}',
      '{"note":"hello"}',
      '',
      '',
    ]);
  });
});

describe('event payloads', () => {
  it('login, refresh, load, replay, failure and logout carry no secret', async () => {
    const store = new MemoryTokenStore();
    const first = rig({ store, tokenRetries: 0 });
    const second = rig({ store, tokenRetries: 0 }, first.service);
    const { service } = first;
    const firstEvents = recordEvents(first.auth);
    const secondEvents = recordEvents(second.auth);

    await first.api.get('/one');
    service.expireAccessTokens();
    await first.api.get('/two');
    service.expireAccessTokens();
    service.tokenFaults.push([503, { detail: `busy, retry ${service.issued[3]} later` }]);
    const error = await failureOf(second.api.get('/three'));
    await first.auth.logout();

    expect(events(firstEvents)).toEqual(['login', 'refresh', 'replay', 'logout']);
    expect(events(secondEvents)).toEqual(['load', 'load', 'failure:TOKEN_SERVICE_UNAVAILABLE']);
    expect(service.issued).toHaveLength(4);
    expectNothingLeaked(error, [...firstEvents, ...secondEvents], secretsOf(service));
  });
});
