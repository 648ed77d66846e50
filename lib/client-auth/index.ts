/**
 * How an OAuth2 client proves who it is beyond a client secret, for the presets' `clientAuthentication`: a signed
 * assertion (`privateKeyJwt`, `clientSecretJwt`) or its TLS certificate (`tlsClientAuth`). An app loads only the method
 * it imports.
 *
 * @example
 * import { oauth2ClientCredentials } from 'axios-token-keeper/presets';
 * import { privateKeyJwt } from 'axios-token-keeper/client-auth';
 * attachTokenAuth(api, {
 *   authBaseURL: 'https://login.example.com',
 *   ...oauth2ClientCredentials({ tokenPath: '/oauth2/token', clientId: 'orders-svc', clientAuthentication: privateKeyJwt({ key: pem }) }),
 * });
 *
 * @module axios-token-keeper/client-auth
 */
export { privateKeyJwt } from './private-key-jwt.js';
export type { ClientKeyAlgorithm, PrivateKeyJwtOptions } from './private-key-jwt.js';
export { clientSecretJwt } from './client-secret-jwt.js';
export type { ClientSecretJwtOptions } from './client-secret-jwt.js';
export { tlsClientAuth } from './tls-client-auth.js';
export type { TlsClientAuthOptions } from './tls-client-auth.js';
export type {
  ClientAuthentication,
  ClientAuthLayer,
  ClientAuthMethod,
  ClientAuthMethodName,
  ClientOfMethod,
} from '../contract/client-auth.js';
