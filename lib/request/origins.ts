// Which requests carry the access token: `origins`, and the instance's `baseURL` as each request is sent.
import type { AxiosRequestConfig } from 'axios';
import { ABSOLUTE, originOf, requestURL } from '../support/url.js';

/**
 * Decides which requests may carry the access token: those to an origin of `rules`, and, when `followed` is given
 * (no explicit `origins`), those to the origin of the URL it returns as each request is sent: the instance's
 * `baseURL`, which a generated client may set after attach.
 */
export class OriginPolicy {
  private readonly exact: ReadonlySet<string>;
  private readonly patterns: readonly RegExp[];

  constructor(
    rules: ReadonlyArray<string | RegExp>,
    private readonly followed?: () => unknown,
  ) {
    this.exact = new Set(
      rules.filter((rule): rule is string => typeof rule === 'string').map((rule) => originOf(rule) ?? rule),
    );
    // A global or sticky RegExp keeps state between test() calls: matching with one would flip every time.
    this.patterns = rules
      .filter((rule): rule is RegExp => rule instanceof RegExp)
      .map((rule) => new RegExp(rule.source, rule.flags.replace(/[gy]/g, '')));
  }

  private lastBase: string | undefined;
  private lastBaseFollowed: unknown;
  private lastBaseAllowed = false;
  private lastFollowed: unknown;
  private followedOrigin: string | undefined;

  allows(config: AxiosRequestConfig): boolean {
    const url = config.url ?? '';
    const base = config.baseURL;
    // The hot path: a relative URL stays on its baseURL's origin, which rarely changes between requests.
    if (base && !ABSOLUTE.test(url)) {
      const followed = this.followed?.();
      if (base !== this.lastBase || followed !== this.lastBaseFollowed) {
        this.lastBase = base;
        this.lastBaseFollowed = followed;
        this.lastBaseAllowed = this.allowsURL(base);
      }
      return this.lastBaseAllowed;
    }
    return this.allowsURL(requestURL(config));
  }

  allowsURL(url: string | undefined): boolean {
    const origin = originOf(url);
    if (origin === undefined || origin === 'null') return false;
    return (
      this.exact.has(origin) ||
      this.patterns.some((pattern) => pattern.test(origin)) ||
      (this.followed !== undefined && origin === this.followedNow())
    );
  }

  /** The origins as they are now, for a message: the rules, and the followed URL's origin. */
  listed(): string {
    const now = [...this.exact, ...this.patterns.map(String)];
    const followed = this.followed && this.followedNow();
    if (followed !== undefined && !now.includes(followed)) now.push(followed);
    return now.join(', ') || 'none';
  }

  /** The origin of the followed URL as it is now; its last value is remembered, since it rarely changes. */
  private followedNow(): string | undefined {
    const followed = this.followed!();
    if (followed !== this.lastFollowed) {
      this.lastFollowed = followed;
      this.followedOrigin = typeof followed === 'string' ? originOf(followed) : undefined;
    }
    return this.followedOrigin;
  }
}
