// What the tests of the token calls (token-client-*.test.ts) share: which call a test is about, the faults queued for
// it and the calls it got, and a rig brought to the point where the next request needs it.
import { isTokenAuthError } from '../../lib/index.js';
import type { TokenAuthErrorCode } from '../../lib/index.js';
import type { Fault, FakeTokenService } from './service.js';
import type { Rig } from './setup.js';

/** A token call: the login, or the token call that renews with the refresh token. */
export type Route = 'login' | 'token';

/** The faults the fake service answers the next `route` calls with. */
export function faultsOf(setup: Rig, route: Route): Fault[] {
  return route === 'login' ? setup.service.loginFaults : setup.service.tokenFaults;
}

/** The `route` calls the service received, faults and refusals included. */
export function callsTo(service: FakeTokenService, route: Route): number {
  return route === 'login' ? service.counters.loginCalls : service.counters.refreshCalls;
}

/**
 * Brings the rig to the point where the next request needs a `route` call: nothing stored for a login; a stored
 * pair whose access token the service no longer accepts for a token call (the request's 401 starts the refresh).
 */
export async function needing(route: Route, setup: Rig): Promise<void> {
  if (route === 'login') return;
  await setup.api.get('/prime');
  setup.service.expireAccessTokens();
}

/** Login calls made before the `route` call under test, by {@link needing}. */
export const loginsBefore = (route: Route): number => (route === 'login' ? 0 : 1);

/** The code of a TokenAuthError, or false for anything else. */
export function codeOf(error: unknown): TokenAuthErrorCode | false {
  return isTokenAuthError(error) && error.code;
}
