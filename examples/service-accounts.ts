// Service accounts that prove themselves with a key rather than a secret (private_key_jwt), with
// axios-token-keeper/client-auth: Okta, Microsoft Entra ID and Auth0 as their docs ask, one instance each. A module for
// your app to import, not a script; it reads OKTA_DOMAIN, OKTA_CLIENT_ID, ENTRA_TENANT, ENTRA_CLIENT_ID,
// ENTRA_CERT_THUMBPRINT, AUTH0_DOMAIN, AUTH0_CLIENT_ID and CLIENT_KEY_PEM (a PKCS#8 PEM, from your secret store).
// Type-checked by `npm test`; interop-oauth2-client-auth.test.ts runs privateKeyJwt() against oidc-provider.
import axios from 'axios';
import { attachTokenAuth } from 'axios-token-keeper';
import { oauth2ClientCredentials } from 'axios-token-keeper/presets';
import { privateKeyJwt } from 'axios-token-keeper/client-auth';

const env = (name: string): string => process.env[name] ?? '';
// One key per deployment, its public half registered with the provider; never generated at start, never shared.
const key = env('CLIENT_KEY_PEM');

// Okta, an API Services app with "Public key / Private key": `aud` is the token endpoint's URL (the default); a custom
// authorization server (here `default`) for your own scopes, the org server (/oauth2/v1/token) for okta.* scopes.
export const okta = axios.create({ baseURL: 'https://orders.example.com' });
attachTokenAuth(okta, {
  authBaseURL: `https://${env('OKTA_DOMAIN')}`,
  ...oauth2ClientCredentials({
    tokenPath: '/oauth2/default/v1/token',
    clientId: env('OKTA_CLIENT_ID'),
    scope: 'orders.read',
    clientAuthentication: privateKeyJwt({ key, kid: 'orders-2026' }),
  }),
});

// Microsoft Entra ID, a certificate credential: RS256 with the certificate's SHA-1 thumbprint as `x5t` (PS256 takes
// `x5t#S256`), `aud` the token endpoint's URL, the scope `<resource>/.default`.
export const graph = axios.create({ baseURL: 'https://graph.microsoft.com' });
attachTokenAuth(graph, {
  authBaseURL: `https://login.microsoftonline.com/${env('ENTRA_TENANT')}`,
  ...oauth2ClientCredentials({
    tokenPath: '/oauth2/v2.0/token',
    clientId: env('ENTRA_CLIENT_ID'),
    scope: 'https://graph.microsoft.com/.default',
    clientAuthentication: privateKeyJwt({ key, header: { x5t: env('ENTRA_CERT_THUMBPRINT') } }),
  }),
});

// Auth0, Private Key JWT: `aud` is the tenant's issuer, with its trailing slash, and the login names the API it wants a
// token for (`audience`, the API's identifier).
export const billing = axios.create({ baseURL: 'https://billing.example.com' });
attachTokenAuth(billing, {
  authBaseURL: `https://${env('AUTH0_DOMAIN')}`,
  ...oauth2ClientCredentials({
    tokenPath: '/oauth/token',
    clientId: env('AUTH0_CLIENT_ID'),
    grantParams: { audience: 'https://billing.example.com' },
    clientAuthentication: privateKeyJwt({ key, audience: `https://${env('AUTH0_DOMAIN')}/` }),
  }),
});
