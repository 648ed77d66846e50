import type { Emitter } from './events.js';
import { lifetimeOf } from './parse.js';
import type { SecretList } from './redact.js';
import type { TokenAuthEvents, TokenPair } from './types.js';

/**
 * The pair this holder uses now. `generation` numbers the pairs it has held, so that a request can tell whether
 * the pair it carried is still the current one without keeping the token itself.
 */
export interface Held {
  readonly pair: TokenPair;
  readonly generation: number;
  /** When it is renewed before being sent: its expiry less the margin its lifetime gives. */
  readonly renewAt: number;
}

/** How many given-up pairs a holder remembers, to refuse stale copies of them. */
const PAST_KEPT = 16;

/**
 * The pair one holder uses now, and when a pair counts as expired: within `marginFor(lifetime)` of its expiry, the
 * lifetime being the JWT's `exp - iat` where the token says, else the time it had left when this holder got it
 * (the whole lifetime, for a pair fresh from an answer).
 */
export class HeldPair {
  private held: Held | null = null;
  private generation = 0;
  /** The access tokens of the last pairs given up (replaced or dropped), newest last. */
  private readonly past: string[] = [];

  constructor(
    private readonly secrets: SecretList,
    private readonly events: Emitter<TokenAuthEvents>,
    private readonly clock: () => number,
    private readonly marginFor: (lifetimeMs: number) => number,
  ) {}

  get current(): Held | null {
    return this.held;
  }

  /** Uses `pair` from now on; `fromStore` when another holder obtained it, which the `adopt` event announces once. */
  hold(pair: TokenPair, fromStore: boolean): Held {
    this.generation += 1;
    const held: Held = { pair, generation: this.generation, renewAt: this.renewAt(pair) };
    this.giveUp();
    this.held = held;
    // A pair can come back (a store event, then a write refused by the fence): it was adopted once.
    const known = this.secrets.remember(pair);
    if (fromStore && !known) this.events.emit('adopt', { expiresAt: pair.expiresAt });
    return held;
  }

  /** Forgets the pair held, so that no request carries it again. */
  drop(): void {
    if (!this.held) return;
    this.giveUp();
    this.held = null;
    this.generation += 1;
  }

  /** This holder held `pair` before and has since replaced or dropped it: a stale copy, wherever it comes from. */
  givenUp(pair: TokenPair): boolean {
    return this.past.includes(pair.access);
  }

  /** The current pair, if valid and newer than the pair of `generation`. */
  newerThan(generation: number): Held | null {
    const held = this.held;
    return held && held.generation > generation && !this.expired(held) ? held : null;
  }

  /** Known to expire within its margin: renewed before it is sent. */
  expired(pair: TokenPair | Held): boolean {
    return this.clock() >= ('renewAt' in pair ? pair.renewAt : this.renewAt(pair));
  }

  private giveUp(): void {
    if (!this.held) return;
    this.past.push(this.held.pair.access);
    if (this.past.length > PAST_KEPT) this.past.shift();
  }

  private renewAt(pair: TokenPair): number {
    const expiresAt = pair.expiresAt;
    if (expiresAt === undefined) return Infinity;
    return expiresAt - this.marginFor(lifetimeOf(pair.access, expiresAt, this.clock()));
  }
}
