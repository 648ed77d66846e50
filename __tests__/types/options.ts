// Type tests of TokenAuthOptions: which option is required, the type of each, and wrong types refused.
import axios from 'axios';
import type { AxiosError, InternalAxiosRequestConfig } from 'axios';
import { expectTypeOf } from 'expect-type';
import { attachTokenAuth, MemoryTokenStore } from 'axios-token-keeper';
import type {
  Credentials,
  CredentialsSource,
  LogoutRequest,
  TokenPair,
  ParsedTokens,
  TokenCallRequest,
  TokenAuthOptions,
  TokenStore,
} from 'axios-token-keeper';

const api = axios.create({ baseURL: 'https://api.example.com' });
const credentials: Credentials = { username: 'jane', password: 'pw' };

type RequiredKeys<T> = { [K in keyof T]-?: object extends Pick<T, K> ? never : K }[keyof T];

// Every option is optional (an app whose sign-in happens elsewhere passes no credentials); the set of options is the
// documented one (a new option gets its line here).
expectTypeOf<RequiredKeys<TokenAuthOptions>>().toEqualTypeOf<never>();
expectTypeOf<keyof TokenAuthOptions>().toEqualTypeOf<
  | 'credentials'
  | 'loginRequest'
  | 'logoutRequest'
  | 'refreshTokenInCookie'
  | 'authBaseURL'
  | 'loginPath'
  | 'tokenPath'
  | 'refreshRequest'
  | 'parseTokens'
  | 'applyToken'
  | 'dpop'
  | 'clientAuthentication'
  | 'isTokenRejected'
  | 'accessTokenLifetimeMs'
  | 'expiryMarginMs'
  | 'tokenTimeoutMs'
  | 'storeTimeoutMs'
  | 'whenStoreDown'
  | 'storeOutageWaitMs'
  | 'tokenRetries'
  | 'tokenRetryDelayMs'
  | 'loginCooldownMs'
  | 'tokenBudget'
  | 'allowInsecureHttp'
  | 'store'
  | 'origins'
  | 'accountOf'
  | 'maxAccounts'
  | 'clock'
>();

// Each option's type (optional ones read as `T | undefined`).
expectTypeOf<TokenAuthOptions['credentials']>().toEqualTypeOf<CredentialsSource | undefined>();
expectTypeOf<TokenAuthOptions['loginRequest']>().toEqualTypeOf<
  ((credentials: Credentials, account: string | undefined) => TokenCallRequest) | undefined
>();
expectTypeOf<TokenCallRequest>().toEqualTypeOf<{
  data?: unknown;
  headers?: Record<string, string>;
  params?: Record<string, unknown>;
  withCredentials?: boolean;
}>();
expectTypeOf<TokenAuthOptions['logoutRequest']>().toEqualTypeOf<
  | ((
      pair: TokenPair | null,
      account: string | undefined,
    ) => LogoutRequest | readonly LogoutRequest[] | null | undefined)
  | undefined
>();
expectTypeOf<LogoutRequest>().toEqualTypeOf<{
  path: string;
  data?: unknown;
  headers?: Record<string, string>;
  params?: Record<string, unknown>;
  withCredentials?: boolean;
}>();
expectTypeOf<TokenAuthOptions['refreshTokenInCookie']>().toEqualTypeOf<boolean | undefined>();
expectTypeOf<CredentialsSource>().toEqualTypeOf<
  | Credentials
  | ((account: string | undefined) => Credentials | null | undefined | Promise<Credentials | null | undefined>)
>();
expectTypeOf<Credentials>().toEqualTypeOf<{ username: string; password: string }>();
expectTypeOf<TokenAuthOptions['authBaseURL']>().toEqualTypeOf<string | undefined>();
expectTypeOf<TokenAuthOptions['loginPath']>().toEqualTypeOf<string | undefined>();
expectTypeOf<TokenAuthOptions['tokenPath']>().toEqualTypeOf<string | undefined>();
expectTypeOf<TokenAuthOptions['refreshRequest']>().toEqualTypeOf<
  ((refreshToken: string, account: string | undefined) => TokenCallRequest) | undefined
>();
expectTypeOf<TokenAuthOptions['parseTokens']>().toEqualTypeOf<
  ((body: unknown) => ParsedTokens | null | undefined) | undefined
>();
expectTypeOf<ParsedTokens>().toEqualTypeOf<{ access: string; refresh?: string; expiresIn?: number }>();
expectTypeOf<TokenAuthOptions['applyToken']>().toEqualTypeOf<
  ((config: InternalAxiosRequestConfig, access: string) => void) | undefined
>();
expectTypeOf<TokenAuthOptions['isTokenRejected']>().toEqualTypeOf<((error: AxiosError) => boolean) | undefined>();
expectTypeOf<TokenAuthOptions['accessTokenLifetimeMs']>().toEqualTypeOf<number | undefined>();
expectTypeOf<TokenAuthOptions['expiryMarginMs']>().toEqualTypeOf<number | undefined>();
expectTypeOf<TokenAuthOptions['tokenTimeoutMs']>().toEqualTypeOf<number | undefined>();
expectTypeOf<TokenAuthOptions['storeTimeoutMs']>().toEqualTypeOf<number | undefined>();
expectTypeOf<TokenAuthOptions['whenStoreDown']>().toEqualTypeOf<'wait' | 'go-alone' | undefined>();
expectTypeOf<TokenAuthOptions['storeOutageWaitMs']>().toEqualTypeOf<number | undefined>();
expectTypeOf<TokenAuthOptions['tokenRetries']>().toEqualTypeOf<number | undefined>();
expectTypeOf<TokenAuthOptions['tokenRetryDelayMs']>().toEqualTypeOf<number | undefined>();
expectTypeOf<TokenAuthOptions['loginCooldownMs']>().toEqualTypeOf<number | undefined>();
expectTypeOf<TokenAuthOptions['tokenBudget']>().toEqualTypeOf<
  { windowMs?: number; logins?: number; refreshes?: number } | false | undefined
>();
expectTypeOf<TokenAuthOptions['allowInsecureHttp']>().toEqualTypeOf<boolean | undefined>();
expectTypeOf<TokenAuthOptions['store']>().toEqualTypeOf<TokenStore | undefined>();
expectTypeOf<TokenAuthOptions['origins']>().toEqualTypeOf<ReadonlyArray<string | RegExp> | undefined>();
expectTypeOf<TokenAuthOptions['accountOf']>().toEqualTypeOf<
  ((config: InternalAxiosRequestConfig) => string | undefined) | undefined
>();
expectTypeOf<TokenAuthOptions['maxAccounts']>().toEqualTypeOf<number | undefined>();
expectTypeOf<TokenAuthOptions['clock']>().toEqualTypeOf<(() => number) | undefined>();

export function accepted(): void {
  // Every option at once, written as a user would.
  attachTokenAuth(api, {
    credentials: () => Promise.resolve(Math.random() > 2 ? null : credentials),
    authBaseURL: 'https://auth.example.com',
    loginPath: '/login',
    tokenPath: '/token',
    refreshRequest: (refreshToken) => ({ data: { refresh_token: refreshToken }, headers: { 'X-Client': 'app' } }),
    parseTokens: (body) => (typeof body === 'string' ? { access: body } : undefined),
    applyToken: (config, access) => {
      config.headers.set('X-Token', access);
    },
    isTokenRejected: (error) => error.response?.status === 401 || error.response?.status === 403,
    accessTokenLifetimeMs: Infinity,
    expiryMarginMs: 10_000,
    tokenTimeoutMs: 5_000,
    tokenRetries: 0,
    tokenRetryDelayMs: 100,
    loginCooldownMs: 30_000,
    tokenBudget: { logins: 5 },
    allowInsecureHttp: true,
    store: new MemoryTokenStore(),
    origins: ['https://api.example.com', /\.example\.com$/] as const,
    accountOf: (config) => config.headers.get('X-Tenant') as string | undefined,
    maxAccounts: 100,
    clock: () => 0,
  });
  attachTokenAuth(api, { credentials: () => credentials, tokenBudget: false });
  attachTokenAuth(api, { credentials: () => undefined });
}

export function refused(): void {
  // @ts-expect-error a loginRequest takes the credentials and returns the request, not a Basic header
  attachTokenAuth(api, { credentials, loginRequest: () => 'Basic amFuZTpwdw==' });
  // @ts-expect-error `refreshTokenInCookie` is a boolean
  attachTokenAuth(api, { refreshTokenInCookie: 'yes' });
  // @ts-expect-error credentials need a password
  attachTokenAuth(api, { credentials: { username: 'jane' } });
  // @ts-expect-error a credentials function returns credentials, not a Basic header
  attachTokenAuth(api, { credentials: () => 'Basic amFuZTpwdw==' });
  // @ts-expect-error an unknown option (a misspelt `authBaseURL`) is refused, not ignored
  attachTokenAuth(api, { credentials, authBaseUrl: 'https://auth.example.com' });
  // @ts-expect-error `authBaseURL` is a string
  attachTokenAuth(api, { credentials, authBaseURL: new URL('https://auth.example.com') });
  // @ts-expect-error `loginPath` is a string
  attachTokenAuth(api, { credentials, loginPath: 42 });
  // @ts-expect-error `tokenPath` is a string
  attachTokenAuth(api, { credentials, tokenPath: ['/token'] });
  // @ts-expect-error `refreshRequest` returns what the token call sends, not the refresh token
  attachTokenAuth(api, { credentials, refreshRequest: (refreshToken: string) => refreshToken });
  // @ts-expect-error `refreshRequest` headers are strings
  attachTokenAuth(api, { credentials, refreshRequest: () => ({ headers: { 'X-Retry': 1 } }) });
  // @ts-expect-error `parseTokens` must return an access token when it returns something
  attachTokenAuth(api, { credentials, parseTokens: () => ({ refresh: 'r' }) });
  // @ts-expect-error `parseTokens` gets `unknown`: the answer's body is not trusted
  attachTokenAuth(api, { credentials, parseTokens: (body: { access: string }) => body });
  // @ts-expect-error `applyToken` gets the access token as a string
  attachTokenAuth(api, { credentials, applyToken: (_config, access: number) => void access });
  // @ts-expect-error `isTokenRejected` returns a boolean
  attachTokenAuth(api, { credentials, isTokenRejected: (error) => error.response?.status });
  // @ts-expect-error `accessTokenLifetimeMs` is a number of milliseconds, not a duration string
  attachTokenAuth(api, { credentials, accessTokenLifetimeMs: '45m' });
  // @ts-expect-error `expiryMarginMs` is a number
  attachTokenAuth(api, { credentials, expiryMarginMs: '30s' });
  // @ts-expect-error `tokenTimeoutMs` is a number
  attachTokenAuth(api, { credentials, tokenTimeoutMs: null });
  // @ts-expect-error `tokenRetries` is a number
  attachTokenAuth(api, { credentials, tokenRetries: '3' });
  // @ts-expect-error `tokenRetryDelayMs` is a number
  attachTokenAuth(api, { credentials, tokenRetryDelayMs: true });
  // @ts-expect-error `loginCooldownMs` is a number
  attachTokenAuth(api, { credentials, loginCooldownMs: '1m' });
  // @ts-expect-error `tokenBudget` is limits or `false`, not `true`
  attachTokenAuth(api, { credentials, tokenBudget: true });
  // @ts-expect-error `tokenBudget` limits are numbers
  attachTokenAuth(api, { credentials, tokenBudget: { logins: '10' } });
  // @ts-expect-error `tokenBudget` has no other limits
  attachTokenAuth(api, { credentials, tokenBudget: { perMinute: 1 } });
  // @ts-expect-error `allowInsecureHttp` is a boolean
  attachTokenAuth(api, { credentials, allowInsecureHttp: 'yes' });
  // @ts-expect-error `store` is a TokenStore, not a storage key
  attachTokenAuth(api, { credentials, store: 'tokens' });
  // @ts-expect-error `origins` is a list, not one origin
  attachTokenAuth(api, { credentials, origins: 'https://api.example.com' });
  // @ts-expect-error `origins` holds strings and patterns only
  attachTokenAuth(api, { credentials, origins: [new URL('https://api.example.com')] });
  // @ts-expect-error `clock` returns epoch milliseconds, not a Date
  attachTokenAuth(api, { credentials, clock: () => new Date() });
}
