// The options as attach resolves them: the user's over DEFAULTS, checked (checks.ts), with what derives from them.
import type { AxiosInstance } from 'axios';
import { originOf, requestURL } from '../support/url.js';
import type { TokenAuthOptions } from '../contract/options.js';
import { checkedAuthBaseURL, checkKinds, checkValues, fail, resolveBudget } from './checks.js';
import { dpopScheme } from '../dpop/scheme.js';
import { bearer } from '../token-calls/scheme.js';
import { DEFAULTS } from './defaults.js';
import type { ResolvedOptions } from './defaults.js';
import type { ClientAuthentication, ClientAuthLayer } from '../contract/client-auth.js';

/** Merges the user's options over {@link DEFAULTS} and checks them, so that bad input fails at attach time. */
export function resolveOptions(instance: AxiosInstance, options: TokenAuthOptions): ResolvedOptions {
  checkKinds(options);
  const defined = Object.fromEntries(
    Object.entries(options).filter(([, value]) => value !== undefined),
  ) as TokenAuthOptions;
  const merged = { ...DEFAULTS, ...defined };
  checkValues(merged, defined);
  const authBaseURL = checkedAuthBaseURL(instance, merged);
  const explicitMarginMs = defined.expiryMarginMs;
  return {
    ...merged,
    // With the refresh token in a cookie, the default token call sends no body unless a refresh token is held.
    refreshRequest:
      defined.refreshRequest ??
      (merged.refreshTokenInCookie
        ? (refreshToken) => (refreshToken === '' ? {} : DEFAULTS.refreshRequest(refreshToken))
        : DEFAULTS.refreshRequest),
    // The token scheme, chosen here once: DPoP with `dpop`, else Bearer through `applyToken`.
    scheme:
      dpopScheme({ dpop: defined.dpop, applyToken: defined.applyToken, store: defined.store, clock: merged.clock }) ??
      bearer(merged.applyToken),
    clientAuth: clientAuthOf(
      instance,
      defined.clientAuthentication,
      requestURL({ baseURL: authBaseURL, url: merged.tokenPath }),
    ),
    authBaseURL,
    authBaseURLFromBaseURL: merged.authBaseURL === undefined,
    // Without `origins`, the instance's baseURL is read as each request goes: only authBaseURL's is fixed.
    origins: merged.origins ?? [originOf(authBaseURL)!],
    originsFollowBaseURL: merged.origins === undefined,
    tokenBudget: resolveBudget(merged.tokenBudget),
    storeTimeoutMs: defined.storeTimeoutMs ?? Math.min(DEFAULTS.storeTimeoutMs, merged.tokenTimeoutMs / 3),
    marginFor:
      explicitMarginMs === undefined
        ? (lifetimeMs) => Math.max(0, Math.min(DEFAULTS.expiryMarginMs, lifetimeMs / 10))
        : () => explicitMarginMs,
  };
}

/** `clientAuthentication` checked, and its method set up for the client and the token endpoint at `tokenURL`. */
function clientAuthOf(
  instance: AxiosInstance,
  given: ClientAuthentication | undefined,
  tokenURL: string | undefined,
): ClientAuthLayer | undefined {
  if (given === undefined) return undefined;
  const { method, clientId, clientSecret } = given as Partial<ClientAuthentication>;
  if (typeof method?.setUp !== 'function' || typeof clientId !== 'string' || clientId === '')
    fail(
      '`clientAuthentication` must be { method, clientId }, its method made by axios-token-keeper/client-auth (such as `privateKeyJwt({ key })`); the OAuth2 presets set it from their own `clientAuthentication`.',
    );
  return method.setUp({ clientId, clientSecret, tokenURL: tokenURL ?? '', httpsAgent: instance.defaults?.httpsAgent });
}
