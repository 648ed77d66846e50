/**
 * Keeps a token service's tokens for an axios instance: {@link attachTokenAuth} logs in with HTTP Basic
 * credentials, puts the access token on every request, renews it once for all waiting requests, and replays what
 * was refused. This entry loads no Node built-in, so browser bundles stay clean.
 *
 * @module axios-token-keeper
 */
export { attachTokenAuth } from './attach.js';
export { TokenAuthError, isTokenAuthError } from './contract/errors.js';
export type { TokenAuthErrorCode } from './contract/errors.js';
export { MemoryTokenStore } from './stores/memory.js';
export { DEFAULTS } from './options/defaults.js';
export type {
  AccountNamed,
  RenewalReason,
  TokenAuth,
  TokenAuthAccount,
  TokenAuthEvents,
  TokenAuthState,
  TokenAuthStats,
  TokenAuthStatus,
  TokenAuthWarningCode,
  TokenCallReport,
} from './contract/handle.js';
export type {
  AccountRecord,
  TokenOperation,
  TokenPair,
  TokenStore,
  TokenStoreLock,
  TokenStoreLockRequest,
} from './contract/store.js';
export type { TokenAuthOptions } from './contract/options.js';
export type { DpopAlgorithm, DpopEcJwk, DpopKey, DpopOkpJwk, DpopOptions, DpopPublicJwk } from './contract/dpop.js';
export type {
  Credentials,
  CredentialsSource,
  LogoutRequest,
  ParsedTokens,
  TokenBudgetLimits,
  TokenCallRequest,
} from './contract/calls.js';
