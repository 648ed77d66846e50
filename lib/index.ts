export { attachTokenAuth } from './attach.js';
export { TokenAuthError, isTokenAuthError } from './errors.js';
export type { TokenAuthErrorCode } from './errors.js';
export { MemoryTokenStore } from './stores/memory.js';
export { parseTokenBody } from './parse.js';
export type { ParsedTokens } from './parse.js';
export { DEFAULTS } from './options.js';
export type {
  Credentials,
  CredentialsSource,
  RefreshRequest,
  RenewalReason,
  TokenAuth,
  TokenAuthEvents,
  TokenAuthOptions,
  TokenAuthStats,
  TokenPair,
  TokenStore,
  TokenStoreLock,
} from './types.js';
