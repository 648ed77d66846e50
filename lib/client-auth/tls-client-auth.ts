// Mutual TLS (RFC 8705): the client proves itself by the certificate it presents on the TLS connection of each login,
// token and revocation call, and the provider may bind the access token to it (`cnf.x5t#S256`), which the app's own
// requests then carry on the same certificate. Node's http adapter alone can present one.
import { getAdapter } from 'axios';
import type { AxiosAdapter } from 'axios';
import type { ClientAuthMethod } from '../contract/client-auth.js';

/** Options of {@link tlsClientAuth}. */
export interface TlsClientAuthOptions {
  /**
   * An `https.Agent` with the client's certificate (`cert` and `key`, or `pfx`).
   * @default the axios instance's own `httpsAgent`, so that the token calls and the app's requests show one certificate
   */
  httpsAgent?: unknown;
  /**
   * The certificate is self-signed and registered with the provider (`self_signed_tls_client_auth`), rather than issued
   * by a CA the provider trusts (`tls_client_auth`). The calls are the same; the name is the provider's.
   * @default false
   */
  selfSigned?: boolean;
}

const fail = (message: string): never => {
  throw new TypeError(`tlsClientAuth: ${message}`);
};

/**
 * `tls_client_auth` and `self_signed_tls_client_auth`: the login, token and revocation calls go out with the client
 * certificate of `httpsAgent` (by default the instance's own), and carry `client_id` in their form. Refused at attach
 * where no client certificate can be presented (a browser, a Worker) or where the token service is not `https:`.
 *
 * @example
 * const httpsAgent = new https.Agent({ cert: readFileSync('client.crt'), key: readFileSync('client.key') });
 * const api = axios.create({ baseURL, httpsAgent });
 * attachTokenAuth(api, { ...oauth2ClientCredentials({ tokenPath: '/oauth2/token', clientId, clientAuthentication: tlsClientAuth() }) });
 */
export function tlsClientAuth(options: TlsClientAuthOptions = {}): ClientAuthMethod {
  const { httpsAgent: given, selfSigned = false } = options ?? {};
  if (typeof selfSigned !== 'boolean') fail('`selfSigned` must be true or false.');
  return {
    method: selfSigned ? 'self_signed_tls_client_auth' : 'tls_client_auth',
    setUp({ tokenURL, httpsAgent: instanceAgent }) {
      try {
        getAdapter('http');
      } catch {
        fail(
          'this runtime cannot present a client certificate (no Node http adapter: a browser or a Worker). ' +
            'Keep the client authentication on a server, or use `privateKeyJwt()`.',
        );
      }
      if (!/^https:/i.test(tokenURL))
        fail(
          `a client certificate is presented over TLS, and the token calls go to ${tokenURL}: give an https \`authBaseURL\`.`,
        );
      const agent = given ?? instanceAgent;
      const { cert, pfx } = (agent as { options?: { cert?: unknown; pfx?: unknown } } | undefined)?.options ?? {};
      if (agent === undefined)
        fail(
          'no client certificate: give the axios instance an `httpsAgent` with it (`new https.Agent({ cert, key })`), ' +
            'or give one to tlsClientAuth({ httpsAgent }).',
        );
      if (cert === undefined && pfx === undefined)
        fail('the `httpsAgent` holds no client certificate: make it with `cert` and `key` (or `pfx`).');
      // The agent itself, not its certificate copied: its `ca` may be what trusts the token service.
      const layer =
        (next: AxiosAdapter): AxiosAdapter =>
        (config) => {
          config.httpsAgent = agent;
          return next(config);
        };
      return { layer, secrets: [] };
    },
  };
}
