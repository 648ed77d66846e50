// Token services shaped other than HTTP Basic, in one line each with axios-token-keeper/presets: three instances,
// three services. A module for your app to import, not a script; it reads DJANGO_USER, DJANGO_PASSWORD,
// CLIENT_SECRET, ORDERS_USER and ORDERS_PASSWORD. Type-checked by `npm test`; interop-oauth2-*.test.ts run the OAuth2
// presets against real servers (oidc-provider, @node-oauth/oauth2-server), simplejwt.test.ts runs simpleJwt().
import axios from 'axios';
import { attachTokenAuth } from 'axios-token-keeper';
import { oauth2ClientCredentials, oauth2Password, simpleJwt } from 'axios-token-keeper/presets';

const env = (name: string): string => process.env[name] ?? '';

// Django SimpleJWT, and Express or Nest backends shaped like it: JSON { username, password } to /api/token/,
// JSON { refresh } to /api/token/refresh/, rotation honoured.
export const django = axios.create({ baseURL: 'https://django.example.com' });
attachTokenAuth(django, {
  ...simpleJwt(),
  credentials: { username: env('DJANGO_USER'), password: env('DJANGO_PASSWORD') },
});

// A service account on an OAuth2 server: grant_type=client_credentials, the client authenticated with Basic
// (`clientAuthentication: 'body'` puts client_id and client_secret in the form instead). No credentials needed.
export const reports = axios.create({ baseURL: 'https://reports.example.com' });
attachTokenAuth(reports, {
  ...oauth2ClientCredentials({ tokenPath: '/oauth/token', clientId: 'reports', clientSecret: env('CLIENT_SECRET') }),
  authBaseURL: 'https://auth.example.com',
});

// A user on an OAuth2 server: grant_type=password, renewed with grant_type=refresh_token.
export const orders = axios.create({ baseURL: 'https://orders.example.com' });
attachTokenAuth(orders, {
  ...oauth2Password({ tokenPath: '/oauth/token', clientId: 'orders-web', scope: 'orders' }),
  authBaseURL: 'https://auth.example.com',
  credentials: { username: env('ORDERS_USER'), password: env('ORDERS_PASSWORD') },
});
