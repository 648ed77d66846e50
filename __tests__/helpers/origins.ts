// What the tests of the origins the token goes to (origins-*.test.ts) share: a third-party host, and hosts that record
// the Authorization header of every request they get.
import nock from 'nock';
import type { TokenAuthEvents } from '../../lib/index.js';
import type { FakeTokenService } from './service.js';

/** A host that is none of the instance's. */
export const THIRD = 'https://third.test';

/** The warning of a refusal outside `origins`. */
export type OriginWarning = Extract<TokenAuthEvents['warning'], { code: 'ORIGIN_NOT_IN_ORIGINS' }>;

/**
 * A host the test watches: records the Authorization header of every request it gets, and answers 200 to an access
 * token `service` accepts, 401 to anything else.
 */
export function watchedHost(origin: string, service?: FakeTokenService): Array<string | undefined> {
  const seen: Array<string | undefined> = [];
  nock(origin)
    .persist()
    .get(() => true)
    .reply(function (this: nock.ReplyFnContext) {
      const authorization = this.req.headers.authorization;
      seen.push(authorization);
      const token = authorization?.startsWith('Bearer ') ? authorization.slice(7) : undefined;
      return token !== undefined && service?.validAccess.has(token)
        ? [200, { ok: true }]
        : [401, { detail: 'Authentication credentials were not provided.' }];
    });
  return seen;
}
