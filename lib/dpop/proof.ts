// DPoP proofs (RFC 9449, section 4): a JWS of `typ` dpop+jwt that carries the public JWK, signed by the account's
// key for one request: its method (`htm`), its URL without query and fragment (`htu`), the time (`iat`), a fresh
// `jti`, the latest `nonce` the server (token service or API) gave at the URL's origin, and, beside an access token, the token's hash (`ath`).
import { webCrypto } from '../support/web-crypto.js';
import { base64UrlFromBytes } from '../support/base64.js';
import { sha256Base64Url, WEB_CRYPTO } from './key.js';
import type { DpopKey } from './key.js';

/**
 * Whose nonce a proof carries: the token service's (its login and token calls) or the API's (the app's requests). Each
 * server gives its own, and one origin may serve both: each is kept apart, so that a renewal does not make every
 * request after it carry the token service's nonce, and be challenged for the API's. Until a server has given its own,
 * its proofs carry the other's, which a server that gives one nonce for the whole origin takes.
 */
export type Server = 'token' | 'api';

/** What a proof is for: the server, the request's method and URL, and the access token it carries, if any. */
export interface ProofTarget {
  readonly server: Server;
  readonly method: string;
  readonly url: string;
  readonly accessToken?: string;
}

/**
 * The proofs of one account: the nonces the servers gave, the latest per origin, and the hash of the access token in
 * use (made once per token, not once per request).
 */
export class DpopProofs {
  private readonly nonces = new Map<string, string>();
  private hashed: { token: string; ath: Promise<string> } | undefined;

  constructor(private readonly clock: () => number) {}

  /** A proof by `key` for `target`, with the nonce of its server at its origin when that server gave one. */
  async proof(key: DpopKey, target: ProofTarget): Promise<string> {
    const url = new URL(target.url);
    const nonce = this.nonceFor(target.server, target.url);
    url.search = '';
    url.hash = '';
    const header = { typ: 'dpop+jwt', alg: key.algorithm, jwk: key.publicJwk };
    const payload = {
      jti: (await webCrypto()).randomUUID(),
      htm: target.method.toUpperCase(),
      htu: url.href,
      iat: Math.floor(this.clock() / 1000),
      ...(nonce !== undefined && { nonce }),
      ...(target.accessToken !== undefined && { ath: await this.athOf(target.accessToken) }),
    };
    return sign(key, `${segment(header)}.${segment(payload)}`);
  }

  /**
   * The latest nonce of `server` at `url`'s origin, which the next proof for it carries; until that server gives one,
   * the other's there, since a server in front of both (the emulator, a gateway) may give one nonce for the origin.
   */
  nonceFor(server: Server, url: string): string | undefined {
    return this.nonces.get(place(server, url)) ?? this.nonces.get(place(server === 'api' ? 'token' : 'api', url));
  }

  /**
   * Keeps the `DPoP-Nonce` of an answer of `server` from `url`, the latest per server and origin; true when it is
   * new, so that a refusal that asks for it (see {@link isNonceChallenge}) is worth one more try.
   */
  learn(server: Server, url: string, nonce: unknown): boolean {
    if (typeof nonce !== 'string' || nonce === '') return false;
    const at = place(server, url);
    if (this.nonces.get(at) === nonce) return false;
    this.nonces.set(at, nonce);
    return true;
  }

  private athOf(token: string): Promise<string> {
    if (this.hashed?.token !== token) this.hashed = { token, ath: sha256Base64Url(token) };
    return this.hashed.ath;
  }
}

/**
 * Whether an answer asks for a proof with the server's nonce: a 400 of the token service whose body's `error` is
 * `use_dpop_nonce`, or a 401 of an API whose `WWW-Authenticate` names the DPoP scheme with that error.
 */
export function isNonceChallenge(status: number | undefined, wwwAuthenticate: unknown, body: unknown): boolean {
  if (status === 400) return (body as { error?: unknown } | null)?.error === 'use_dpop_nonce';
  if (status !== 401 || typeof wwwAuthenticate !== 'string') return false;
  const start = /(?:^|,)\s*DPoP(?:\s+|$)/i.exec(wwwAuthenticate);
  if (!start) return false;
  // The DPoP challenge's parameters: up to the next challenge, a scheme then its first parameter.
  const rest = wwwAuthenticate.slice(start.index + start[0].length);
  const end = rest.search(/,\s*[A-Za-z][\w-]*\s+[A-Za-z][\w-]*\s*=/);
  return /(?:^|[\s,])error\s*=\s*"?use_dpop_nonce"?/i.test(end < 0 ? rest : rest.slice(0, end));
}

/** Where a nonce is kept: the server, at the URL's origin. */
function place(server: Server, url: string): string {
  return `${server} ${new URL(url).origin}`;
}

function segment(value: object): string {
  return base64UrlFromBytes(new TextEncoder().encode(JSON.stringify(value)));
}

async function sign(key: DpopKey, input: string): Promise<string> {
  const crypto = await webCrypto();
  const signature = await crypto.subtle.sign(
    WEB_CRYPTO[key.algorithm].sign,
    key.privateKey,
    new TextEncoder().encode(input),
  );
  return `${input}.${base64UrlFromBytes(new Uint8Array(signature))}`;
}
