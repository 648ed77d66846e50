// Every call the plugin makes of a shared store, in one place: bounded by `storeTimeoutMs`, its failure reported
// (secrets masked) and answered as if the store were empty or had written, and the store's outage told from it.
import { settle, TIMED_OUT, UNANSWERED, unanswered } from '../support/deadline.js';
import { hasCode, TokenAuthError } from '../contract/errors.js';
import type { SecretList } from '../support/redact.js';
import type { AccountReports } from '../account/reports.js';
import type { Outage } from '../account/link.js';
import { foundDown, goesAlone } from './outage.js';
import type { OutagePolicy } from './outage.js';

export const noop = (): void => {};

/** What a call that failed (and was reported) gives instead of an answer. */
export const FAILED = Symbol('failed');
/** What a call that got no answer within `storeTimeoutMs` gives: it failed too, and the store may be silent now. */
export const SILENT = Symbol('silent');

/** How one call is made: bounded by `storeTimeoutMs` or not, a read, and who hears of its failure (masked). */
export interface CallHow {
  bounded?: boolean;
  read?: boolean;
  failed?: (error: unknown, masked: unknown) => void;
}

/**
 * An outage of the store as this holder sees it: the store's last error (masked), and the warnings said of it so far,
 * each said once per outage.
 */
export class StoreOutage implements Outage {
  private said = new Set<'down' | 'alone'>();

  constructor(
    public cause: unknown,
    private readonly reports: AccountReports,
    private readonly policy: OutagePolicy,
  ) {}

  get alone(): boolean {
    return this.said.has('alone');
  }

  foundDown(): void {
    if (this.said.has('down')) return;
    this.said.add('down');
    foundDown(this.reports, this.policy);
  }

  /** It went alone in this outage. */
  wentAlone(): void {
    this.said.add('alone');
  }
}

/** The calls of one account's store. */
export class StoreCalls {
  /** See {@link outage}. */
  private down: StoreOutage | undefined;
  /** The messages of the missing keys said so far: each is said once. */
  private readonly keysMissing = new Set<string>();

  constructor(
    private readonly timeoutMs: number,
    private readonly secrets: SecretList,
    private readonly reports: AccountReports,
    private readonly policy: OutagePolicy,
  ) {}

  /**
   * The store is down: a call failed (or got no answer) and none has succeeded since, nor has the store told of a pair.
   * The first failure of an outage is reported; the calls that fail after it are not, one by one.
   */
  get outage(): StoreOutage | undefined {
    return this.down;
  }

  /**
   * A renewal goes without the store's lock: said once per outage (and said even when a call of its turn answered
   * since, ending the outage as this holder saw it).
   */
  goesAlone(): void {
    if (!this.down?.alone) goesAlone(this.reports);
    this.down?.wentAlone();
  }

  /** The store told of a pair (pub/sub, a file event): it answers again, if it was down. */
  heard(): void {
    this.down = undefined;
  }

  /**
   * The answer of `operation`; FAILED once it failed, SILENT when it got no answer (when `bounded`, within
   * `storeTimeoutMs`; or a store's try at its lock, bounded by the store); undefined when `operation` is a `read` and
   * the store answered that what it holds cannot be used (see below).
   */
  async make<T>(
    operation: () => T | Promise<T>,
    { bounded = true, read = false, failed = noop }: CallHow = {},
  ): Promise<T | undefined | typeof FAILED | typeof SILENT> {
    const call = Promise.resolve().then(operation);
    try {
      const answer = bounded ? await settle(call, { ms: this.timeoutMs }) : await call;
      if (answer === TIMED_OUT)
        throw unanswered(`it did not answer within ${Math.round(this.timeoutMs)} ms, \`storeTimeoutMs\``);
      this.down = undefined;
      return answer as Awaited<T>;
    } catch (error) {
      // A record sealed with a key this holder lacks: nothing here can be done with it, and a login would seal a pair
      // that the holders with the key could not open in turn. The request fails, saying which key (once, as a failure).
      if (hasCode(error, 'STORE_KEY_MISSING')) {
        if (!this.keysMissing.has(error.message)) this.reports.storeFailure(error);
        this.keysMissing.add(error.message);
        throw error;
      }
      // The store answered, and says what it holds cannot be used (a sealed pair that failed authentication): as a
      // store failure, the turn would write nothing and every holder would log in for itself; read as nothing, the
      // first holder under the lock logs in once and overwrites it, and the others take its pair.
      if (read && hasCode(error, 'STORE_FAILED')) {
        this.reports.storeFailure(this.secrets.copy(error));
        return undefined;
      }
      return this.failed(error, failed);
    }
  }

  /** A call that failed: the first of an outage reported; FAILED, or SILENT for one that got no answer. */
  private failed(error: unknown, hear: (error: unknown, masked: unknown) => void): typeof FAILED | typeof SILENT {
    const reason = this.secrets.mask(error instanceof Error ? error.message : String(error));
    const cause = error instanceof Error ? this.secrets.copy(error) : undefined;
    const first = this.down === undefined;
    if (first) this.down = new StoreOutage(cause, this.reports, this.policy);
    else this.down!.cause = cause;
    hear(error, cause);
    if (first)
      this.reports.storeFailure(
        new TokenAuthError(
          'STORE_FAILED',
          `The token store failed (${reason}); going on with the tokens held in memory.`,
          {
            cause,
          },
        ),
      );
    return isUnanswered(error) ? SILENT : FAILED;
  }
}

/** A failure that was a store not answering. */
export function isUnanswered(error: unknown): boolean {
  return error instanceof Error && error.name === UNANSWERED;
}
