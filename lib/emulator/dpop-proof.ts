// One DPoP proof (RFC 9449, section 4.3) checked on its own with node:crypto, as a token service would: its form, its
// header (typ, alg, a public JWK and nothing private), its signature by that JWK, and its claims against the request
// (htm, htu, iat, jti, ath). What outlives one proof (the jtis seen, the nonce) is the gate's (dpop-gate.ts). This
// never imports the client's lib/dpop: the emulator checks the client, so it must not share its mistakes. Its details
// go into a WWW-Authenticate header too, so they are plain ASCII.
import { createHash, createPublicKey, verify } from 'node:crypto';
import type { JsonWebKey, KeyObject } from 'node:crypto';

/** How far a proof's `iat` may be from the emulator's clock, either way. */
export const IAT_WINDOW_MS = 60_000;

/** What a proof must match: the request's method and URL (no query), the time, and the access token it goes with. */
export interface ProofTarget {
  readonly method: string;
  /** scheme://host:port/path, as the emulator was reached. */
  readonly url: string;
  /** The emulator's clock, epoch milliseconds. */
  readonly now: number;
  /** A data call's access token, whose hash the proof's `ath` must be. */
  readonly accessToken?: string;
}

/** The claims a proof carries, as far as they could be read. */
export interface ProofClaims {
  readonly [name: string]: unknown;
}

/** A proof, checked: why it is refused if it is, its key's thumbprint once its signature holds, and its claims. */
export interface CheckedProof {
  readonly problem: string | undefined;
  readonly jkt: string | undefined;
  readonly claims: ProofClaims;
}

const SEGMENT = /^[A-Za-z0-9_-]+$/;
/** The members that make a JWK private, whatever its type. */
const PRIVATE_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'oth', 'k'];

interface Jws {
  readonly header: Record<string, unknown>;
  readonly claims: Record<string, unknown>;
  readonly input: Buffer;
  readonly signature: Buffer;
}

/** The base64url of the SHA-256 of `text`: a JWK thumbprint's, or an access token's `ath`. */
export function sha256Base64Url(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('base64url');
}

/** The RFC 7638 thumbprint of a public JWK: its required members, in lexicographic order, with no whitespace. */
export function thumbprintOf(jwk: Record<string, unknown>): string {
  const required = jwk.kty === 'EC' ? ['crv', 'kty', 'x', 'y'] : ['crv', 'kty', 'x'];
  return sha256Base64Url(JSON.stringify(Object.fromEntries(required.map((name) => [name, jwk[name]]))));
}

/** Checks the proof of a `DPoP` header (undefined when the request has none) against the request it came with. */
export function checkProof(text: string | undefined, target: ProofTarget): CheckedProof {
  if (text === undefined || text === '') return refused('The request has no DPoP header with a proof.');
  const jws = parse(text);
  if (typeof jws === 'string') return refused(jws);
  const key = keyOf(jws.header);
  if (typeof key === 'string') return refused(key, jws.claims);
  if (!signed(jws, key, jws.header.alg as string))
    return refused("The proof's signature does not verify with its jwk.", jws.claims);
  const jkt = thumbprintOf(jws.header.jwk as Record<string, unknown>);
  return { problem: claimsProblem(jws.claims, target), jkt, claims: jws.claims };
}

/** A proof refused before its signature held: no thumbprint, and what claims could be read. */
function refused(problem: string, claims: ProofClaims = {}): CheckedProof {
  return { problem, jkt: undefined, claims };
}

/** The JWS's header, claims, signing input and signature, or why it is not a compact JWS of two JSON objects. */
function parse(text: string): Jws | string {
  const parts = text.split('.');
  if (parts.length !== 3 || !parts.every((part) => SEGMENT.test(part)))
    return 'The DPoP header is not a compact JWS (three base64url parts).';
  const [header, claims] = [jsonObject(parts[0]!), jsonObject(parts[1]!)];
  if (header === undefined || claims === undefined) return "The proof's header or claims are not a JSON object.";
  const input = Buffer.from(`${parts[0]!}.${parts[1]!}`, 'ascii');
  return { header, claims, input, signature: Buffer.from(parts[2]!, 'base64url') };
}

function jsonObject(segment: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(Buffer.from(segment, 'base64url').toString('utf8'));
    return typeof value === 'object' && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}

/** The public key of the header's `jwk`, or why the header is refused: its typ, its alg, or its jwk. */
function keyOf(header: Record<string, unknown>): KeyObject | string {
  if (header.typ !== 'dpop+jwt') return "The proof's typ is not dpop+jwt.";
  const { alg, jwk } = header;
  if (alg !== 'ES256' && alg !== 'EdDSA') return "The proof's alg is neither ES256 nor EdDSA.";
  if (typeof jwk !== 'object' || jwk === null || Array.isArray(jwk)) return 'The proof has no jwk header.';
  const members = jwk as Record<string, unknown>;
  if (PRIVATE_MEMBERS.some((name) => name in members)) return "The proof's jwk holds a private member.";
  const curve =
    alg === 'ES256'
      ? members.kty === 'EC' && members.crv === 'P-256' && typeof members.y === 'string'
      : members.kty === 'OKP' && members.crv === 'Ed25519';
  if (!curve || typeof members.x !== 'string') return `The proof's jwk is not a public key of ${alg}.`;
  try {
    return createPublicKey({ key: members as JsonWebKey, format: 'jwk' });
  } catch {
    return "The proof's jwk is not a key node:crypto can read.";
  }
}

function signed(jws: Jws, key: KeyObject, alg: string): boolean {
  try {
    return alg === 'ES256'
      ? verify('sha256', jws.input, { key, dsaEncoding: 'ieee-p1363' }, jws.signature)
      : verify(null, jws.input, key, jws.signature);
  } catch {
    return false;
  }
}

/** Why the claims do not fit the request, or undefined when they do: htm, htu, iat, jti, and a data call's ath. */
function claimsProblem(claims: ProofClaims, target: ProofTarget): string | undefined {
  const { htm, htu, iat, jti, ath } = claims;
  if (htm !== target.method) return `The proof's htm is not the request's method, ${target.method}.`;
  const expected = withoutQuery(target.url);
  if (typeof htu !== 'string' || expected === undefined || withoutQuery(htu) !== expected)
    return `The proof's htu is not the request's URL, ${target.url}.`;
  if (typeof iat !== 'number' || !Number.isFinite(iat)) return 'The proof has no iat.';
  if (Math.abs(iat * 1000 - target.now) > IAT_WINDOW_MS)
    return `The proof's iat is more than ${IAT_WINDOW_MS / 1000} s from the emulator's clock.`;
  if (typeof jti !== 'string' || jti === '') return 'The proof has no jti.';
  if (target.accessToken === undefined) return undefined;
  if (typeof ath !== 'string') return 'The proof has no ath, the hash of the access token it goes with.';
  if (ath !== sha256Base64Url(target.accessToken)) return "The proof's ath is not the hash of the access token.";
  return undefined;
}

/** A URL as RFC 9449 compares them: normalised, without its query and fragment; undefined when it is no URL. */
function withoutQuery(text: string): string | undefined {
  try {
    const url = new URL(text);
    url.search = '';
    url.hash = '';
    return url.href;
  } catch {
    return undefined;
  }
}
