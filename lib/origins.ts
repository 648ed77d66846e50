import type { AxiosRequestConfig } from 'axios';

const ABSOLUTE = /^([a-z][a-z\d+\-.]*:)?\/\//i;

/** The page's address in a browser, so relative URLs resolve as the browser would resolve them. */
export function pageAddress(): string | undefined {
  return (globalThis as { location?: { href?: string } }).location?.href;
}

/** The origin of `url`, or undefined when it cannot be resolved (a relative URL outside a browser). */
export function originOf(url: string | undefined): string | undefined {
  if (!url) return undefined;
  try {
    return new URL(url, pageAddress()).origin;
  } catch {
    return undefined;
  }
}

/** The absolute URL axios will call for `config`, as axios' buildFullPath combines `baseURL` and `url`. */
export function requestURL(config: AxiosRequestConfig): string | undefined {
  const url = config.url ?? '';
  const base = config.baseURL;
  if (base && (!ABSOLUTE.test(url) || config.allowAbsoluteUrls === false)) {
    return url ? `${base.replace(/\/?\/$/, '')}/${url.replace(/^\/+/, '')}` : base;
  }
  return url;
}

/** Decides which requests may carry the access token. */
export class OriginPolicy {
  private readonly exact: ReadonlySet<string>;
  private readonly patterns: readonly RegExp[];

  constructor(rules: ReadonlyArray<string | RegExp>) {
    this.exact = new Set(
      rules.filter((rule): rule is string => typeof rule === 'string').map((rule) => originOf(rule) ?? rule),
    );
    // A global or sticky RegExp keeps state between test() calls: matching with one would flip every time.
    this.patterns = rules
      .filter((rule): rule is RegExp => rule instanceof RegExp)
      .map((rule) => new RegExp(rule.source, rule.flags.replace(/[gy]/g, '')));
  }

  private lastBase: string | undefined;
  private lastBaseAllowed = false;

  allows(config: AxiosRequestConfig): boolean {
    const url = config.url ?? '';
    const base = config.baseURL;
    // The hot path: a relative URL stays on its baseURL's origin, which rarely changes between requests.
    if (base && !ABSOLUTE.test(url)) {
      if (base !== this.lastBase) {
        this.lastBase = base;
        this.lastBaseAllowed = this.allowsURL(base);
      }
      return this.lastBaseAllowed;
    }
    return this.allowsURL(requestURL(config));
  }

  allowsURL(url: string | undefined): boolean {
    const origin = originOf(url);
    if (origin === undefined || origin === 'null') return false;
    return this.exact.has(origin) || this.patterns.some((pattern) => pattern.test(origin));
  }
}

/** Where an answer came from after redirects, when the adapter tells: Node's follow-redirects or an XMLHttpRequest. */
export function answeredFrom(request: unknown): string | undefined {
  const known = request as { res?: { responseUrl?: unknown }; responseURL?: unknown } | null | undefined;
  const url = known?.res?.responseUrl ?? known?.responseURL;
  return typeof url === 'string' && url !== '' ? url : undefined;
}
