// The policies the renewal consults before it spends a token call: small objects that each remember one thing, and
// can give it to (and take it from) the account's record.
import { TokenAuthError } from '../../contract/errors.js';
import type { LoginPause, RefusalMemory } from '../../contract/store.js';

/**
 * After the service rejects the login (the credentials, or an address that has no login call), automatic logins
 * wait: the same login will not turn good soon. Each rejection in a row doubles the wait, up to 16 times the base;
 * a successful login ends it.
 */
export class LoginCooldown {
  private block: { until: number; error: TokenAuthError; rejections: number; by: string } | null = null;

  /** What the account record keeps of the pause: its end, the rejections in a row, and the rejection's words. */
  get state(): LoginPause | null {
    const block = this.block;
    if (!block) return null;
    const { code, message, status } = block.error;
    return {
      until: block.until,
      rejections: block.rejections,
      code,
      message,
      ...(status === undefined ? {} : { status }),
      // Without it, the holder that was refused reads its own pause back as another's.
      by: block.by,
    };
  }

  set state(pause: LoginPause | null) {
    // The pause this holder set, back from the store: keep it as it is, with the rejection as its cause.
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

  /** `holder` names this holder in the record, so that another holder's pause says so. */
  constructor(
    private readonly baseMs: number,
    private readonly clock: () => number,
    private readonly holder = '',
  ) {}

  /**
   * The error automatic logins fail with until the cooldown ends: the rejection, with the pause and its end in the
   * message and the rejection itself as `cause`. Undefined when logins may go.
   */
  pending(): TokenAuthError | undefined {
    const block = this.block;
    const now = this.clock();
    if (!block || now >= block.until) return undefined;
    const { code, message, status } = block.error;
    return new TokenAuthError(
      code,
      `Automatic logins are paused until ${new Date(block.until).toISOString()} (${Math.ceil((block.until - now) / 1000)} s more, \`loginCooldownMs\`) after this rejection` +
        (block.by === this.holder ? ', ' : ', which another holder of the shared store saw (this one sent nothing), ') +
        `so that the account is not locked by repeated attempts; \`auth.login()\` tries at once. ${message}`,
      { cause: block.error, status },
    );
  }

  /** A login failed: a refusal that retrying does not cure starts the cooldown, or doubles it. */
  rejected(error: TokenAuthError): void {
    if (error.code !== 'LOGIN_REJECTED' && error.code !== 'TOKEN_ENDPOINT_NOT_FOUND') return;
    const rejections = (this.block?.rejections ?? 0) + 1;
    const waitMs = this.baseMs * 2 ** Math.min(rejections - 1, 4);
    this.block = { until: this.clock() + waitMs, error, rejections, by: this.holder };
  }

  succeeded(): void {
    this.block = null;
  }
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
export class RefusalPolicy {
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

  get state(): RefusalMemory {
    return { uncured: this.endpoints.state, ...this.backoff.state };
  }

  set state({ uncured, ...backoff }: RefusalMemory) {
    this.endpoints.state = uncured;
    this.backoff.state = backoff;
  }
}

/** Endpoints remembered for the streams refused on them. */
const STREAM_ENDPOINTS = 64;
