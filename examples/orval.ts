// orval's axios client with a custom instance, as orval documents it: this file is the `mutator` every generated
// function sends through, so its instance is the one to attach to. The client is examples/generated/orval/, made
// by `npm run generate:clients` (scripts/generate-clients.mjs). A module for your app to import, not a script;
// generated-clients.test.ts runs it on the emulator.
import Axios from 'axios';
import type { AxiosError, AxiosRequestConfig } from 'axios';
import { attachTokenAuth } from 'axios-token-keeper';
import type { Credentials, TokenAuth } from 'axios-token-keeper';

export const AXIOS_INSTANCE = Axios.create();

/** The mutator: orval calls it with each request's config and the caller's options, and returns the body. */
export const customInstance = async <T>(config: AxiosRequestConfig, options?: AxiosRequestConfig): Promise<T> => {
  const { data } = await AXIOS_INSTANCE.request<T>({ ...config, ...options });
  return data;
};

/** The error a generated function rejects with: the AxiosError, with the service's answer as `response`. */
export type ErrorType<Error> = AxiosError<Error>;

/** The body a generated function takes, as the spec says it. */
export type BodyType<BodyData> = BodyData;

/** Called once when the app starts; the generated functions then carry the token. */
export function connectOrders(apiURL: string, credentials: Credentials): TokenAuth {
  AXIOS_INSTANCE.defaults.baseURL = apiURL;
  return attachTokenAuth(AXIOS_INSTANCE, { credentials });
}
