// swagger-typescript-api's axios client (`swagger-typescript-api generate --axios`): `new Api()` makes an axios
// instance of its own, `api.instance`, and that is the one to attach to. The client is
// examples/generated/swagger-typescript-api/, made by `npm run generate:clients`. A module for your app to import,
// not a script; generated-clients.test.ts runs it on the emulator.
import { attachTokenAuth } from 'axios-token-keeper';
import type { Credentials, TokenAuth } from 'axios-token-keeper';
import { Api } from './generated/swagger-typescript-api/Api';

/** Called once when the app starts: the client, whose calls carry the token, and the plugin's handle. */
export function connectOrders(apiURL: string, credentials: Credentials): { api: Api<unknown>; auth: TokenAuth } {
  // Without `baseURL`, the instance would point at the spec's server.
  const api = new Api({ baseURL: apiURL });
  return { api, auth: attachTokenAuth(api.instance, { credentials }) };
}
