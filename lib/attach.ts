import type { AxiosInstance } from 'axios';
import { accountNameProblem, Accounts } from './account/accounts.js';
import type { AccountKeeper } from './account/keeper.js';
import { Reports } from './account/reports.js';
import { CheckedStore, KEEP_ACCOUNTS, KEEPS_ONE_ACCOUNT } from './account/checked-store.js';
import type { SharedLinkMaker } from './account/link.js';
import type { TokenAuth, TokenAuthAccount } from './contract/handle.js';
import type { TokenAuthOptions } from './contract/options.js';
import { resolveOptions } from './options/resolve.js';
import { OriginPolicy } from './request/origins.js';
import { RequestPath } from './request/path.js';
import { axiosVersionProblem } from './support/axios-version.js';
import { TokenClient } from './token-calls/client.js';

/** Marks an instance as attached; `Symbol.for`, so that two copies of the package see each other's mark. */
const ATTACHED = Symbol.for('axios-token-keeper.attached');

type Attachable = AxiosInstance & { [ATTACHED]?: true };

/**
 * Attaches the token service's client rule to an axios instance: the first request logs in with the credentials,
 * every request to `origins` carries the access token, a token known to be expired is renewed before sending, and
 * requests refused with 401 share one renewal and are sent again.
 *
 * Your own interceptors, registered before or after, run once per request and see only the final answer: the token
 * goes on and a refusal is cured one level below them, in the request's adapter.
 *
 * @example
 * const api = axios.create({ baseURL: 'https://api.example.com' });
 * const auth = attachTokenAuth(api, { credentials: { username: 'jane', password: process.env.PASSWORD! } });
 * await api.get('/allocation/api/v1/tracking/order-list');
 */
export function attachTokenAuth(instance: AxiosInstance, options: TokenAuthOptions): TokenAuth {
  const target = attachable(instance);
  const resolved = resolveOptions(instance, options);
  const store = CheckedStore.of(resolved.store, { namesAccounts: resolved.accountOf !== undefined });
  // The coordination with a shared store is a layer of its own, loaded only where a store is given.
  const sharedLink = (): Promise<SharedLinkMaker> =>
    import('./coordination/index.js').then(({ makeSharedLink }) => makeSharedLink);
  const reports = new Reports();
  // `instance.defaults` itself may be replaced after attach (hey-api's setConfig does): read it as each request goes.
  const origins = new OriginPolicy(
    resolved.origins,
    resolved.originsFollowBaseURL ? () => instance.defaults?.baseURL : undefined,
  );
  const accounts = new Accounts({ options: resolved, client: new TokenClient(resolved), reports, sharedLink }, store);
  const path = new RequestPath({ instance, options: resolved, origins, accounts, reports });
  const requestId = instance.interceptors.request.use(path.arm, undefined, { synchronous: true });
  target[ATTACHED] = true;
  return {
    ...handleOf(() => accounts.default),
    eject() {
      path.eject();
      instance.interceptors.request.eject(requestId);
      delete target[ATTACHED];
      for (const account of accounts.all()) account.close();
    },
    account(name) {
      const problem = accountNameProblem(name);
      if (problem !== undefined)
        throw new TypeError(`auth.account(name): \`name\` ${problem}; pass the account's name, such as a tenant id.`);
      if (store && !store.keepsAccounts)
        throw new TypeError(`auth.account("${name}"): ${KEEPS_ONE_ACCOUNT}; ${KEEP_ACCOUNTS}.`);
      // The account as it is held at each call: one dropped meanwhile (maxAccounts) is made again, from the store.
      return handleOf(() => accounts.get(name));
    },
    on: (event, listener) => reports.on(event, listener),
  };
}

/** `instance`, checked: an axios instance, of an axios in the peer range, not attached yet. */
function attachable(instance: AxiosInstance): Attachable {
  const target = instance as Attachable;
  if (typeof target?.interceptors?.request?.use !== 'function')
    throw new TypeError(
      'attachTokenAuth: the first argument must be an axios instance, e.g. axios.create({ baseURL }).',
    );
  const problem = axiosVersionProblem(instance);
  if (problem !== undefined)
    throw new TypeError(`attachTokenAuth: ${problem}; install one in that range (\`npm install axios@1\`).`);
  if (target[ATTACHED])
    throw new Error(
      'attachTokenAuth: this axios instance already has token auth attached. Call `eject()` on the first handle before attaching again.',
    );
  return target;
}

/** The members bound to their account, so that `useSyncExternalStore(auth.subscribe, auth.getState)` works as it is. */
function handleOf(account: () => AccountKeeper): TokenAuthAccount {
  return {
    accessToken: () => account().accessToken(),
    getTokens: () => account().members.getTokens(),
    login: (credentials) => account().members.login(credentials),
    setTokens: (tokens) => account().members.setTokens(tokens),
    refresh: () => account().members.refresh(),
    logout: () => account().members.logout(),
    flush: () => account().members.flush(),
    stats: () => account().members.stats(),
    getState: () => account().members.getState(),
    subscribe: (listener) => account().members.subscribe(listener),
  };
}
