// The refresh token the browser keeps in an HttpOnly cookie, refused by the token call: no more such calls until a pair
// comes (a login, or another holder's). Only with `refreshTokenInCookie`.
import type { TokenAuthError } from '../../contract/errors.js';
import type { Gate, GuardedCall } from './gate.js';
import { INVALID } from './record-part.js';
import type { RecordPart } from './record-part.js';

/** How long the record keeps the refusal after it. */
const KEPT_MS = 24 * 3_600_000;

export class CookieRefusal implements Gate, RecordPart<boolean> {
  readonly field = 'cookieRefreshRefused';
  private refused = false;
  private at = 0;

  constructor(private readonly clock: () => number) {}

  /** The cookie was refused, and no pair came since: a token call from it would be refused again. */
  get active(): boolean {
    return this.refused;
  }

  /** A pair came from elsewhere (`setTokens()`): the cookie that came with it is another. */
  cleared(): void {
    this.refused = false;
  }

  learn({ operation, refreshToken }: GuardedCall, error?: TokenAuthError): void {
    // Any pair ends it: a login sets a new cookie, another holder's pair came with one.
    if (!error) this.refused = false;
    else if (operation === 'refresh' && refreshToken === undefined && error.code === 'REFRESH_REJECTED') {
      this.refused = true;
      this.at = this.clock();
    }
  }

  save(): boolean {
    return this.refused;
  }

  until(): number {
    return this.refused ? this.at + KEPT_MS : 0;
  }

  parse(value: unknown): boolean | typeof INVALID {
    return typeof value === 'boolean' ? value : INVALID;
  }

  load(refused: boolean, { expiresAt }: { expiresAt: number }): void {
    this.refused = refused;
    if (refused) this.at = Math.max(this.at, expiresAt - KEPT_MS);
  }
}
