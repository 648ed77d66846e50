// DPoP nonces per server (issue 44): a token service and an API on one origin, over real HTTP on loopback, each giving
// nonces of its own and requiring them, as a deployment behind one gateway does. The plugin keeps each server's nonce
// apart, so that a renewal does not make the replays after it carry the token service's nonce, which the API would
// challenge once more. Exact counts: each request is challenged once per nonce the API rotates, and never for the token
// service's.
import { createServer } from 'node:http';
import axios from 'axios';
import { attachTokenAuth } from '../lib/index.js';
import { listenOnLoopback } from '../harness/loopback.js';
import type { Listening } from '../harness/loopback.js';
import { burst, fulfilled } from './helpers/flow.js';

const LOGIN = '/auth/api/v1/accounts/login';
const TOKEN = '/auth/api/v1/accounts/token';

/** The nonce a proof carries: its payload read, not verified (what is counted here is which nonce each proof names). */
function nonceOf(proof: string | undefined): string | undefined {
  const payload = proof?.split('.')[1];
  return payload && (JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as { nonce?: string }).nonce;
}

/** One origin, two servers: the token service's nonces `token-<n>`, the API's `api-<n>`, each required by its own. */
function startOneOrigin() {
  const state = { tokenNonce: 'token-1', apiNonce: 'api-1', access: '', serial: 0, round: 1 };
  const counts = {
    tokenChallenges: 0,
    apiChallenges: 0,
    tokenNonceAtApi: [0, 0, 0, 0],
    tokenCalls: 0,
    accepted: 0,
    refused: 0,
  };
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const nonce = nonceOf(req.headers.dpop as string | undefined);
      const send = (status: number, body: unknown, headers: Record<string, string>) => {
        res.writeHead(status, { 'content-type': 'application/json', ...headers });
        res.end(JSON.stringify(body));
      };
      if (req.url === LOGIN || req.url === TOKEN) {
        const headers = { 'DPoP-Nonce': state.tokenNonce };
        if (nonce !== state.tokenNonce) {
          counts.tokenChallenges += 1;
          send(400, { error: 'use_dpop_nonce' }, headers);
          return;
        }
        counts.tokenCalls += 1;
        state.serial += 1;
        state.access = `acc-${state.serial}`;
        send(200, { access: state.access, refresh: `ref-${state.serial}`, token_type: 'DPoP' }, headers);
        return;
      }
      const headers = { 'DPoP-Nonce': state.apiNonce };
      if (nonce?.startsWith('token-')) counts.tokenNonceAtApi[state.round - 1]! += 1;
      if (nonce !== state.apiNonce) {
        counts.apiChallenges += 1;
        send(401, { detail: 'nonce' }, { ...headers, 'WWW-Authenticate': 'DPoP error="use_dpop_nonce"' });
        return;
      }
      if (req.headers.authorization !== `DPoP ${state.access}`) {
        counts.refused += 1;
        send(401, { detail: 'token' }, { ...headers, 'WWW-Authenticate': 'DPoP error="invalid_token"' });
        return;
      }
      counts.accepted += 1;
      send(200, { ok: true }, headers);
    });
  });
  return { server, state, counts };
}

describe('DPoP nonces of a token service and an API on one origin', () => {
  let origin: ReturnType<typeof startOneOrigin>;
  let listening: Listening;

  beforeAll(async () => {
    origin = startOneOrigin();
    listening = await listenOnLoopback(origin.server);
  });

  afterAll(() => listening?.stop());

  it('4 bursts of 5, the API’s nonce rotated before each and a renewal in the third: 20 API challenges, and the token service’s nonce only before the API gave one', async () => {
    const api = axios.create({ baseURL: listening.url });
    const auth = attachTokenAuth(api, { credentials: { username: 'jane', password: 'jane-password-1' }, dpop: true });
    const { state, counts } = origin;
    const results = [];

    for (let round = 1; round <= 4; round += 1) {
      state.apiNonce = `api-${round}`;
      state.round = round;
      // In the third round, the service stops accepting the access token: a renewal, then the replays.
      if (round === 3) state.access = 'revoked';
      results.push(...(await burst(5, (index) => api.get(`/orders/${round}-${index}`))));
    }

    expect(fulfilled(results)).toBe(20);
    expect(counts.accepted).toBe(20);
    // Each request once per API nonce: its first proof carries the last round's nonce (none in the first round).
    expect(counts.apiChallenges).toBe(20);
    // The token service's nonce reached the API only before the API had given one of its own (each request of the
    // first round, after the login), as it would from a server that gives one nonce for its origin; never after.
    expect(counts.tokenNonceAtApi).toEqual([5, 0, 0, 0]);
    // The login and one refresh; the token service challenged the login alone, which had no nonce of it yet.
    expect(counts.tokenCalls).toBe(2);
    expect(counts.tokenChallenges).toBe(1);
    expect(counts.refused).toBe(5);
    expect(auth.stats()).toMatchObject({ logins: 1, refreshes: 1, replays: 5 });
  });
});
