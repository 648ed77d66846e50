// The account's record as the holders of a shared store keep it between them: read into the guards and written back
// under the lock, in a turn the renewal (or the account) owns, so that what another holder wrote meanwhile is kept; or
// read without the lock, only to consult the guards.
import type { AccountRecord } from '../contract/store.js';
import type { Guards } from '../account/guards/guards.js';
import type { Pairs } from '../account/pairs.js';

/** What the record is read from and written to under the lock: a turn (turn.ts). */
export interface RecordTurn {
  getAccount(): Promise<AccountRecord | undefined>;
  setAccount(record: AccountRecord): void;
}

/** The account's record of one account, for a store that keeps it. */
export class RecordKeeper {
  /** Turns of this holder's at the store that are reading and changing the record. */
  private turnsOpen = 0;

  constructor(
    private readonly guards: Guards,
    private readonly pairs: Pairs,
    /** The record as the store has it now, read without the lock. */
    private readonly readAccount: () => Promise<AccountRecord | undefined>,
  ) {}

  /**
   * Brings the guards up to what the store has now, to consult them (a refusal about to renew): without the lock,
   * since nothing is changed on the strength of it.
   */
  async consult(): Promise<void> {
    // A turn of this holder's under way has read the record under the lock and is changing it: an older copy read
    // without the lock must not undo that (a call it spent would be forgotten, and the budget overrun).
    if (this.turnsOpen > 0) return;
    const record = await this.readAccount();
    if (record && this.turnsOpen === 0) this.restore(record);
  }

  /** Reads `turn`'s record into the guards; gives what the guards said then, to tell a change by at {@link close}. */
  async open(turn: RecordTurn): Promise<string | undefined> {
    this.turnsOpen += 1;
    try {
      const stored = await turn.getAccount();
      return stored !== undefined && this.restore(stored) ? JSON.stringify(this.guards.record()) : undefined;
    } catch (error) {
      // A record sealed with a key this holder lacks: the turn ends here, and closes nothing.
      this.turnsOpen -= 1;
      throw error;
    }
  }

  /**
   * Writes the guards back in `turn` when they changed since `before`; with no record in the store, when this holder's
   * says anything (what it knew before the turn counts too: a logout marked before its turn began).
   */
  close(turn: RecordTurn, before: string | undefined): void {
    const after = this.guards.record();
    if (before === undefined ? after.expiresAt > 0 : JSON.stringify(after) !== before) turn.setAccount(after);
    this.turnsOpen -= 1;
  }

  /**
   * Takes the guards of `record` (another holder's, or this one's from before) for this holder's own; false when it is
   * not a record the guards can read. A sign-in anywhere clears the logout's mark (under the lock), so a mark in the
   * record is a logout after every pair held: the pair this holder still uses (it missed the store's word of the
   * logout) goes too.
   */
  private restore(record: AccountRecord): boolean {
    const { guards, pairs } = this;
    if (!guards.restore(record)) return false;
    if (guards.signedOut) pairs.drop();
    return true;
  }
}
