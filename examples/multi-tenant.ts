// A multi-tenant backend on many replicas: each tenant is an account of the token service with credentials of its own,
// and one Redis keeps every tenant's pair for the whole fleet, so each tenant logs in once and renews once per expiry
// however many replicas serve it. A module for your backend to import, not a script.
import axios from 'axios';
import type Redis from 'ioredis';
import { attachTokenAuth } from 'axios-token-keeper';
import type { Credentials } from 'axios-token-keeper';
import { RedisTokenStore } from 'axios-token-keeper/redis-store';

/**
 * The tenants' API on one instance. `credentialsOf` reads a tenant's credentials from your secret store, only when
 * that tenant needs a login.
 */
export function connectTenants(
  redis: Redis,
  apiURL: string,
  credentialsOf: (tenantId: string) => Promise<Credentials | undefined>,
) {
  const api = axios.create({ baseURL: apiURL });
  const auth = attachTokenAuth(api, {
    // No credentials for the default account: a request that forgets its tenant fails with NO_CREDENTIALS.
    credentials: (tenantId) => (tenantId === undefined ? undefined : credentialsOf(tenantId)),
    // One store for every tenant: each tenant's pair and record are kept apart in it (see docs/stores.md).
    store: new RedisTokenStore(redis, { prefix: 'tokens:orders-api', subscriber: redis.duplicate() }),
    // Tenants held in this process at once; one dropped comes back from Redis with no login.
    maxAccounts: 5_000,
  });
  /** A tenant's orders: the request names its account, and carries that tenant's token, never another's. */
  const ordersOf = (tenantId: string) => api.get('/allocation/api/v1/tracking/order-list', { account: tenantId });
  return { api, auth, ordersOf };
}
