import https from 'node:https';
import { join } from 'node:path';
import axios from 'axios';
import { startChild } from './child.js';
import { basic } from './client-auth.js';
import type { ClientAuth } from './client-auth.js';
import type { ClientAuthMethod, TokenCall } from './token-call.js';

export type { ClientAuth, TokenAnswer } from './client-auth.js';
export { signIn } from './sign-in.js';
export type { DpopProofRequest, SignInClient, SignInDpop } from './sign-in.js';
export type { ClientAuthMethod, TokenCall };

/** A public key of a client, as a JWK (RFC 7517), which the provider checks the client's assertions with. */
export type PublicJwk = JsonWebKey & { kid?: string; alg?: string; use?: string };

/** A client of the provider, in oidc-provider's (and RFC 7591's) metadata names. */
export interface OidcClientMetadata {
  client_id: string;
  /** For the methods that need one: client_secret_basic (the default), client_secret_post and client_secret_jwt. */
  client_secret?: string;
  grant_types: string[];
  response_types: string[];
  redirect_uris: string[];
  /** RFC 9449 §5.2: every token call of the client must carry a DPoP proof. */
  dpop_bound_access_tokens?: boolean;
  /**
   * The one way the client may authenticate, at the token, introspection and revocation endpoints alike; the mutual
   * TLS ones need the provider's `tls`.
   * @default 'client_secret_basic'
   */
  token_endpoint_auth_method?: ClientAuthMethod;
  /** The one algorithm its assertions may be signed with (private_key_jwt, client_secret_jwt); any the provider takes when absent. */
  token_endpoint_auth_signing_alg?: string;
  /** Its public keys: what private_key_jwt assertions are verified by, and self_signed_tls_client_auth's certificates (`x5c`). */
  jwks?: { keys: PublicJwk[] };
  /** tls_client_auth: the subject its certificate must have, as RFC 4514 writes it (see certs.ts' `subjectDnOf`). */
  tls_client_auth_subject_dn?: string;
  /** RFC 8705 §3: its access tokens bound to the certificate of the token call (`cnf["x5t#S256"]`); needs `tls`. */
  tls_client_certificate_bound_access_tokens?: boolean;
}

/** One call of the revocation endpoint (RFC 7009), as the provider saw it. */
export interface Revocation {
  /** The `token` sent. */
  token: string | null;
  /** `refresh_token`, `access_token`, or null: none sent. */
  tokenTypeHint: string | null;
  /** The client the call named, whether or not it authenticated. */
  clientId: string | null;
  /** How the call presented its client; see {@link ClientAuthMethod}. */
  clientAuthMethod: ClientAuthMethod;
  /** The `jti` of its client assertion, or null. */
  assertionJti: string | null;
  /** The thumbprint of its TLS client certificate, or null. */
  certificate: string | null;
  /** 200 whether or not the token was known (RFC 7009 §2.2); 401 for a client that failed to authenticate. */
  status: number;
  error: string | null;
}

/** A client assertion a call carried, whole: where it went, its header and claims (null when unreadable). */
export interface ReceivedAssertion {
  endpoint: 'token' | 'revocation';
  jwt: string;
  header: { alg?: string; kid?: string; typ?: string } | null;
  claims: { iss?: string; sub?: string; aud?: string | string[]; jti?: string; iat?: number; exp?: number } | null;
}

/** oidc-provider running in a child process on a loopback port, which the one who started it stops. */
export interface OidcProvider {
  /** `http://127.0.0.1:<port>`, or `https://` with `tls`; the token endpoint is `/token`. */
  readonly issuer: string;
  /** Every call of the token endpoint so far, oldest first. */
  tokenCalls(): Promise<TokenCall[]>;
  /** Every call of the revocation endpoint (`/token/revocation`) so far, oldest first. */
  revocations(): Promise<Revocation[]>;
  /** Every client assertion the token and revocation endpoints received so far, oldest first. */
  assertions(): Promise<ReceivedAssertion[]>;
  /**
   * Answers the next `count` token calls `503 temporarily_unavailable` before the provider sees them, as a gateway in
   * front of a busy provider would: their assertions' `jti`s are not spent. They are recorded as token calls.
   */
  failNextTokenCalls(count: number): Promise<void>;
  stop(): Promise<void>;
}

/** The CA-issued certificate and key the provider serves HTTPS with, and the CA it checks client certificates by. */
export interface ProviderTls {
  key: string;
  cert: string;
  ca: string;
}

const SERVER = join(__dirname, 'oidc-server.mjs');

/**
 * Starts panva's oidc-provider (ESM only, so in a child process: jest runs the tests as CommonJS) with these clients
 * and a `resource-server` client allowed to introspect, whose secret is `resourceServerSecret`.
 *
 * With `dpop`, the provider's DPoP (RFC 9449, `features.dPoP`) has a nonce secret, so it hands out `DPoP-Nonce`s, and
 * with `requireNonce` it answers a token call whose proof lacks its nonce `400 use_dpop_nonce`; replayed proofs are
 * refused. The token calls it records then say whether each carried a proof, and the proof key's thumbprint. Without
 * `dpop`, oidc-provider 9's default: a proof is accepted and binds the token, with no nonces.
 *
 * A client authenticates as its `token_endpoint_auth_method` says. private_key_jwt and client_secret_jwt are on in
 * oidc-provider 9 by default, and it refuses an assertion whose `jti` it has seen before (its ReplayDetection, kept
 * in memory until the assertion's `exp`). With `tls`, the provider serves HTTPS on 127.0.0.1 and asks every client for
 * a certificate (RFC 8705): tls_client_auth, self_signed_tls_client_auth and certificate-bound access tokens are on.
 * With `recordClientAuth`, the token calls it records also say how each client authenticated, the assertion's `jti` and
 * the client certificate's thumbprint. Revocations are always recorded.
 */
export async function startOidcProvider(options: {
  clients: OidcClientMetadata[];
  resourceServerSecret: string;
  accessTokenTtlSec?: number;
  dpop?: { requireNonce: boolean };
  tls?: ProviderTls;
  recordClientAuth?: boolean;
}): Promise<OidcProvider> {
  const clients = [
    ...options.clients,
    {
      client_id: 'resource-server',
      client_secret: options.resourceServerSecret,
      grant_types: [],
      response_types: [],
      redirect_uris: [],
    },
  ];
  const { accessTokenTtlSec, dpop, tls, recordClientAuth } = options;
  const child = await startChild<{ issuer: string }>(
    SERVER,
    { clients, accessTokenTtlSec, dpop, tls, recordClientAuth },
    'oidc-provider',
  );
  const { issuer } = child.announced;
  const httpsAgent = tls && new https.Agent({ ca: tls.ca });
  const http = axios.create({ baseURL: issuer, ...(httpsAgent && { httpsAgent }) });
  return {
    issuer,
    tokenCalls: async () => (await http.get<TokenCall[]>('/__harness/token-calls')).data,
    revocations: async () => (await http.get<Revocation[]>('/__harness/revocations')).data,
    assertions: async () => (await http.get<ReceivedAssertion[]>('/__harness/assertions')).data,
    failNextTokenCalls: async (count) =>
      void (await http.post('/__harness/fail-token-calls', null, { params: { count } })),
    stop: async () => {
      httpsAgent?.destroy();
      await child.stop();
    },
  };
}

/** RFC 7009 revocation at the provider, by the client the token was issued to. */
export async function revokeToken(
  issuer: string,
  client: ClientAuth,
  token: string,
  hint: 'access_token' | 'refresh_token',
): Promise<void> {
  await axios.post(`${issuer}/token/revocation`, new URLSearchParams({ token, token_type_hint: hint }), {
    headers: { Authorization: basic(client) },
  });
}

/** What a resource server learns of a token from RFC 7662 introspection. */
export interface Introspection {
  active: boolean;
  client_id?: string;
  sub?: string;
  /** `Bearer`, or `DPoP` for a token bound to a key. */
  token_type?: string;
  /**
   * A bound token's confirmation: RFC 9449 §6.2, the thumbprint of its DPoP key (`jkt`); RFC 8705 §3.1, the
   * thumbprint of the client certificate it was issued to (`x5t#S256`).
   */
  cnf?: { jkt?: string; 'x5t#S256'?: string };
}

/**
 * Asks the provider whether a token is active, as the `resource-server` client; `ca`, the CA a provider started with
 * `tls` is trusted by.
 */
export function introspector(
  issuer: string,
  resourceServerSecret: string,
  { ca }: { ca?: string } = {},
): (token: string) => Promise<Introspection> {
  const auth = basic({ clientId: 'resource-server', clientSecret: resourceServerSecret });
  const httpsAgent = ca === undefined ? undefined : new https.Agent({ ca });
  return async (token) =>
    (
      await axios.post<Introspection>(`${issuer}/token/introspection`, new URLSearchParams({ token }), {
        headers: { Authorization: auth },
        ...(httpsAgent && { httpsAgent }),
      })
    ).data;
}
