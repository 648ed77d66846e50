import { join } from 'node:path';
import axios from 'axios';
import { startChild } from './child.js';

/**
 * Why the resource server refused a request, checked in this order: the scheme is not `DPoP` (a Bearer token, or no
 * Authorization), no proof (or several), a proof jose cannot verify (signature, `typ` dpop+jwt, an algorithm outside
 * ES256 and EdDSA, no embedded public JWK), `htm` or `htu` not the request's, `iat` outside the window, a `jti` seen
 * before, `ath` not the token's hash, `nonce` not the server's current one (the `use_dpop_nonce` challenge), then by
 * introspection: the token not active, not bound to a key (no `cnf.jkt`), or bound to another key than the proof's.
 */
export type DpopRefusal =
  | 'not_dpop_scheme'
  | 'no_proof'
  | 'bad_proof'
  | 'htm_mismatch'
  | 'htu_mismatch'
  | 'iat_not_recent'
  | 'jti_replayed'
  | 'ath_mismatch'
  | 'use_dpop_nonce'
  | 'inactive_token'
  | 'unbound_token'
  | 'jkt_mismatch';

/** Requests accepted, and refused by reason (a reason never seen is absent). */
export interface DpopResourceCounts {
  accepted: number;
  refused: Partial<Record<DpopRefusal, number>>;
}

/** One request as the resource server saw it. */
export interface DpopResourceRequest {
  method: string;
  path: string;
  /** 200, 401, or 500 (`server_error`: introspection failed, which is no client's fault). */
  status: number;
  reason: DpopRefusal | 'server_error' | null;
  /** The thumbprint of the proof's key, once the proof passed its checks; null before. */
  jkt: string | null;
  /** The proof's algorithm (`ES256`, `EdDSA`), as `jkt`. */
  alg: string | null;
}

/**
 * A resource server that accepts DPoP-bound tokens only (RFC 9449 §7), in a child process (it verifies proofs with
 * jose, ESM only). Every path answers 200 `{ path, subject, jkt, body }` to `Authorization: DPoP <token>` with a good
 * proof of a token bound to the proof's key, and 401 with `WWW-Authenticate: DPoP error="…"` otherwise
 * (`use_dpop_nonce` when the proof lacks the current nonce); every answer carries that nonce in `DPoP-Nonce`.
 */
export interface DpopResourceServer {
  /** `http://127.0.0.1:<port>`. */
  readonly url: string;
  /** Requests accepted and refused so far. */
  counts(): Promise<DpopResourceCounts>;
  /** Every request so far, oldest first. */
  requests(): Promise<DpopResourceRequest[]>;
  /** The nonce a proof must carry now. */
  nonce(): Promise<string>;
  /** Replaces the nonce, as a server does from time to time: a proof with the old one is challenged. The new one. */
  rotateNonce(): Promise<string>;
  stop(): Promise<void>;
}

const SERVER = join(__dirname, 'dpop-resource-server.mjs');

/**
 * Starts the DPoP resource server. It introspects each token at `issuer` as the `resource-server` client (see
 * `startOidcProvider`), and accepts a proof whose `iat` is within `iatWindowSec` of its own clock.
 *
 * @param options.iatWindowSec how far a proof's `iat` may be from now, either way. @default 300 (oidc-provider's own)
 */
export async function startDpopResourceServer(options: {
  issuer: string;
  resourceServerSecret: string;
  iatWindowSec?: number;
}): Promise<DpopResourceServer> {
  const child = await startChild<{ url: string }>(SERVER, options, 'the DPoP resource server');
  const { url } = child.announced;
  const http = axios.create({ baseURL: url });
  return {
    url,
    counts: async () => (await http.get<DpopResourceCounts>('/__harness/counts')).data,
    requests: async () => (await http.get<DpopResourceRequest[]>('/__harness/requests')).data,
    nonce: async () => (await http.get<{ nonce: string }>('/__harness/nonce')).data.nonce,
    rotateNonce: async () => (await http.post<{ nonce: string }>('/__harness/nonce')).data.nonce,
    stop: () => child.stop(),
  };
}

/** What the resource server counted between two readings of its counts: the refusals that did not move left out. */
export function countsSince(before: DpopResourceCounts, after: DpopResourceCounts): DpopResourceCounts {
  const refused: DpopResourceCounts['refused'] = {};
  for (const [reason, count] of Object.entries(after.refused) as Array<[DpopRefusal, number]>) {
    const moved = count - (before.refused[reason] ?? 0);
    if (moved > 0) refused[reason] = moved;
  }
  return { accepted: after.accepted - before.accepted, refused };
}
