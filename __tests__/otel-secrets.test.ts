// The spans and metrics of axios-token-keeper/otel, recorded by the real OpenTelemetry SDK, of an attachment on the
// emulator over real HTTP through logins, a retry, a refused refresh and a wrong password, hold no secret, in any
// spelling, and no URL.
import { instrumentTokenAuth } from 'axios-token-keeper/otel';
import { isTokenAuthError } from '../lib/index.js';
import type { TokenServiceEmulator } from '../lib/emulator/index.js';
import { closeEmulatorsAfterEach, e2e, E2E_PASSWORD, E2E_USER } from './helpers/emulator.js';
import { ACCOUNT, ORDERS, telemetry, viewOf } from './helpers/otel.js';
import { expectNoLeaks, pairSpellings, spellingsOf } from './helpers/scan-secrets.js';
import type { Secret } from './helpers/scan-secrets.js';
import { failureOf } from './helpers/settled.js';

closeEmulatorsAfterEach();

/** The tokens a run handed out, as they came back to the service: Bearer headers and refresh tokens sent. */
function tokensSeenBy(service: TokenServiceEmulator): string[] {
  const tokens = new Set<string>();
  for (const call of service.calls) {
    const bearer = /^Bearer (\S+)$/.exec(call.authorization ?? '')?.[1];
    if (bearer) tokens.add(bearer);
    const refresh = /"refresh_token":"([^"]+)"/.exec(call.body)?.[1];
    if (refresh) tokens.add(refresh);
  }
  return [...tokens];
}

describe('instrumentTokenAuth', () => {
  it('puts no secret and no URL in any span or metric point', async () => {
    const { emulator: service, api, auth } = await e2e({ tokenRetries: 1 });
    const otel = telemetry();
    instrumentTokenAuth(auth, { ...otel, attributes: ACCOUNT });

    // A login, a 503 retried, a refused refresh and its login, a wrong password rejected.
    await api.get(ORDERS);
    service.inject('token', { status: 503, body: { detail: 'busy' } });
    service.expireAccessTokens();
    await api.get(ORDERS);
    service.expireAccessTokens();
    service.revokeRefreshTokens();
    await api.get(ORDERS);
    const rejected = await failureOf(auth.login({ username: E2E_USER, password: 'wr0ng: pässwort' }), isTokenAuthError);

    expect(rejected.code).toBe('LOGIN_REJECTED');
    const spans = otel.spans();
    expect(spans.map((span) => [span.name, span.attributes['token_keeper.attempts']])).toEqual([
      ['axios-token-keeper login', 1],
      ['axios-token-keeper token', 2],
      ['axios-token-keeper token', 1],
      ['axios-token-keeper login', 1],
      ['axios-token-keeper login', 1],
    ]);
    const tokens = tokensSeenBy(service);
    expect(tokens.length).toBeGreaterThanOrEqual(4);
    const secrets: Secret[] = [
      ...spellingsOf('password', E2E_PASSWORD),
      ...pairSpellings('username:password', E2E_USER, E2E_PASSWORD),
      ...spellingsOf('wrong password', 'wr0ng: pässwort'),
      ...pairSpellings('username:wrong password', E2E_USER, 'wr0ng: pässwort'),
      ...tokens.flatMap((token, index) => spellingsOf(`token #${index + 1}`, token)),
    ];
    const recorded = { spans: spans.map(viewOf), points: await otel.points() };
    expectNoLeaks(recorded, secrets);
    const text = JSON.stringify(recorded);
    expect(text).not.toContain(service.url.replace(/^http:\/\//, ''));
    expect(text).not.toContain('/auth/api/v1/accounts');
  });
});
