// openapi-typescript-codegen's client class (`openapi -c axios --name OrdersClient`) on an instance of your own. The
// class it generates sends through the global axios too: its AxiosHttpRequest calls the generated `request()`
// without an instance, so the class takes an HttpRequest that passes yours. The client is
// examples/generated/openapi-typescript-codegen-client/, made by `npm run generate:clients`. A module for your app to
// import, not a script; generated-clients.test.ts runs it on the emulator.
import axios from 'axios';
import type { AxiosInstance } from 'axios';
import { attachTokenAuth } from 'axios-token-keeper';
import type { Credentials, TokenAuth } from 'axios-token-keeper';
import { BaseHttpRequest, OrdersClient } from './generated/openapi-typescript-codegen-client';
import type { CancelablePromise, OpenAPIConfig } from './generated/openapi-typescript-codegen-client';
import type { ApiRequestOptions } from './generated/openapi-typescript-codegen-client/core/ApiRequestOptions';
import { request } from './generated/openapi-typescript-codegen-client/core/request';

export { ApiError } from './generated/openapi-typescript-codegen-client';

/** The client's HttpRequest, sending every request through `instance`. */
function sendingThrough(instance: AxiosInstance): new (config: OpenAPIConfig) => BaseHttpRequest {
  return class extends BaseHttpRequest {
    override request<T>(options: ApiRequestOptions): CancelablePromise<T> {
      return request<T>(this.config, options, instance);
    }
  };
}

/** Called once when the app starts: the client, whose calls carry the token, and the plugin's handle. */
export function connectOrders(apiURL: string, credentials: Credentials): { orders: OrdersClient; auth: TokenAuth } {
  const api = axios.create({ baseURL: apiURL });
  const auth = attachTokenAuth(api, { credentials });
  return { orders: new OrdersClient({ BASE: apiURL }, sendingThrough(api)), auth };
}
