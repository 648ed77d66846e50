// openapi-typescript-codegen's default client (`openapi -c axios`): its services send through the global axios, the
// default export of 'axios', so the plugin goes on that. The global axios has no `baseURL`, so `authBaseURL` says
// where the token service is, and its origin is the one that receives the token. The client is
// examples/generated/openapi-typescript-codegen/, made by `npm run generate:clients`. A module for your app to
// import, not a script; generated-clients.test.ts runs it on the emulator.
import axios from 'axios';
import { attachTokenAuth } from 'axios-token-keeper';
import type { Credentials, TokenAuth } from 'axios-token-keeper';
import { OpenAPI } from './generated/openapi-typescript-codegen';

export { ApiError, OrdersService } from './generated/openapi-typescript-codegen';

/** Called once when the app starts; `OrdersService.listOrders()` and the rest then carry the token. */
export function connectOrders(apiURL: string, credentials: Credentials): TokenAuth {
  OpenAPI.BASE = apiURL;
  // When the API lives on another host than the token service, add `origins: [apiURL]`: only the origins listed
  // receive the token, and here the default is the token service's alone.
  return attachTokenAuth(axios, { credentials, authBaseURL: apiURL });
}
