// private_key_jwt (RFC 7523 §2.2, OpenID Connect Core §9): the client proves itself with an assertion signed by its own
// private key, whose public half the provider holds. The key is the client's, configured per process: nothing is made
// or shared here. It is checked as it is given, imported into WebCrypto once at the first call, and never shown.
import type { ClientAuthMethod } from '../contract/client-auth.js';
import { bytesFromBase64 } from '../support/base64.js';
import { kindOf } from '../support/kind.js';
import { webCrypto } from '../support/web-crypto.js';
import { assertionLayer, checkedAudience } from './assertion.js';
import type { AssertionKey } from './assertion.js';

/** The JWS algorithms a client key may sign with. */
export type ClientKeyAlgorithm = 'RS256' | 'PS256' | 'ES256' | 'EdDSA';

/** Options of {@link privateKeyJwt}. */
export interface PrivateKeyJwtOptions {
  /**
   * The client's private key: a WebCrypto `CryptoKey` (private, with `sign`), a private JWK (with `d`), or PKCS#8 PEM
   * text (`-----BEGIN PRIVATE KEY-----`).
   */
  key: CryptoKey | JsonWebKey | string;
  /**
   * What it signs with. @default the key's own: `alg` of a JWK, else RS256 for an RSA key (RSA-PSS: PS256), ES256 for
   * P-256, EdDSA for Ed25519
   */
  algorithm?: ClientKeyAlgorithm;
  /** The `kid` of the assertion's header, which the provider finds the public key by. @default a JWK's `kid` */
  kid?: string;
  /** The assertion's `aud`. @default the token endpoint's URL; some providers want their issuer */
  audience?: string;
  /**
   * More members of the assertion's header, by which a provider finds the key: Microsoft Entra wants the certificate's
   * thumbprint, `{ x5t }` (SHA-1, with RS256) or `{ 'x5t#S256': … }` (with PS256). Not `alg` or `typ`.
   */
  header?: Record<string, string>;
}

/** WebCrypto's names for each algorithm: to import a key, and to sign with it. */
const WEB_CRYPTO = {
  RS256: { key: { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256' }, sign: { name: 'RSASSA-PKCS1-v1_5' } },
  PS256: { key: { name: 'RSA-PSS', hash: 'SHA-256' }, sign: { name: 'RSA-PSS', saltLength: 32 } },
  ES256: { key: { name: 'ECDSA', namedCurve: 'P-256' }, sign: { name: 'ECDSA', hash: 'SHA-256' } },
  EdDSA: { key: { name: 'Ed25519' }, sign: { name: 'Ed25519' } },
} as const;

/** A key's type, as a JWK, a CryptoKey or a PKCS#8 key names it, and the algorithm it signs with by default. */
type KeyType = 'RSA' | 'RSA-PSS' | 'P-256' | 'Ed25519';
const DEFAULT_ALGORITHM: Record<KeyType, ClientKeyAlgorithm> = {
  RSA: 'RS256',
  'RSA-PSS': 'PS256',
  'P-256': 'ES256',
  Ed25519: 'EdDSA',
};
const SIGNS_WITH: Record<KeyType, readonly ClientKeyAlgorithm[]> = {
  RSA: ['RS256', 'PS256'],
  'RSA-PSS': ['PS256'],
  'P-256': ['ES256'],
  Ed25519: ['EdDSA'],
};

/** The OIDs of a PKCS#8 key's algorithm, as DER bytes in hex, by the type they name. */
const PKCS8_OIDS: Array<[KeyType, string]> = [
  ['RSA', '2a864886f70d010101'],
  ['RSA-PSS', '2a864886f70d01010a'],
  ['P-256', '2a8648ce3d030107'],
  ['Ed25519', '2b6570'],
];

/** Private members of a JWK, which no error may show. */
const PRIVATE_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'k'] as const;

const fail = (message: string): never => {
  throw new TypeError(`privateKeyJwt: ${message}`);
};

/**
 * `private_key_jwt`: each login, token and revocation call, and each retry of one, carries a fresh assertion signed by
 * the client's key (`iss` = `sub` = the client id, `aud` the token endpoint, a new `jti`, `exp` 55 s after `iat`). Give
 * it to an OAuth2 preset's `clientAuthentication`.
 *
 * @example
 * import { privateKeyJwt } from 'axios-token-keeper/client-auth';
 * oauth2ClientCredentials({ tokenPath: '/oauth2/v1/token', clientId, clientAuthentication: privateKeyJwt({ key: process.env.CLIENT_KEY_PEM!, kid: 'k1' }) })
 */
export function privateKeyJwt(options: PrivateKeyJwtOptions): ClientAuthMethod {
  if (typeof options !== 'object' || options === null)
    fail(`takes { key, algorithm?, kid?, audience? }, got ${kindOf(options)}.`);
  const { key } = options;
  const given = keyOf(key);
  const algorithm = options.algorithm ?? given.algorithm ?? DEFAULT_ALGORITHM[given.type];
  if (!(algorithm in WEB_CRYPTO))
    fail(`\`algorithm\` must be 'RS256', 'PS256', 'ES256' or 'EdDSA', got ${kindOf(algorithm)}.`);
  if (!SIGNS_WITH[given.type].includes(algorithm))
    fail(
      `the key is ${given.type === 'P-256' ? 'an EC P-256' : `an ${given.type}`} key, which cannot sign ${algorithm}: ` +
        `give \`algorithm: '${DEFAULT_ALGORITHM[given.type]}'\`, or the key of the algorithm the client is registered with.`,
    );
  const kid = options.kid ?? given.kid;
  if (kid !== undefined && (typeof kid !== 'string' || kid === ''))
    fail(`\`kid\` must be the key's id at the provider (a non-empty string), got ${kindOf(kid)}.`);
  const audience = checkedAudience('privateKeyJwt', options.audience);
  const header = options.header ?? {};
  if (typeof header !== 'object' || header === null || Array.isArray(header))
    fail(`\`header\` must be an object of the header's members, such as { x5t }, got ${kindOf(header)}.`);
  for (const [name, value] of Object.entries(header)) {
    if (name === 'alg' || name === 'typ') fail(`\`header.${name}\` is set by privateKeyJwt itself: leave it out.`);
    if (typeof value !== 'string') fail(`\`header.${name}\` must be a string, got ${kindOf(value)}.`);
  }
  let imported: Promise<AssertionKey> | undefined;
  const signer = (): Promise<AssertionKey> =>
    (imported ??= importKey(key, algorithm).then((cryptoKey) => ({
      alg: algorithm,
      kid,
      header,
      sign: async (input) =>
        (await webCrypto()).subtle.sign(WEB_CRYPTO[algorithm].sign, cryptoKey, input).catch(unusable(algorithm)),
    })));
  return {
    method: 'private_key_jwt',
    setUp: ({ clientId, tokenURL }) => ({
      layer: assertionLayer(signer, { clientId, audience: audience ?? tokenURL }),
      secrets: given.secrets,
    }),
  };
}

/** What a key given to {@link privateKeyJwt} is: its type, the algorithm and id it names, and its secret parts. */
function keyOf(key: unknown): {
  type: KeyType;
  algorithm?: ClientKeyAlgorithm | undefined;
  kid?: string | undefined;
  secrets: string[];
} {
  if (typeof key === 'string') return pemKeyOf(key);
  if (typeof key !== 'object' || key === null)
    return fail(`\`key\` must be a CryptoKey, a private JWK or PKCS#8 PEM text, got ${kindOf(key)}.`);
  if (isCryptoKey(key)) {
    if (key.type !== 'private' || !key.usages.includes('sign'))
      fail('`key` must be the private key, made or imported with the usage `sign`; the provider holds the public one.');
    const { name, namedCurve } = key.algorithm as { name: string; namedCurve?: string };
    const type = (
      { 'RSASSA-PKCS1-v1_5': 'RSA', 'RSA-PSS': 'RSA-PSS', ECDSA: namedCurve, Ed25519: 'Ed25519' } as Record<
        string,
        string
      >
    )[name];
    if (!(type! in DEFAULT_ALGORITHM))
      fail(`\`key\` is a ${name} key${namedCurve ? ` on ${namedCurve}` : ''}: give an RSA, EC P-256 or Ed25519 key.`);
    return { type: type as KeyType, secrets: [] };
  }
  const jwk = key as JsonWebKey & { kid?: unknown };
  if (typeof jwk.d !== 'string')
    fail('`key` is a JWK without its private part (`d`): give the private JWK; the provider holds the public one.');
  const type =
    jwk.kty === 'RSA'
      ? 'RSA'
      : jwk.kty === 'EC'
        ? jwk.crv
        : jwk.kty === 'OKP' && jwk.crv === 'Ed25519'
          ? 'Ed25519'
          : '';
  if (!(type! in DEFAULT_ALGORITHM))
    fail(
      `\`key\` is a JWK of kty ${kindOf(jwk.kty)}${jwk.crv ? ` on ${kindOf(jwk.crv)}` : ''}: give an RSA, EC P-256 or Ed25519 key.`,
    );
  // RFC 9864's fully-specified name of EdDSA on Ed25519, which WebCrypto writes in the JWKs it exports.
  const algorithm = jwk.alg === 'Ed25519' ? 'EdDSA' : (jwk.alg as ClientKeyAlgorithm | undefined);
  const secrets = PRIVATE_MEMBERS.map((member) => jwk[member]).filter(
    (part): part is string => typeof part === 'string',
  );
  return { type: type as KeyType, algorithm, kid: typeof jwk.kid === 'string' ? jwk.kid : undefined, secrets };
}

function pemKeyOf(pem: string): { type: KeyType; secrets: string[] } {
  const match = /-----BEGIN ([A-Z ]+)-----([\s\S]*?)-----END \1-----/.exec(pem);
  const label = match?.[1];
  if (label === 'RSA PRIVATE KEY' || label === 'EC PRIVATE KEY')
    fail(
      `\`key\` is a PEM ${label} (PKCS#1 or SEC 1), and WebCrypto takes PKCS#8: convert it with ` +
        '`openssl pkcs8 -topk8 -nocrypt -in key.pem -out key.pkcs8.pem`.',
    );
  if (label === 'ENCRYPTED PRIVATE KEY')
    fail(
      '`key` is an encrypted PEM: give it decrypted (`openssl pkcs8 -in key.pem -out key.pkcs8.pem`), kept as a secret.',
    );
  const body = match?.[2]?.replace(/\s+/g, '') ?? '';
  const der = label === 'PRIVATE KEY' ? bytesFromBase64(body) : undefined;
  if (!der || der.length < 16)
    fail(
      '`key` as text must be a private key in PKCS#8 PEM (`-----BEGIN PRIVATE KEY-----`), such as `openssl genpkey` writes.',
    );
  // The key's algorithm is named near the start of its DER, in its AlgorithmIdentifier.
  const hex = [...der!.subarray(0, 32)].map((byte) => byte.toString(16).padStart(2, '0')).join('');
  const type = PKCS8_OIDS.find(([, oid]) => hex.includes(oid))?.[0];
  if (!type) fail('`key` is a PKCS#8 key of a type other than RSA, EC P-256 or Ed25519.');
  return { type: type!, secrets: [pem, body] };
}

function isCryptoKey(key: object): key is CryptoKey {
  return 'algorithm' in key && 'usages' in key && 'type' in key && 'extractable' in key;
}

/** `key` in WebCrypto, for `algorithm`; a CryptoKey as it is. */
async function importKey(key: CryptoKey | JsonWebKey | string, algorithm: ClientKeyAlgorithm): Promise<CryptoKey> {
  if (typeof key === 'object' && isCryptoKey(key)) return key;
  const { subtle } = await webCrypto();
  const params = WEB_CRYPTO[algorithm].key;
  if (typeof key === 'string') {
    const body = /-----BEGIN PRIVATE KEY-----([\s\S]*?)-----END PRIVATE KEY-----/.exec(key)![1]!.replace(/\s+/g, '');
    return subtle.importKey('pkcs8', bytesFromBase64(body)!, params, false, ['sign']).catch(unusable(algorithm));
  }
  // Its own `alg`, `use` and `key_ops` are left to the checks above: WebCrypto would refuse an `alg` it names otherwise.
  const jwk: JsonWebKey = { ...key };
  delete jwk.alg;
  delete jwk.use;
  delete jwk.key_ops;
  return subtle.importKey('jwk', jwk, params, false, ['sign']).catch(unusable(algorithm));
}

/** What WebCrypto's refusal to import or sign with the key becomes: its name and message say what, never the key. */
function unusable(algorithm: ClientKeyAlgorithm): (error: unknown) => never {
  return (error) => {
    const { name = 'Error', message = '' } = (error ?? {}) as Partial<Error>;
    throw new TypeError(
      `privateKeyJwt: the key could not sign ${algorithm} (${name}: ${message}). ` +
        'Check that `key` is the whole private key, of the type the algorithm signs with.',
      { cause: error },
    );
  };
}
