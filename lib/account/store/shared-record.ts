// The account's record as the holders of a shared store keep it between them: read and written back under the lock,
// so that what another holder wrote meanwhile is kept, or read without it, only to consult the guards.
import type { AccountRecord } from '../../contract/store.js';
import type { Guards } from '../guards/guards.js';
import type { Pairs } from '../pairs.js';
import type { StoreLink } from './link.js';
import type { StoreTurn } from './turn.js';

/**
 * The transactions of one account's record. Without a store that keeps it (see `LinkedStore.keepsRecord`), every
 * method simply runs its work on this holder's own guards.
 */
export class SharedRecord {
  /** Turns of this holder's at the store that are reading and changing the record. */
  private turnsOpen = 0;

  constructor(private readonly parts: { guards: Guards; pairs: Pairs; link: StoreLink }) {}

  /**
   * Brings the guards up to what the store has now, to consult them (a refusal about to renew): without the lock,
   * since nothing is changed on the strength of it.
   */
  async consult(): Promise<void> {
    // A turn of this holder's under way has read the record under the lock and is changing it: an older copy read
    // without the lock must not undo that (a call it spent would be forgotten, and the budget overrun).
    if (this.turnsOpen > 0) return;
    const record = await this.parts.link.readAccount();
    if (record && this.turnsOpen === 0) this.restore(record);
  }

  /** Runs `change` on the guards as the store has them, under the lock, and writes what it changed back. */
  async change(change: () => void): Promise<void> {
    if (!this.parts.link.keepsRecord) return change();
    const turn = await this.parts.link.turn();
    try {
      await this.within(turn, change);
    } finally {
      await turn.end();
    }
  }

  /** Runs `work` on the guards as `turn`'s store has them, and writes what `work` changed back in the same turn. */
  async within<T>(turn: StoreTurn, work: () => T | Promise<T>): Promise<T> {
    const { link, guards } = this.parts;
    if (!link.keepsRecord) return work();
    this.turnsOpen += 1;
    try {
      const stored = await turn.getAccount();
      const restored = stored !== undefined && this.restore(stored);
      const before = restored ? JSON.stringify(guards.record()) : undefined;
      try {
        return await work();
      } finally {
        // Written when it changed; with no record in the store, when this holder's says anything (what it knew
        // before the turn counts too: a logout marked before its turn began).
        const after = guards.record();
        if (before === undefined ? after.expiresAt > 0 : JSON.stringify(after) !== before) turn.setAccount(after);
      }
    } finally {
      this.turnsOpen -= 1;
    }
  }

  /**
   * Takes the guards of `record` (another holder's, or this one's from before) for this holder's own; false when it is
   * not a record the guards can read. A sign-in anywhere clears the logout's mark (under the lock), so a mark in the
   * record is a logout after every pair held: the pair this holder still uses (it missed the store's word of the
   * logout) goes too.
   */
  private restore(record: AccountRecord): boolean {
    const { guards, pairs } = this.parts;
    if (!guards.restore(record)) return false;
    if (guards.signedOut.active) pairs.drop();
    return true;
  }
}
