import { join } from 'node:path';
import axios from 'axios';
import { startChild } from './child.js';
import { basic } from './client-auth.js';
import type { ClientAuth } from './client-auth.js';
import type { TokenCall } from './token-call.js';

export type { ClientAuth, TokenAnswer } from './client-auth.js';
export { signIn } from './sign-in.js';
export type { DpopProofRequest, SignInClient, SignInDpop } from './sign-in.js';
export type { TokenCall };

/** A client of the provider, in oidc-provider's (and RFC 7591's) metadata names. */
export interface OidcClientMetadata {
  client_id: string;
  client_secret: string;
  grant_types: string[];
  response_types: string[];
  redirect_uris: string[];
  /** RFC 9449 §5.2: every token call of the client must carry a DPoP proof. */
  dpop_bound_access_tokens?: boolean;
}

/** oidc-provider running in a child process on a loopback port, which the one who started it stops. */
export interface OidcProvider {
  /** `http://127.0.0.1:<port>`; the token endpoint is `/token`. */
  readonly issuer: string;
  /** Every call of the token endpoint so far, oldest first. */
  tokenCalls(): Promise<TokenCall[]>;
  stop(): Promise<void>;
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
 */
export async function startOidcProvider(options: {
  clients: OidcClientMetadata[];
  resourceServerSecret: string;
  accessTokenTtlSec?: number;
  dpop?: { requireNonce: boolean };
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
  const { accessTokenTtlSec, dpop } = options;
  const child = await startChild<{ issuer: string }>(SERVER, { clients, accessTokenTtlSec, dpop }, 'oidc-provider');
  const { issuer } = child.announced;
  const http = axios.create({ baseURL: issuer });
  return {
    issuer,
    tokenCalls: async () => (await http.get<TokenCall[]>('/__harness/token-calls')).data,
    stop: () => child.stop(),
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
  /** RFC 9449 §6.2: a DPoP-bound token's confirmation, the thumbprint of its key. */
  cnf?: { jkt?: string };
}

/** Asks the provider whether a token is active, as the `resource-server` client. */
export function introspector(issuer: string, resourceServerSecret: string): (token: string) => Promise<Introspection> {
  const auth = basic({ clientId: 'resource-server', clientSecret: resourceServerSecret });
  return async (token) =>
    (
      await axios.post<Introspection>(`${issuer}/token/introspection`, new URLSearchParams({ token }), {
        headers: { Authorization: auth },
      })
    ).data;
}
