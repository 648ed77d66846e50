// The token scheme: how a pair goes on the wire, chosen once at attach. Bearer (here, through `applyToken`) is the
// default; DPoP (lib/dpop/) is the other. The rest of the plugin meets a scheme through this interface alone, and a
// token call goes out through the call layers each scheme (and each client authentication) lays over it.
import type { AxiosAdapter, InternalAxiosRequestConfig } from 'axios';
import type { TokenPair } from '../contract/store.js';

/**
 * A layer laid over the adapter a token call goes out through: `(next) => adapter`, as an undici interceptor is laid
 * over a dispatch. Each attempt of a call, first try and retries alike, goes through every layer, so that what it adds
 * (a proof, an assertion) is fresh for each attempt. What the call is for is on its config (see client.ts' `callOf`).
 */
export type CallLayer = (next: AxiosAdapter) => AxiosAdapter;

/** What a login binds the pair it brings to (DPoP: a new key), carried by its call and kept on its pair. */
export type Binding = Pick<TokenPair, 'dpopKey'>;

/** How a pair goes on the wire. */
export interface TokenScheme {
  /** Puts `pair`'s access token on `config`, as the request goes out: on every request, so it is cheap and sync. */
  authorize(config: InternalAxiosRequestConfig, pair: TokenPair): void;
  /** The adapter a request that carries a pair goes out through, over `adapter`: made once per adapter. */
  adapter(adapter: AxiosAdapter): AxiosAdapter;
  /** The layer over the token calls' adapter, if the scheme adds to each call. */
  readonly callLayer?: CallLayer | undefined;
  /**
   * Whether this holder can use `pair` from a store or a renewal for a token call: one it can prove it holds (DPoP: it
   * carries its key). `undefined`: a refresh token the browser keeps in a cookie, which goes without a pair.
   */
  usable(pair: TokenPair | undefined): boolean;
  /** What a login makes for the pair it brings; undefined when nothing. */
  bind(): Promise<Binding | undefined>;
  /** What a pair is bound to, which a token call with its refresh token carries and the pair it brings keeps. */
  bindingOf(pair: Partial<TokenPair>): Binding | undefined;
  /** Throws the error of a token answer `body` this scheme cannot use (`where`: the call, for the message). */
  checkAnswer(body: unknown, where: string, status: number): void;
  /** Throws the TypeError of a pair `auth.setTokens()` is given that this scheme cannot use. */
  checkTokens(tokens: Partial<TokenPair>): void;
}

/**
 * The Bearer scheme: `applyToken` puts the access token on (by default `Authorization: Bearer <access>`), and nothing
 * else changes.
 */
export function bearer(applyToken: (config: InternalAxiosRequestConfig, access: string) => void): TokenScheme {
  return {
    authorize: (config, pair) => applyToken(config, pair.access),
    adapter: (adapter) => adapter,
    usable: () => true,
    bind: () => Promise.resolve(undefined),
    bindingOf: () => undefined,
    checkAnswer: () => undefined,
    checkTokens(tokens) {
      if (tokens.dpopKey)
        throw new TypeError('auth.setTokens: a `dpopKey` was given, but `dpop` is off: attach with `dpop: true`.');
    },
  };
}
