// Type tests of the factory and of what it returns. Checked by `tsc -p tsconfig.json` (part of `npm test`), never run:
// a wrong public type fails the build, and each `@ts-expect-error` fails it too if the type it guards were loosened.
import axios from 'axios';
import type { AxiosInstance } from 'axios';
import { expectTypeOf } from 'expect-type';
import { attachTokenAuth, MemoryTokenStore } from 'axios-token-keeper';
import type {
  Credentials,
  DpopKey,
  ParsedTokens,
  TokenAuth,
  TokenAuthAccount,
  TokenAuthError,
  TokenAuthOptions,
  TokenAuthState,
  TokenAuthStats,
  TokenPair,
  TokenStore,
} from 'axios-token-keeper';

const api = axios.create({ baseURL: 'https://api.example.com' });
const credentials = { username: 'jane', password: 'pw' };

expectTypeOf(attachTokenAuth).toEqualTypeOf<(instance: AxiosInstance, options: TokenAuthOptions) => TokenAuth>();
expectTypeOf(attachTokenAuth).parameters.toEqualTypeOf<[AxiosInstance, TokenAuthOptions]>();
expectTypeOf(attachTokenAuth).returns.toEqualTypeOf<TokenAuth>();
expectTypeOf(attachTokenAuth).toBeCallableWith(api, { credentials });
// The default export of axios is an instance too.
expectTypeOf(attachTokenAuth).toBeCallableWith(axios, { credentials });

// @ts-expect-error the options are required: at least `credentials`
attachTokenAuth(api);
// @ts-expect-error a request config is not an axios instance
attachTokenAuth({ baseURL: 'https://api.example.com' }, { credentials });

// What the handle offers, and nothing more: a method added or dropped is a change of the public API.
expectTypeOf<keyof TokenAuth>().toEqualTypeOf<
  | 'eject'
  | 'accessToken'
  | 'getTokens'
  | 'setTokens'
  | 'login'
  | 'refresh'
  | 'logout'
  | 'flush'
  | 'on'
  | 'stats'
  | 'getState'
  | 'subscribe'
  | 'account'
>();
// A named account's handle: the members that act on one account, and nothing of the attachment's.
expectTypeOf<TokenAuth['account']>().toEqualTypeOf<(name: string) => TokenAuthAccount>();
expectTypeOf<keyof TokenAuthAccount>().toEqualTypeOf<
  | 'accessToken'
  | 'getTokens'
  | 'setTokens'
  | 'login'
  | 'refresh'
  | 'logout'
  | 'flush'
  | 'stats'
  | 'getState'
  | 'subscribe'
>();
// What a UI renders, in the shape React's useSyncExternalStore takes; bound (`this: void`), so that they are passed
// detached, as `useSyncExternalStore(auth.subscribe, auth.getState)`, without typescript-eslint's unbound-method.
expectTypeOf<TokenAuth['getState']>().toEqualTypeOf<() => TokenAuthState>();
expectTypeOf<TokenAuth['subscribe']>().toEqualTypeOf<(listener: () => void) => () => void>();
expectTypeOf<ThisParameterType<TokenAuth['getState']>>().toEqualTypeOf<void>();
expectTypeOf<ThisParameterType<TokenAuth['subscribe']>>().toEqualTypeOf<void>();
expectTypeOf<TokenAuthState['status']>().toEqualTypeOf<'signed-out' | 'signing-in' | 'signed-in' | 'renewing'>();
expectTypeOf<TokenAuthState['error']>().toEqualTypeOf<TokenAuthError | undefined>();
expectTypeOf<TokenAuth['flush']>().toEqualTypeOf<() => Promise<void>>();
expectTypeOf<TokenAuth['setTokens']>().toEqualTypeOf<(tokens: ParsedTokens | TokenPair) => Promise<void>>();
expectTypeOf<TokenAuth['accessToken']>().toEqualTypeOf<() => Promise<string>>();
expectTypeOf<TokenAuth['eject']>().toEqualTypeOf<() => void>();
expectTypeOf<TokenAuth['getTokens']>().toEqualTypeOf<() => Promise<TokenPair | null>>();
expectTypeOf<TokenAuth['login']>().toEqualTypeOf<(credentials?: Credentials) => Promise<void>>();
expectTypeOf<TokenAuth['refresh']>().toEqualTypeOf<() => Promise<void>>();
expectTypeOf<TokenAuth['logout']>().toEqualTypeOf<() => Promise<void>>();
expectTypeOf<TokenAuth['stats']>().toEqualTypeOf<() => TokenAuthStats>();
expectTypeOf<TokenAuthStats>().toEqualTypeOf<{
  logins: number;
  refreshes: number;
  replays: number;
  failures: number;
  waiting: number;
  budget: { login: number; refresh: number } | undefined;
}>();

// The pair is plain data, so a store may serialise it, but for the DPoP key, which a store keeps as it says it can.
expectTypeOf<TokenPair>().toEqualTypeOf<{ access: string; refresh?: string; expiresAt?: number; dpopKey?: DpopKey }>();

export async function useHandle(): Promise<void> {
  const auth = attachTokenAuth(api, { credentials, store: new MemoryTokenStore() });
  const pair = await auth.getTokens();
  // @ts-expect-error the pair may be null: no tokens yet, or after logout
  void pair.access;
  if (pair) expectTypeOf(pair.refresh).toEqualTypeOf<string | undefined>();
  // @ts-expect-error the pair is behind a promise: the store may be async
  void auth.getTokens().access;
}

expectTypeOf(new MemoryTokenStore()).toExtend<TokenStore>();
