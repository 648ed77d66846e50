// The policies the renewal consults before it spends a token call: small objects that each remember one thing.
import type { TokenAuthError } from './errors.js';

/**
 * After the service rejects the credentials, automatic logins wait: the same credentials will not turn good soon.
 * Each rejection in a row doubles the wait, up to 16 times the base; a successful login ends it.
 */
export class LoginCooldown {
  private block: { until: number; error: TokenAuthError; rejections: number } | null = null;

  constructor(
    private readonly baseMs: number,
    private readonly clock: () => number,
  ) {}

  /** The rejection that automatic logins fail with until the cooldown ends; undefined when they may go. */
  pending(): TokenAuthError | undefined {
    const block = this.block;
    return block && this.clock() < block.until ? block.error : undefined;
  }

  rejected(error: TokenAuthError): void {
    const rejections = (this.block?.rejections ?? 0) + 1;
    const waitMs = this.baseMs * 2 ** Math.min(rejections - 1, 4);
    this.block = { until: this.clock() + waitMs, error, rejections };
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
}
