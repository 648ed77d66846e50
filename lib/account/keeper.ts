// One account as this holder keeps it, built in one place in dependency order (its guards, sign-in state and pairs,
// its link to the store, its renewals, the members of its handle), and what a request asks of it: the pair to carry,
// and, after a refusal, where the account stands (asked of decide.ts).
import type { InternalAxiosRequestConfig } from 'axios';
import { abortable, throwIfCanceled } from '../support/abort.js';
import { signedOut } from '../contract/errors.js';
import type { ResolvedOptions } from '../options/defaults.js';
import { SecretList } from '../support/redact.js';
import type { TokenClient } from '../token-calls/client.js';
import type { CheckedStore } from './checked-store.js';
import { Guards } from './guards/guards.js';
import { LazyLink } from './lazy-link.js';
import type { SharedLinkMaker, StoreLink } from './link.js';
import { AccountMembers } from './members.js';
import { Pairs } from './pairs.js';
import type { PairInUse } from './pairs.js';
import { decide } from './renewal/decide.js';
import { RenewalMachine } from './renewal/machine.js';
import { AccountReports } from './reports.js';
import type { Reports } from './reports.js';
import { SignInState } from './sign-in-state.js';
import { SoloLink } from './solo.js';

/** What the accounts of one attachment share, made once at attach. */
export interface Attachment {
  readonly options: ResolvedOptions;
  readonly client: TokenClient;
  readonly reports: Reports;
  /** The coordination layer's link maker, loaded by `import()` (asked for again after a load that failed). */
  readonly sharedLink: () => Promise<SharedLinkMaker>;
}

/**
 * What a request carried: which pair, how many renewals had failed when it left, and in which logout epoch. No secret
 * in it.
 */
export interface Ticket {
  readonly account: AccountKeeper;
  readonly generation: number;
  readonly failures: number;
  readonly epoch: number;
  /**
   * How many times the request went again before this send (0: its first). A replay's refusal goes to the caller, or
   * once more with a pair others' renewals brought.
   */
  readonly replays: number;
  /** The pair was taken from another holder (the store), not obtained by a token call of this holder's. */
  readonly taken: boolean;
}

/**
 * Where the account stands for a request refused with its ticket's pair, once the waits are over:
 * - `logged-out`: a logout came after it left; its refusal must not sign the user back in;
 * - `newer`: a renewal brought a valid pair since it left (a late 401): it goes again with that one;
 * - `no-cure`: renewing would cure nothing (a permission of this endpoint, or refusals in general, not yet again);
 * - `failed`: a renewal failed after it left: its late 401 shares that outcome, as it would have shared a success;
 * - `renew`: none of these: it renews (or joins the renewal under way).
 */
export type Standing =
  | { readonly is: 'logged-out' | 'no-cure' | 'renew' }
  | { readonly is: 'newer'; readonly pair: PairInUse }
  | { readonly is: 'failed'; readonly error: unknown };

/**
 * One account (the default one, `name` undefined, or a named one) as this holder keeps it: every account is its own
 * client, with its own pair, guards, single renewal and store.
 */
export class AccountKeeper {
  /** The secrets this account's pairs hold, masked wherever its errors surface. */
  readonly secrets = new SecretList();
  readonly reports: AccountReports;
  readonly members: AccountMembers;
  /** Requests of this account sent and not yet settled (counted for named accounts, which may be dropped). */
  inFlight = 0;
  /** When this account was last asked for, by the attachment's count of requests: the least recent goes first. */
  lastUsed = 0;
  private readonly guards: Guards;
  private readonly pairs: Pairs;
  private readonly link: StoreLink;
  private readonly signIn: SignInState;
  private readonly renewals: RenewalMachine;
  private readonly clock: () => number;

  /** `store`: this account's store (the attachment's, or its `forAccount(name)`), checked at attach; none: solo. */
  constructor(
    readonly name: string | undefined,
    { options, client, reports, sharedLink }: Attachment,
    store: CheckedStore | undefined,
  ) {
    const { secrets } = this;
    this.clock = options.clock;
    const accountReports = (this.reports = new AccountReports(reports, name));
    const guards = (this.guards = new Guards(options, { shared: store?.keepsRecord ?? false }));
    const signIn = (this.signIn = new SignInState({ loaded: !store }));
    const pairs = (this.pairs = new Pairs(options, { guards, secrets, reports: accountReports, signIn }));
    const linkParts = { options, pairs, guards, secrets, reports: accountReports, signIn };
    const link = (this.link = store ? new LazyLink(sharedLink, store, linkParts) : new SoloLink(pairs));
    const parts = { ...linkParts, name, client, link };
    this.renewals = new RenewalMachine(parts);
    this.members = new AccountMembers({ ...parts, renewals: this.renewals });
  }

  // ---- The hot path: the pair a request carries.

  /**
   * The pair a request may carry right away, without waiting for anything. Undefined sends the request through
   * `grant`, which also rejects a request already canceled.
   */
  ready(config: InternalAxiosRequestConfig): PairInUse | undefined {
    const inUse = this.pairs.current;
    if (!inUse || this.renewals.renewal || !this.link.loaded) return undefined;
    if (config.signal?.aborted || config.cancelToken?.reason) return undefined;
    return this.pairs.usable(inUse) ? inUse : undefined;
  }

  /**
   * The pair a request should carry: waits for a renewal under way, logs in when none is in use, renews one known to
   * be expired (or refused). A request aborted (or out of time) meanwhile stops waiting; the renewal goes on for the
   * others.
   */
  async grant(config?: InternalAxiosRequestConfig): Promise<PairInUse> {
    if (config) throwIfCanceled(config);
    const { renewals, pairs } = this;
    const renewal = renewals.renewal;
    if (renewal) {
      // Only the generation of a token waits for a store that is down: a token that has not expired goes on.
      const held = renewals.heldThroughOutage();
      if (held) return held;
      await renewals.wait(renewal, config);
    }
    if (!this.link.loaded) await this.link.load();
    switch (decide({ at: 'need', pair: pairs.standing(), signedOut: this.guards.signedOut })) {
      case 'use':
        return pairs.current!;
      case 'signed-out':
        throw signedOut();
      case 'renew-no-token':
        return renewals.wait(renewals.renew('no-token'), config);
      case 'renew-expired':
        return renewals.wait(renewals.renew('expired'), config);
      case 'renew-rejected':
        return renewals.wait(renewals.renew('rejected'), config);
    }
  }

  /** A valid access token for use outside axios (`auth.accessToken()`), by the same rule and single flight as a request. */
  async accessToken(): Promise<string> {
    return (await this.grant()).pair.access;
  }

  /** `granted`, or a newer valid pair a renewal finished meanwhile (in the microtasks since `granted` was given). */
  freshest(granted: PairInUse): PairInUse {
    return this.pairs.newerThan(granted.generation) ?? granted;
  }

  /** The ticket of a request that leaves now with `inUse`. */
  ticket(inUse: PairInUse, replays: number): Ticket {
    const { generation, taken } = inUse;
    return { account: this, generation, failures: this.renewals.failures, epoch: this.pairs.epoch, replays, taken };
  }

  // ---- What a refusal asks of the account (request/refusal.ts decides).

  /**
   * Brings the guards up to what any holder of a shared store found (a refusal about to renew). The wait itself, not a
   * function awaiting it: thousands of requests may wait at once, each holding what it waits with.
   */
  consult(config: InternalAxiosRequestConfig): Promise<unknown> {
    const { link } = this;
    return link.keepsRecord
      ? abortable(link.consult(), config, { clock: this.clock, timedOut: link.readTimedOut })
      : Promise.resolve();
  }

  /**
   * Waits for the renewal under way, if any, as one of its waiters: it rejects as the renewal (or the wait) fails. The
   * wait itself, as `consult`'s.
   */
  waitForRenewal(config: InternalAxiosRequestConfig): Promise<unknown> {
    const renewal = this.renewals.renewal;
    return renewal ? this.renewals.wait(renewal, config) : Promise.resolve();
  }

  /** Where the account stands for `ticket`'s request, refused on `endpoint`: see {@link Standing}. */
  standing(ticket: Ticket, endpoint: string): Standing {
    const newer = this.pairs.newerThan(ticket.generation);
    const failed = this.renewals.failedSince(ticket.failures);
    const facts = {
      at: 'refusal',
      loggedOut: ticket.epoch !== this.pairs.epoch,
      newer: newer !== null,
      // As any holder of a shared store found it (consulted by the refusal's decision).
      mayRenew: this.guards.mayRenewFor(endpoint),
      failedSince: failed !== undefined,
    } as const;
    const is = decide(facts);
    if (is === 'newer') return { is, pair: newer! };
    if (is === 'failed') return { is, error: failed!.error };
    return { is };
  }

  /** The valid pair a renewal brought since `ticket`'s request left, if any. */
  renewedSince(ticket: Ticket): PairInUse | null {
    return this.pairs.newerThan(ticket.generation);
  }

  /**
   * Renews for a refusal of `ticket`'s pair (or joins the renewal under way), as one of its waiters. Until a pair
   * replaces it, the refused pair goes out no more: later requests wait for a renewal, or fail with its error, unsent.
   */
  renewForRefusal(ticket: Ticket, config: InternalAxiosRequestConfig): Promise<PairInUse> {
    this.pairs.refused(ticket.generation);
    return this.renewals.wait(this.renewals.renew('rejected'), config);
  }

  /** `config`'s request, refused, goes again: its URL masked when the event's listener reads it. */
  replaying(config: InternalAxiosRequestConfig): void {
    this.reports.replay((config.method ?? 'get').toUpperCase(), () => this.secrets.mask(config.url ?? ''));
  }

  /** `ticket`'s replay, sent with the current pair, was refused on `endpoint` too: renewing did not cure it. */
  async uncured(ticket: Ticket, endpoint: string): Promise<void> {
    if (this.pairs.current?.generation !== ticket.generation) return;
    await this.recordChange(() => this.guards.uncured(ticket.generation, endpoint));
  }

  /** A replay that carried `ticket`'s pair was accepted: a renewal cured a refusal, so renewals cure again. */
  cured(ticket: Ticket): void {
    const { guards } = this;
    // Every holder hears of a cure, but only of one that changed something: most accepted replays do not.
    if (guards.cured(ticket.generation) && this.link.keepsRecord)
      this.recordChange(() => guards.cured(ticket.generation)).catch(() => undefined);
  }

  /**
   * A stream refused on `endpoint` with `ticket`'s pair: whether a renewal a stream refused there before brought that
   * pair (then renewing cured nothing); else the renewal it starts is noted, by the pair it brings.
   */
  streamRenewedWith(endpoint: string, ticket: Ticket): boolean {
    return this.guards.streamRenewedWith(endpoint, ticket.generation);
  }

  /** A stream refused on `endpoint` started the renewal that brought `inUse`. */
  streamRenewed(endpoint: string, inUse: PairInUse): void {
    this.guards.streamRenewed(endpoint, inUse.generation);
  }

  /** Nothing of this account is under way: no request, renewal, waiter or listener. It may be dropped. */
  get idle(): boolean {
    return this.inFlight === 0 && !this.renewals.renewal && this.reports.counts.waiting === 0 && !this.signIn.heard;
  }

  close(): void {
    this.link.close();
  }

  /**
   * Runs `change` on the guards as the store has them, under its lock, and writes what it changed back: every holder
   * hears of it. Without a store that keeps the record, on this holder's guards alone, at once.
   */
  private async recordChange(change: () => void): Promise<void> {
    const { link } = this;
    if (!link.keepsRecord) return change();
    const turn = await link.turn();
    try {
      await turn.openRecord();
      try {
        change();
      } finally {
        turn.closeRecord();
      }
    } finally {
      await turn.end();
    }
  }
}
