// URLs as axios builds them and as a browser resolves them: origins, the URL a request goes to, and where an answer
// came from.
import type { AxiosRequestConfig } from 'axios';
import { HONOURS_ALLOW_ABSOLUTE_URLS } from './axios-version.js';

/** A URL with a scheme, or protocol-relative: what axios does not join to `baseURL`. */
export const ABSOLUTE = /^([a-z][a-z\d+\-.]*:)?\/\//i;

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
  if (base && (!ABSOLUTE.test(url) || (config.allowAbsoluteUrls === false && HONOURS_ALLOW_ABSOLUTE_URLS))) {
    return url ? `${base.replace(/\/?\/$/, '')}/${url.replace(/^\/+/, '')}` : base;
  }
  return url;
}

/** Where an answer came from after redirects, when the adapter tells: Node's follow-redirects or an XMLHttpRequest. */
export function answeredFrom(request: unknown): string | undefined {
  const known = request as { res?: { responseUrl?: unknown }; responseURL?: unknown } | null | undefined;
  const url = known?.res?.responseUrl ?? known?.responseURL;
  return typeof url === 'string' && url !== '' ? url : undefined;
}
