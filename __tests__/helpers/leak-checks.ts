// What the tests of the secrets the plugin hands out (secrets-*.test.ts) share: the Basic header of the fake service's
// account, the console captured around each test, and the check that nothing the user got holds a secret.
import axios from 'axios';
import type { AxiosError } from 'axios';
import type { TokenAuthError } from '../../lib/index.js';
import { basicHeader, captureConsole, causeChain, findLeaks } from './scan-secrets.js';
import type { Recorded, Secret } from './scan-secrets.js';

/** The Basic header the plugin sends for the fake service's account, and its value alone. */
export const BASIC = basicHeader();
export const BASIC_PART = BASIC.slice('Basic '.length);

/**
 * Captures (and silences) the console around each test of the file that calls this (at its top level), and returns
 * the check that scans everything that reached the user (the error and each link of its cause chain, every event
 * payload, and console output), wherever a secret can be reached in it, and fails naming each place one was found.
 */
export function leakCheckForFile(): (error: unknown, events: Recorded[], secrets: Secret[]) => void {
  let consoleCalls: unknown[][];
  beforeEach(() => {
    consoleCalls = captureConsole();
  });
  afterEach(() => {
    jest.restoreAllMocks();
  });
  return function expectNothingLeaked(error, events, secrets) {
    const leaks = [
      ...causeChain(error).flatMap((link, index) =>
        findLeaks(link, secrets, { reachable: true }).map((leak) => ({ in: `cause chain [${index}]`, ...leak })),
      ),
      ...events.flatMap(({ event, payload }, index) =>
        findLeaks(payload, secrets, { reachable: true }).map((leak) => ({ in: `event ${index} (${event})`, ...leak })),
      ),
      ...findLeaks(consoleCalls, secrets, { reachable: true }).map((leak) => ({ in: 'console', ...leak })),
    ];
    expect(leaks).toEqual([]);
    // The library reports through events, never through the console.
    expect(consoleCalls).toEqual([]);
  };
}

/** The axios error the plugin keeps as `cause`, with its config (where axios keeps headers, auth and data). */
export function axiosCause(error: TokenAuthError): AxiosError {
  const cause = error.cause as AxiosError;
  expect(axios.isAxiosError(cause)).toBe(true);
  expect(cause.config).toBeDefined();
  return cause;
}

/** The events recorded, by name, a failure with its code. */
export function events(recorded: Recorded[]): string[] {
  return recorded.map(({ event, payload }) =>
    event === 'failure' ? `failure:${(payload as { code: string }).code}` : event,
  );
}
