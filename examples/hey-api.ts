// @hey-api/openapi-ts with its axios client (`openapi-ts -c @hey-api/client-axios`), two ways: hand the generated
// `client` an instance of yours with the plugin attached, or attach to the instance it made for itself,
// `client.instance`. Either way the client also needs `baseURL`: it builds each request's full address from its own
// config, not from the instance's. The client is examples/generated/hey-api/, made by `npm run generate:clients`. A
// module for your app to import, not a script; generated-clients.test.ts runs it on the emulator.
import axios from 'axios';
import { attachTokenAuth } from 'axios-token-keeper';
import type { Credentials, TokenAuth } from 'axios-token-keeper';
import { client } from './generated/hey-api/client.gen';

export { createOrder, getOrder, listOrders } from './generated/hey-api';

/** Your instance, attached, is the one the generated functions send through. */
export function connectOwnInstance(apiURL: string, credentials: Credentials): TokenAuth {
  const api = axios.create({ baseURL: apiURL });
  const auth = attachTokenAuth(api, { credentials });
  client.setConfig({ axios: api, baseURL: apiURL });
  return auth;
}

/**
 * Or the client's own instance. Set its `baseURL` before attaching: it starts as the spec's server, and the plugin
 * takes the token service's address from it when it attaches.
 */
export function connectClientInstance(apiURL: string, credentials: Credentials): TokenAuth {
  client.setConfig({ baseURL: apiURL });
  return attachTokenAuth(client.instance, { credentials });
}
