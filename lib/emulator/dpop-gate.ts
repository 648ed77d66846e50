// The emulator's DPoP mode (RFC 9449): what outlives one proof (the nonce it gives, the jtis it has seen), the one
// check the login, the token call and data calls go through, its count, and a refusal as the service answers it.
import { randomBytes } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { checkProof } from './dpop-proof.js';
import { sendJSON } from './http.js';
import type { ServiceRequest } from './http.js';
import type { EmulatorDpopCheck, EmulatorDpopCounters, EmulatorDpopOptions, EmulatorDpopOutcome } from './types.js';

/**
 * The jtis remembered, the oldest forgotten first. A replay must come within the 60 s of `iat`'s window, so only a
 * run of more than this many proofs a minute could see one forgotten in time to pass.
 */
export const REMEMBERED_JTIS = 10_000;

const COUNTERS: Record<EmulatorDpopOutcome, keyof EmulatorDpopCounters> = {
  accepted: 'accepted',
  nonce: 'nonce',
  invalid: 'invalid',
  'wrong-key': 'wrongKey',
};

/** What a proof goes with: a data call's access token (for `ath`), and the key the call's token is bound to. */
export interface ProofFor {
  readonly accessToken?: string;
  /** The thumbprint a refresh or access token is bound to, and which token it is, for the refusal's words. */
  readonly boundTo?: { readonly jkt: string; readonly token: 'refresh' | 'access' };
}

const freshNonce = (): string => randomBytes(18).toString('base64url');

/** The DPoP mode's state and its one check; the routes answer with what it says. */
export class DpopGate {
  private nonce = freshNonce();
  private readonly jtis = new Set<string>();
  private readonly requireNonce: boolean;

  constructor(
    options: true | EmulatorDpopOptions,
    private readonly counters: EmulatorDpopCounters,
    private readonly clock: () => number,
  ) {
    this.requireNonce = options !== true && options.requireNonce === true;
  }

  /** The nonce every proof must carry; undefined when proofs need none. */
  get currentNonce(): string | undefined {
    return this.requireNonce ? this.nonce : undefined;
  }

  /** A new nonce: proofs with the old one are answered `use_dpop_nonce` from now on. */
  rotateNonce(): string {
    this.nonce = freshNonce();
    return this.nonce;
  }

  /** Gives an answer the current nonce, when proofs need one: every answer of the emulator does. */
  announce(response: ServerResponse): void {
    if (this.requireNonce) response.setHeader('DPoP-Nonce', this.nonce);
  }

  /**
   * Checks a request's proof, for what it goes with, and counts the outcome. In order: the proof itself (dpop-proof.ts),
   * a jti not seen before, the nonce (last, since a client answers `use_dpop_nonce` by sending the proof again), then
   * the key the token is bound to. A proof that passes up to the nonce has its jti remembered.
   */
  check(request: ServiceRequest, call: ProofFor = {}): EmulatorDpopCheck {
    const target = { method: request.method, url: request.url, now: this.clock(), accessToken: call.accessToken };
    const proof = checkProof(request.dpop, target);
    const seen = { jkt: proof.jkt, nonce: proof.claims.nonce !== undefined, ath: proof.claims.ath !== undefined };
    const refuse = (outcome: EmulatorDpopOutcome, error: string, detail: string) =>
      this.count({ ...seen, outcome, error, detail });
    if (proof.problem !== undefined) return refuse('invalid', 'invalid_dpop_proof', proof.problem);
    const jti = proof.claims.jti as string;
    if (this.jtis.has(jti))
      return refuse('invalid', 'invalid_dpop_proof', "The proof's jti was used before: each proof needs its own.");
    const nonce = this.nonceProblem(proof.claims.nonce);
    if (nonce !== undefined) return refuse('nonce', 'use_dpop_nonce', nonce);
    this.remember(jti);
    const { boundTo } = call;
    if (boundTo !== undefined && boundTo.jkt !== proof.jkt) {
      const error = boundTo.token === 'refresh' ? 'invalid_grant' : 'invalid_token';
      return refuse('wrong-key', error, `The ${boundTo.token} token is bound to another DPoP key than the proof's.`);
    }
    return this.count({ ...seen, outcome: 'accepted' });
  }

  /** Refuses a data call whose token came without the DPoP scheme (as a Bearer, or not at all), counted as invalid. */
  refuseScheme(): EmulatorDpopCheck {
    const detail = 'A data call needs Authorization: DPoP <access token>, with a DPoP proof.';
    return this.count({ outcome: 'invalid', jkt: undefined, nonce: false, ath: false, error: 'invalid_token', detail });
  }

  private nonceProblem(nonce: unknown): string | undefined {
    if (!this.requireNonce || nonce === this.nonce) return undefined;
    const fix = "send the one in this answer's DPoP-Nonce header.";
    return nonce === undefined ? `The proof has no nonce: ${fix}` : `The proof's nonce is not the current one: ${fix}`;
  }

  private remember(jti: string): void {
    this.jtis.add(jti);
    if (this.jtis.size > REMEMBERED_JTIS) this.jtis.delete(this.jtis.values().next().value!);
  }

  private count(check: EmulatorDpopCheck): EmulatorDpopCheck {
    this.counters[COUNTERS[check.outcome]] += 1;
    return check;
  }
}

/** Answers a login or token call that the gate refused: 400 with the OAuth error and why. */
export function refuseTokenCall(response: ServerResponse, check: EmulatorDpopCheck): void {
  sendJSON(response, 400, { error: check.error, detail: check.detail });
}

/**
 * Answers a data call refused in DPoP mode: 401 with the DPoP challenge. A refused token keeps the service's body,
 * `{detail, code: "token_not_valid"}`, which clients renew on; a refused proof says its error in the body too.
 */
export function refuseDataCall(response: ServerResponse, error: string, detail: string): void {
  const body = error === 'invalid_token' ? { detail, code: 'token_not_valid' } : { error, detail };
  const description = detail.replace(/["\\]/g, '\\$&');
  sendJSON(response, 401, body, {
    'WWW-Authenticate': `DPoP error="${error}", error_description="${description}", algs="ES256 EdDSA"`,
  });
}
