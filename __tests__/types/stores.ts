// Type tests of the store contract (a plain object, sync or async, implements it) and of the store subpaths' options.
import Redis, { Cluster } from 'ioredis';
import Redis6, { Cluster as Cluster6 } from 'ioredis6';
import { createClient as createClient4, createCluster as createCluster4 } from 'redis4';
import { createClient as createClient5, createCluster as createCluster5 } from 'redis5';
import { createClient as createClient6, createCluster as createCluster6 } from 'redis6';
import { expectTypeOf } from 'expect-type';
import type { TokenPair, TokenStore, TokenStoreLock } from 'axios-token-keeper';
import { FileTokenStore } from 'axios-token-keeper/file-store';
import type { FileTokenStoreOptions, StoreEncryption } from 'axios-token-keeper/file-store';
import { BrowserTokenStore } from 'axios-token-keeper/browser-store';
import type { BrowserTokenStoreOptions } from 'axios-token-keeper/browser-store';
import { sealing } from 'axios-token-keeper/sealing';
import type { Sealing } from 'axios-token-keeper/sealing';
import { RedisTokenStore } from 'axios-token-keeper/redis-store';
import type {
  NodeRedisClusterLike,
  RedisClientLike,
  RedisSubscriberLike,
  RedisTokenStoreOptions,
} from 'axios-token-keeper/redis-store';

let kept: TokenPair | null = null;

// The smallest store: three sync methods, no lock, no subscription.
export const syncStore: TokenStore = {
  get: () => kept,
  set: (pair) => {
    kept = pair;
  },
  clear: () => {
    kept = null;
  },
};

// A shared store: methods that return promises, a fenced lock, and a subscription.
export const asyncStore = {
  get() {
    return Promise.resolve(kept ?? undefined);
  },
  set(pair: TokenPair, fence?: number) {
    if (fence !== undefined && fence < 1) return Promise.resolve(false);
    kept = pair;
    return Promise.resolve(true);
  },
  clear() {
    kept = null;
    return Promise.resolve();
  },
  lock(): Promise<TokenStoreLock> {
    return Promise.resolve({ fence: 1, release: () => Promise.resolve() });
  },
  subscribe(listener: (pair: TokenPair | null) => void) {
    listener(kept);
    return () => undefined;
  },
} satisfies TokenStore;

expectTypeOf<TokenStoreLock>().toEqualTypeOf<{
  readonly fence?: number;
  leaseLeftMs?(): number;
  release(): void | Promise<void>;
}>();
expectTypeOf<TokenStore['get']>().returns.toEqualTypeOf<
  TokenPair | null | undefined | Promise<TokenPair | null | undefined>
>();
expectTypeOf<TokenStore['set']>().parameters.toEqualTypeOf<[pair: TokenPair, fence?: number]>();
expectTypeOf<TokenStore['clear']>().parameters.toEqualTypeOf<[fence?: number]>();

// @ts-expect-error `clear` is required: logout must reach the store
export const noClear: TokenStore = { get: () => null, set: () => undefined };
// @ts-expect-error `get` returns a pair, not the bare access token
export const stringGet: TokenStore = { get: () => 'token', set: () => undefined, clear: () => undefined };
export const syncLock: TokenStore = {
  ...syncStore,
  // @ts-expect-error `lock` resolves once granted: it is async, as a shared store must wait
  lock: () => ({ release: () => undefined }),
};
export const subscribeWithoutUnsubscribe: TokenStore = {
  ...syncStore,
  // @ts-expect-error `subscribe` returns the function that unsubscribes
  subscribe: () => true,
};

// The file store's options.
expectTypeOf<FileTokenStoreOptions>().toEqualTypeOf<{
  lockTtlMs?: number;
  lockTimeoutMs?: number;
  pollMs?: number;
  watch?: boolean;
  encryption?: StoreEncryption | Sealing;
}>();
expectTypeOf(FileTokenStore).constructorParameters.toEqualTypeOf<[path: string, options?: FileTokenStoreOptions]>();
expectTypeOf(FileTokenStore).instance.toExtend<TokenStore>();
expectTypeOf(FileTokenStore).toBeConstructibleWith('/var/lib/app/tokens.json');
expectTypeOf(FileTokenStore).toBeConstructibleWith('/var/lib/app/tokens.json', { lockTtlMs: 5_000, watch: false });

// The Redis store's options.
expectTypeOf<RedisTokenStoreOptions>().toEqualTypeOf<{
  prefix: string;
  subscriber?: RedisSubscriberLike;
  lockTtlMs?: number;
  lockTimeoutMs?: number;
  pollMs?: number;
  keyTtlMs?: number;
  encryption?: StoreEncryption | Sealing;

  replicaWaitMs?: number;
}>();
expectTypeOf(RedisTokenStore).constructorParameters.toEqualTypeOf<
  [client: RedisClientLike, options: RedisTokenStoreOptions]
>();
expectTypeOf(RedisTokenStore).instance.toExtend<TokenStore>();
// The user's own ioredis client, single node or cluster, fits without a cast.
expectTypeOf<Redis>().toExtend<RedisClientLike>();
expectTypeOf<Redis>().toExtend<RedisSubscriberLike>();
expectTypeOf<Cluster>().toExtend<RedisClientLike>();

export function stores(redis: Redis): TokenStore[] {
  return [
    new FileTokenStore('/var/lib/app/tokens.json', { lockTimeoutMs: 60_000, pollMs: 10 }),
    new RedisTokenStore(redis, { prefix: 'tokens:jane', subscriber: redis.duplicate(), keyTtlMs: 3_600_000 }),
  ];
}

// `encryption`: keys (a secret in Base64 or as bytes), or the functions of a KMS; a CryptoKey in the browser. The
// browser store takes what `sealing()` made of them; the Node stores that too, or the option as it is.
expectTypeOf<BrowserTokenStoreOptions['encryption']>().toEqualTypeOf<Sealing | undefined>();
expectTypeOf(sealing).returns.toEqualTypeOf<Sealing>();
export function sealedStores(redis: Redis, key: CryptoKey): TokenStore[] {
  const secret = process.env.TOKEN_SEALING_KEY ?? '';
  const kms: StoreEncryption = {
    seal: (plaintext, context) => Promise.resolve(`${context}:${plaintext.length}`),
    unseal: (sealed) => Promise.resolve(new TextEncoder().encode(sealed)),
  };
  const browser = sealing({
    keys: [
      { id: 'tab-1', key },
      { id: 'k1', secret: new Uint8Array(32) },
    ],
    acceptClear: true,
  });
  return [
    new FileTokenStore('/var/lib/app/tokens.json', { encryption: { keys: [{ id: 'k1', secret }], acceptClear: true } }),
    new FileTokenStore('/var/lib/app/tokens.json', { encryption: sealing({ keys: [{ id: 'k1', secret }] }) }),
    new RedisTokenStore(redis, {
      prefix: 'tokens:jane',
      encryption: { keys: [{ id: 'k2', secret: Buffer.alloc(32) }] },
    }),
    new RedisTokenStore(redis, { prefix: 'tokens:jane', encryption: kms }),
    new RedisTokenStore(redis, { prefix: 'tokens:jane', encryption: sealing(kms) }),
    new BrowserTokenStore({ key: 'orders', encryption: browser }),
    new BrowserTokenStore({ key: 'orders', encryption: sealing(kms) }),
  ];
}

export function refusedEncryption(redis: Redis, key: CryptoKey): void {
  const seal = (plaintext: Uint8Array) => Promise.resolve(String(plaintext.length));
  const unseal = () => Promise.resolve(new Uint8Array());
  // @ts-expect-error `keys`, or `seal` and `unseal`, not both
  void new FileTokenStore('/var/lib/app/tokens.json', { encryption: { keys: [], seal, unseal } });
  // @ts-expect-error a CryptoKey is for the browser store
  void new RedisTokenStore(redis, { prefix: 'tokens:jane', encryption: { keys: [{ id: 'k1', key }] } });
  // @ts-expect-error a key needs its id
  void new FileTokenStore('/var/lib/app/tokens.json', { encryption: { keys: [{ secret: 'x' }] } });
  // @ts-expect-error `unseal` resolves to the bytes it opened
  void new FileTokenStore('/var/lib/app/tokens.json', { encryption: { seal, unseal: () => Promise.resolve('x') } });
  // @ts-expect-error the browser store takes what `sealing()` made, not the option as it is
  void new BrowserTokenStore({ key: 'orders', encryption: { keys: [{ id: 'k1', key }] } });
  // @ts-expect-error `sealing()` checks the same shapes: `keys`, or `seal` and `unseal`, not both
  void sealing({ keys: [], seal, unseal });
  // @ts-expect-error `sealing()` checks the same shapes: a key needs its id
  void sealing({ keys: [{ key }] });
}

export function refused(redis: Redis): void {
  // @ts-expect-error the file store needs the path of its file
  void new FileTokenStore();
  // @ts-expect-error an unknown option (a misspelt `lockTtlMs`) is refused
  void new FileTokenStore('/var/lib/app/tokens.json', { lockTtl: 5_000 });
  // @ts-expect-error `watch` is a boolean
  void new FileTokenStore('/var/lib/app/tokens.json', { watch: 'yes' });
  // @ts-expect-error `lockTtlMs` is a number of milliseconds
  void new FileTokenStore('/var/lib/app/tokens.json', { lockTtlMs: '10s' });
  // @ts-expect-error `prefix` is required: one per account
  void new RedisTokenStore(redis, {});
  // @ts-expect-error the options are required, for the prefix
  void new RedisTokenStore(redis);
  // @ts-expect-error `keyTtlMs` is a number
  void new RedisTokenStore(redis, { prefix: 'tokens:jane', keyTtlMs: '1d' });
  // @ts-expect-error `subscriber` is a connection, not a channel name
  void new RedisTokenStore(redis, { prefix: 'tokens:jane', subscriber: 'tokens' });
  // @ts-expect-error a client without `eval` cannot run the lock's scripts
  void new RedisTokenStore({ get: () => Promise.resolve(null) }, { prefix: 'tokens:jane' });
}

// Every client the store takes fits as it is, without a cast: ioredis 6, node-redis 4, 5 and 6 (client and cluster,
// RESP2 and RESP3), and their second connections for pub/sub.
expectTypeOf<Redis6>().toExtend<RedisClientLike>();
expectTypeOf<Redis6>().toExtend<RedisSubscriberLike>();
expectTypeOf<Cluster6>().toExtend<RedisClientLike>();
// A node-redis cluster is taken as what the store uses of it: `sendCommand`, routed by the first key.
expectTypeOf<ReturnType<typeof createCluster4>>().toExtend<NodeRedisClusterLike>();
expectTypeOf<ReturnType<typeof createCluster5>>().toExtend<NodeRedisClusterLike>();
expectTypeOf<ReturnType<typeof createCluster6>>().toExtend<NodeRedisClusterLike>();
export function nodeRedisClients(): void {
  const client4 = createClient4();
  const client5 = createClient5({ RESP: 3 });
  const client6 = createClient6();
  const cluster4 = createCluster4({ rootNodes: [] });
  const cluster5 = createCluster5({ rootNodes: [], RESP: 3 });
  const cluster6 = createCluster6({ rootNodes: [] });
  void new RedisTokenStore(client4, { prefix: 'tokens:jane', subscriber: client4.duplicate() });
  void new RedisTokenStore(client5, { prefix: 'tokens:jane', subscriber: client5.duplicate() });
  void new RedisTokenStore(createClient5(), { prefix: 'tokens:jane', subscriber: createClient5().duplicate() });
  void new RedisTokenStore(client6, { prefix: 'tokens:jane', subscriber: client6.duplicate() });
  void new RedisTokenStore(createClient6({ RESP: 2 }), { prefix: 'tokens:jane' });
  void new RedisTokenStore(cluster4, { prefix: 'tokens:jane', subscriber: cluster4 });
  void new RedisTokenStore(cluster5, { prefix: 'tokens:jane', subscriber: cluster5 });
  void new RedisTokenStore(cluster6, { prefix: 'tokens:jane', subscriber: cluster6.duplicate() });
}
