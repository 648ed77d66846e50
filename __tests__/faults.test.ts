import axios from 'axios';
import type { AxiosInstance } from 'axios';
import { attachTokenAuth, isTokenAuthError } from '../lib/index.js';
import type { TokenAuth, TokenAuthErrorCode } from '../lib/index.js';
import type { EmulatorFault, TokenServiceEmulator } from '../lib/emulator/index.js';
import { closeEmulatorsAfterEach, emulator, E2E_PASSWORD, E2E_USER } from './helpers/emulator.js';
import { burst, manualClock } from './helpers/flow.js';
import { Relay } from './helpers/proxy.js';

// The fault matrix: each fault of the token service, on the login call and on the token call, with 1 and with 200
// requests waiting. Every request settles (a watchdog fails the test otherwise) with the documented outcome, the
// calls stay within the documented bound, nothing is stored from a bad answer, and the plugin recovers by itself
// once the service is healthy. docs/failures.md's fault table is this table.
closeEmulatorsAfterEach();

const RETRIES = 3;
/**
 * `tokenTimeoutMs` of the row about time: a hang, certain to outlast it. Every other row gets a timeout that its answers, which come at once, cannot reach on a loaded
 * machine: otherwise a slow answer would time out and another fault than the row's would fire.
 */
const TIMEOUT_MS = 1_500;
const SLOW_MACHINE_MS = 10_000;

type Outcome = { code: TokenAuthErrorCode } | 'recovered';
interface Row {
  fault: EmulatorFault | 'refused';
  /** The row is about `tokenTimeoutMs` (see TIMEOUT_MS). */
  timed?: true;
  /** Outcome and calls that reach the service, for the login call and for the token call. */
  login: [Outcome, number];
  token: [Outcome, number];
}

const unavailable = { code: 'TOKEN_SERVICE_UNAVAILABLE' } as const;
const invalid = { code: 'TOKEN_RESPONSE_INVALID' } as const;
const all = RETRIES + 1;

// A refused token call is followed by one login, which cures the requests: its count is token calls + 1 login.
const matrix: Record<string, Row> = {
  'connection refused': { fault: 'refused', login: [unavailable, 0], token: [unavailable, 0] },
  'connection dropped before answering': { fault: 'drop', login: [unavailable, all], token: [unavailable, all] },
  'connection reset mid-answer': { fault: 'reset', login: [unavailable, 1], token: [unavailable, 1] },
  'no answer (timeout)': { fault: 'hang', timed: true, login: [unavailable, 1], token: [unavailable, 1] },
  '500': { fault: { status: 500 }, login: [unavailable, all], token: [unavailable, all] },
  '502': { fault: { status: 502 }, login: [unavailable, all], token: [unavailable, all] },
  '503': { fault: { status: 503 }, login: [unavailable, all], token: [unavailable, all] },
  // Retry-After asks for longer than SLOW_MACHINE_MS: the one 429 is the answer, with no wait and no retry.
  '429 with Retry-After': {
    fault: { status: 429, headers: { 'Retry-After': '60' } },
    login: [unavailable, 1],
    token: [unavailable, 1],
  },
  '429 without Retry-After': { fault: { status: 429 }, login: [unavailable, all], token: [unavailable, all] },
  '400': { fault: { status: 400 }, login: [{ code: 'LOGIN_REJECTED' }, 1], token: ['recovered', 2] },
  '401': { fault: { status: 401 }, login: [{ code: 'LOGIN_REJECTED' }, 1], token: ['recovered', 2] },
  '403': { fault: { status: 403 }, login: [{ code: 'LOGIN_REJECTED' }, 1], token: ['recovered', 2] },
  '200 with malformed JSON': { fault: 'malformed', login: [invalid, 1], token: [invalid, 1] },
  '200 without an access token': { fault: 'no-access-token', login: [invalid, 1], token: [invalid, 1] },
  '200 with a huge body': { fault: 'huge', login: [invalid, 1], token: [invalid, 1] },
  'redirect to another origin': {
    fault: { redirect: 'http://127.0.0.1:9/steal' },
    login: [unavailable, 1],
    token: [unavailable, 1],
  },
};

async function settledWithin<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const watchdog = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`watchdog: requests still pending after ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([promise, watchdog]);
  } finally {
    clearTimeout(timer);
  }
}

interface Setup {
  service: TokenServiceEmulator;
  relay: Relay;
  api: AxiosInstance;
  auth: TokenAuth;
  clock: ReturnType<typeof manualClock>;
}

/** Data calls go straight to the emulator; login and token calls through a relay that can refuse connections. */
async function setup(tokenTimeoutMs: number): Promise<Setup> {
  const service = await emulator({ log: false });
  const relay = await new Relay(new URL(service.url)).open();
  const clock = manualClock();
  const api = axios.create({ baseURL: service.url });
  const auth = attachTokenAuth(api, {
    credentials: { username: E2E_USER, password: E2E_PASSWORD },
    authBaseURL: relay.url,
    tokenRetries: RETRIES,
    tokenRetryDelayMs: 5,
    tokenTimeoutMs,
    clock: clock.now,
  });
  return { service, relay, api, auth, clock };
}

afterEach(async () => {
  await Promise.all(relays.map((relay) => relay.close()));
  relays.length = 0;
});
const relays: Relay[] = [];

const cases = Object.entries(matrix).flatMap(([name, row]) =>
  (['login', 'token'] as const).flatMap((route) => [1, 200].map((waiting) => [name, route, waiting, row] as const)),
);

describe.each(cases)('%s on the %s call, %i waiting', (_name, route, waiting, row) => {
  it('settles every request as documented, within the call bound, stores nothing bad, and recovers', async () => {
    const { service, relay, api, auth, clock } = await setup(row.timed ? TIMEOUT_MS : SLOW_MACHINE_MS);
    relays.push(relay);
    if (route === 'token') {
      await api.get('/prime');
      service.expireAccessTokens();
    }
    const before = await auth.getTokens();
    const callsBefore = service.counters.tokenCalls;
    if (row.fault === 'refused') await relay.close();
    else service.inject(route === 'login' ? 'login' : 'token', row.fault, 50);

    const results = await settledWithin(
      burst(waiting, (i) => api.get(`/orders/${i}`)),
      10_000,
    );

    const [outcome, calls] = row[route];
    if (outcome === 'recovered') {
      expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(waiting);
    } else {
      const codes = results.map((r) =>
        r.status === 'rejected' && isTokenAuthError(r.reason) ? r.reason.code : r.status,
      );
      expect(new Set(codes)).toEqual(new Set([outcome.code]));
      // One error for all, with the token call's (redacted) axios error as cause where there was an HTTP failure.
      const errors = new Set(results.map((r) => (r as PromiseRejectedResult).reason as Error));
      expect(errors.size).toBe(1);
      const [error] = errors;
      if (row.fault !== 'malformed' && row.fault !== 'no-access-token')
        expect(axios.isAxiosError(error!.cause)).toBe(true);
      // Nothing from the bad answer is stored: the pair is the one from before, or none.
      const after = await auth.getTokens();
      expect(after === null || after.access === before?.access).toBe(true);
    }
    const callsOnRoute = service.counters.tokenCalls - callsBefore;
    expect(callsOnRoute).toBe(calls);

    // The service is healthy again: the next request goes through by itself (after the login cooldown, if any).
    service.clearFaults();
    if (row.fault === 'refused') await relay.open();
    clock.advance(61_000);
    await expect(settledWithin(api.get('/orders/after'), 10_000)).resolves.toMatchObject({ status: 200 });
  });
});
