// The refusals renewing did not cure: a 401 that a renewal does not cure (a permission, not an expiry) must not cost a
// token call per refused request. What a refusal means (a permission of one endpoint, or refusals in general), and so
// whether renewing for one may cure it now.
import { INVALID, isNumber, isObject } from './record-part.js';
import type { RecordPart } from './record-part.js';

/** Refusals that renewing did not cure, as the account's record keeps them. */
export interface RefusalMemory {
  /** Endpoints whose refusals a renewal did not cure, and until when (epoch ms) that is believed. */
  uncured: Array<[endpoint: string, until: number]>;
  /** The one endpoint that refused a renewed pair since the last cure, while refusals are not general. */
  refusedOn?: string;
  /** Refusals are general: renewals for them wait for the back-off. */
  general: boolean;
  /** Renewals since refusals turned general that cured nothing: each doubles the wait. */
  uncuredRenewals: number;
  /** The next renewal for a refusal may go then (epoch ms). */
  until: number;
}

/** Endpoints remembered as not cured by a renewal; the oldest go first. */
const UNCURED_ENDPOINTS = 256;
/** However long tokens live, an endpoint is given another chance within a day. */
const LONGEST_MEMORY_MS = 24 * 3_600_000;

/**
 * Endpoints whose replay was refused with a fresh pair: a renewal did not cure their 401 (a permission, not an
 * expiry), so for a token lifetime their 401s go to the caller and cost no token call. Kept by time, not by pair:
 * holders sharing a store change the pair under each other, and must not take turns renewing for such a 401.
 */
export class UncuredEndpoints {
  private readonly until = new Map<string, number>();

  constructor(
    private readonly lifetimeMs: number,
    private readonly clock: () => number,
  ) {}

  has(endpoint: string): boolean {
    return (this.until.get(endpoint) ?? -Infinity) > this.clock();
  }

  add(endpoint: string): void {
    const now = this.clock();
    for (const [known, until] of this.until)
      if (until <= now || this.until.size >= UNCURED_ENDPOINTS) this.until.delete(known);
    this.until.set(endpoint, now + Math.min(this.lifetimeMs, LONGEST_MEMORY_MS));
  }

  /** The next login may be another account, whose permissions are its own. */
  clear(): void {
    this.until.clear();
  }

  get state(): RefusalMemory['uncured'] {
    const now = this.clock();
    return [...this.until].filter(([, until]) => until > now);
  }

  set state(uncured: RefusalMemory['uncured']) {
    this.until.clear();
    for (const [endpoint, until] of uncured.slice(-UNCURED_ENDPOINTS)) this.until.set(endpoint, until);
  }
}

/** The first wait once refusals look general; it doubles with each further renewal that cures nothing. */
const FIRST_BACKOFF_MS = 1_000;

/**
 * Renewals caused by refusals, held back while they cure nothing: a service that refuses every call (a revoked
 * permission, a misrouted gateway) while its token calls succeed must not cost a token call per refused request,
 * whatever the path. A renewed pair refused at once on one endpoint is a permission of that endpoint, which
 * {@link UncuredEndpoints} remembers. Refused on a second endpoint before any renewal has cured a refusal, refusals
 * are general: from then on the next renewal for a refusal waits 1 s, then 2 s, 4 s… up to the token lifetime (a day
 * at most), and until then refusals reach the caller. A cure ends it: a replay accepted with a renewed pair. Requests
 * accepted elsewhere do not, since they say nothing of the endpoints that refuse. A renewal at a known expiry is
 * never held back.
 */
export class RenewalBackoff {
  /** The one endpoint that refused a renewed pair since the last cure, while refusals are not general. */
  private refusedOn: string | undefined;
  /** Refusals are general: renewals for them are held back until `until`. */
  private general = false;
  /** Renewals since refusals turned general whose pair was refused at once, and the generation of the last. */
  private uncuredRenewals = 0;
  private lastUncured = -1;
  private until = 0;
  private readonly longestMs: number;

  constructor(
    lifetimeMs: number,
    private readonly clock: () => number,
  ) {
    this.longestMs = Math.min(lifetimeMs, LONGEST_MEMORY_MS);
  }

  /** Refusals are general: the per-endpoint memory does not explain them, and this back-off decides. */
  get refusalsAreGeneral(): boolean {
    return this.general;
  }

  /** Whether a refusal may start a renewal now. */
  allows(): boolean {
    return !this.general || this.clock() >= this.until;
  }

  /** The renewed pair of `generation` was refused at once on `endpoint`. */
  refused(generation: number, endpoint: string): void {
    if (!this.general) {
      if (this.refusedOn === undefined || this.refusedOn === endpoint) {
        this.refusedOn = endpoint;
        return;
      }
      this.general = true;
    }
    if (generation <= this.lastUncured) return;
    this.lastUncured = generation;
    this.uncuredRenewals += 1;
    this.until = this.clock() + Math.min(FIRST_BACKOFF_MS * 2 ** (this.uncuredRenewals - 1), this.longestMs);
  }

  /** A replay with the renewed pair of `generation` was accepted: a renewal cured a refusal. */
  /** True when it ended a back-off or a refusal being remembered: something changed. */
  cured(generation: number): boolean {
    if (generation < this.lastUncured || (this.refusedOn === undefined && !this.general)) return false;
    this.reset();
    return true;
  }

  reset(): void {
    this.refusedOn = undefined;
    this.general = false;
    this.uncuredRenewals = 0;
    this.lastUncured = -1;
  }

  /** The back-off as the record keeps it; which pair was refused last is this holder's own numbering, and stays. */
  get state(): Omit<RefusalMemory, 'uncured'> {
    const { general, uncuredRenewals, until, refusedOn } = this;
    return { general, uncuredRenewals, until, ...(refusedOn === undefined ? {} : { refusedOn }) };
  }

  set state(memory: Omit<RefusalMemory, 'uncured'>) {
    this.general = memory.general;
    this.uncuredRenewals = memory.uncuredRenewals;
    this.until = memory.until;
    this.refusedOn = memory.refusedOn;
  }
}

/**
 * What a refusal means, from the two memories above: a permission of one endpoint, or refusals in general; and so
 * whether renewing for one may cure it now. The one object the renewal consults about refusals.
 */
export class Refusals implements RecordPart<RefusalMemory> {
  readonly field = 'refusals';
  private readonly endpoints: UncuredEndpoints;
  private readonly backoff: RenewalBackoff;
  /** Per endpoint, the pair a renewal for a refused stream brought: a stream refused again with it cured nothing. */
  private readonly streamRenewals = new Map<string, number>();

  constructor(lifetimeMs: number, clock: () => number) {
    this.endpoints = new UncuredEndpoints(lifetimeMs, clock);
    this.backoff = new RenewalBackoff(lifetimeMs, clock);
  }

  /** Whether a renewal for a refusal on `endpoint` may cure it now. */
  mayRenewFor(endpoint: string): boolean {
    return this.backoff.refusalsAreGeneral ? this.backoff.allows() : !this.endpoints.has(endpoint);
  }

  /** The renewed pair of `generation` was refused at once on `endpoint`. */
  uncured(generation: number, endpoint: string): void {
    this.endpoints.add(endpoint);
    this.backoff.refused(generation, endpoint);
  }

  /** A replay with the renewed pair of `generation` was accepted. */
  /** True when the cure changed what is remembered (most accepted replays change nothing). */
  cured(generation: number): boolean {
    return this.backoff.cured(generation);
  }

  /** The pair a renewal for a refused stream on `endpoint` brought, if any. */
  streamRenewedWith(endpoint: string): number | undefined {
    return this.streamRenewals.get(endpoint);
  }

  /** A stream refused on `endpoint` started the renewal that brought the pair of `generation`. */
  streamRenewed(endpoint: string, generation: number): void {
    this.streamRenewals.delete(endpoint);
    this.streamRenewals.set(endpoint, generation);
    // The oldest go first: a few endpoints are enough to stop a renewal per refused stream.
    for (const oldest of this.streamRenewals.keys()) {
      if (this.streamRenewals.size <= STREAM_ENDPOINTS) break;
      this.streamRenewals.delete(oldest);
    }
  }

  /** The next login may be another account, whose permissions are its own. */
  forget(): void {
    this.endpoints.clear();
    this.backoff.reset();
    this.streamRenewals.clear();
  }

  save(): RefusalMemory {
    return { uncured: this.endpoints.state, ...this.backoff.state };
  }

  until(): number {
    const { uncured, until } = this.save();
    return Math.max(until, ...uncured.map(([, endpointUntil]) => endpointUntil));
  }

  parse(value: unknown): RefusalMemory | typeof INVALID {
    if (!isObject(value)) return INVALID;
    const { uncured, refusedOn, general, uncuredRenewals, until } = value;
    const ok =
      Array.isArray(uncured) &&
      uncured.every((entry: unknown) => Array.isArray(entry) && typeof entry[0] === 'string' && isNumber(entry[1])) &&
      (refusedOn === undefined || typeof refusedOn === 'string') &&
      typeof general === 'boolean' &&
      isNumber(uncuredRenewals) &&
      isNumber(until);
    return ok ? (value as unknown as RefusalMemory) : INVALID;
  }

  load({ uncured, ...backoff }: RefusalMemory): void {
    this.endpoints.state = uncured;
    this.backoff.state = backoff;
  }
}

/** Endpoints remembered for the streams refused on them. */
const STREAM_ENDPOINTS = 64;
