// The login pause: after the service rejects the login (the credentials, or an address that has no login call),
// automatic logins wait, since the same login will not turn good soon. Each rejection in a row doubles the wait, up to
// 16 times the base; a successful login ends it. A person's typed sign-in neither waits for it nor starts it.
import { TokenAuthError } from '../../contract/errors.js';
import type { TokenAuthErrorCode } from '../../contract/errors.js';
import type { Gate, GuardedCall } from './gate.js';
import { INVALID, isNumber, isObject } from './record-part.js';
import type { RecordPart } from './record-part.js';

/** The pause as the account's record keeps it. */
export interface LoginPauseState {
  /** Automatic logins wait until then (epoch ms). */
  until: number;
  /** Rejections in a row: each doubles the pause. */
  rejections: number;
  /** The rejection's code, as the paused logins report it. */
  code: TokenAuthErrorCode;
  /** The rejection's message (masked), which the paused logins quote. */
  message: string;
  /** The HTTP status of the rejection, when there was one. */
  status?: number;
  /** Which holder was refused: an id of no meaning outside the store, so that the others can say it was not them. */
  by?: string;
}

/** The codes of a rejection that retrying does not cure. */
const REJECTIONS: ReadonlySet<TokenAuthErrorCode> = new Set(['LOGIN_REJECTED', 'TOKEN_ENDPOINT_NOT_FOUND']);

export class LoginPause implements Gate, RecordPart<LoginPauseState | null> {
  readonly field = 'loginPause';
  private block: { until: number; error: TokenAuthError; rejections: number; by: string } | null = null;

  /** `holder` names this holder in the record, so that another holder's pause says so. */
  constructor(
    private readonly baseMs: number,
    private readonly clock: () => number,
    private readonly holder: string,
  ) {}

  /**
   * The error every login but the user's `auth.login()` fails with until the pause ends: the rejection, with the pause
   * and its end in the message and the rejection itself as `cause`.
   */
  refuse(call: GuardedCall): TokenAuthError | undefined {
    const block = this.block;
    const now = this.clock();
    if (call.operation !== 'login' || call.mode === 'login' || !block || now >= block.until) return undefined;
    const { code, message, status } = block.error;
    return new TokenAuthError(
      code,
      `Automatic logins are paused until ${new Date(block.until).toISOString()} (${Math.ceil((block.until - now) / 1000)} s more, \`loginCooldownMs\`) after this rejection` +
        (block.by === this.holder ? ', ' : ', which another holder of the shared store saw (this one sent nothing), ') +
        `so that the account is not locked by repeated attempts; \`auth.login()\` tries at once. ${message}`,
      { cause: block.error, status },
    );
  }

  /** A login ended: a rejection that retrying does not cure starts the pause, or doubles it; a success ends it. */
  learn(call: GuardedCall, error?: TokenAuthError): void {
    if (call.operation !== 'login') return;
    if (!error) {
      this.block = null;
      return;
    }
    if (call.typed || !REJECTIONS.has(error.code)) return;
    const rejections = (this.block?.rejections ?? 0) + 1;
    const waitMs = this.baseMs * 2 ** Math.min(rejections - 1, 4);
    this.block = { until: this.clock() + waitMs, error, rejections, by: this.holder };
  }

  save(): LoginPauseState | null {
    const block = this.block;
    if (!block) return null;
    const { code, message, status } = block.error;
    // `by`: without it, the holder that was refused reads its own pause back as another's.
    return {
      until: block.until,
      rejections: block.rejections,
      code,
      message,
      ...(status === undefined ? {} : { status }),
      by: block.by,
    };
  }

  until(): number {
    return this.block?.until ?? 0;
  }

  /** Automatic logins wait until the pause's end: a store tells the holders waiting for its lock. */
  halts(): number {
    return this.until();
  }

  parse(value: unknown): LoginPauseState | null | typeof INVALID {
    if (value === null) return null;
    if (!isObject(value)) return INVALID;
    const { until, rejections, code, message, status, by } = value;
    const ok =
      isNumber(until) &&
      isNumber(rejections) &&
      typeof code === 'string' &&
      typeof message === 'string' &&
      (status === undefined || isNumber(status)) &&
      (by === undefined || typeof by === 'string');
    return ok ? (value as unknown as LoginPauseState) : INVALID;
  }

  load(pause: LoginPauseState | null): void {
    // The pause this holder set, back from the store: kept as it is, with the rejection as its cause.
    const block = this.block;
    if (block && pause && block.until === pause.until && block.rejections === pause.rejections && block.by === pause.by)
      return;
    this.block = pause && {
      until: pause.until,
      rejections: pause.rejections,
      by: pause.by ?? '',
      error: new TokenAuthError(pause.code, pause.message, pause.status === undefined ? {} : { status: pause.status }),
    };
  }
}
