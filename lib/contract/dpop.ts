// The public contract of DPoP (RFC 9449): the key a pair is bound to, which the plugin makes at each login, keeps
// beside the pair, and signs every proof with.

/** The signing algorithm of a DPoP key: ES256 (ECDSA on P-256, everywhere), or EdDSA (Ed25519, where the runtime has it). */
export type DpopAlgorithm = 'ES256' | 'EdDSA';

/** The public half of a DPoP key, as a proof's `jwk` header carries it: its required members, nothing private. */
export type DpopPublicJwk = DpopEcJwk | DpopOkpJwk;

/** An ES256 key's public JWK. */
export interface DpopEcJwk {
  /** The key type. */
  readonly kty: 'EC';
  /** The curve. */
  readonly crv: 'P-256';
  /** The point's x coordinate, base64url. */
  readonly x: string;
  /** The point's y coordinate, base64url. */
  readonly y: string;
}

/** An EdDSA key's public JWK. */
export interface DpopOkpJwk {
  /** The key type. */
  readonly kty: 'OKP';
  /** The curve. */
  readonly crv: 'Ed25519';
  /** The public key, base64url. */
  readonly x: string;
}

/**
 * A DPoP key: the private `CryptoKey` that signs (not extractable, unless a store keeps it sealed), the public JWK and
 * its RFC 7638 thumbprint, which a bound token's `cnf.jkt` names. Make one with `createDpopKey` of
 * `axios-token-keeper/dpop`.
 */
export interface DpopKey {
  /** What the key signs with. */
  readonly algorithm: DpopAlgorithm;
  /** The private key, which signs the proofs. */
  readonly privateKey: CryptoKey;
  /** The public key, as every proof carries it. */
  readonly publicJwk: DpopPublicJwk;
  /** The public key's JWK thumbprint (RFC 7638, SHA-256, base64url). */
  readonly thumbprint: string;
}

/** The `dpop` option: sender-constrained tokens, with a key of `algorithm` (ES256 by default). */
export interface DpopOptions {
  /** @default 'ES256' */
  algorithm?: DpopAlgorithm;
}
