// DPoP (RFC 9449) as a token scheme, chosen at attach by the `dpop` option: the option checked, the store's keeping of
// keys checked, and the scheme the rest of the plugin meets through token-calls/scheme.ts. What it does at each send
// (keys, proofs, nonces) is in runtime.ts, loaded by `import()` at the first call that needs it, so that an app without
// `dpop` ships none of it, and one with it loads that at its first login.
import type { AxiosAdapter, InternalAxiosRequestConfig } from 'axios';
import type { DpopAlgorithm, DpopKey, DpopOptions } from '../contract/dpop.js';
import type { TokenPair, TokenStore } from '../contract/store.js';
import { kindOf } from '../support/kind.js';
import { isStream } from '../support/redact.js';
import { pageAddress, requestURL } from '../support/url.js';
import { callOf } from '../token-calls/client.js';
import type { TokenScheme } from '../token-calls/scheme.js';
import type { DpopRuntime, DpopTarget } from './runtime.js';
import type { Server } from './proof.js';

/** What the DPoP scheme is chosen with at attach. */
export interface DpopChoice {
  readonly dpop: boolean | DpopOptions | undefined;
  /** Set beside `dpop`, it would put the token on as well: refused. */
  readonly applyToken: unknown;
  /** The user's store, if any: it must keep the key (`dpopKeys`). */
  readonly store: TokenStore | undefined;
  readonly clock: () => number;
}

function fail(message: string): never {
  throw new TypeError(`attachTokenAuth: ${message}`);
}

/**
 * The DPoP scheme for `choice.dpop`, checked: true, or `{ algorithm }` of ES256 or EdDSA; not beside `applyToken`;
 * with a `store` that keeps the key. Undefined when `dpop` is off.
 */
export function dpopScheme({ dpop, applyToken, store, clock }: DpopChoice): TokenScheme | undefined {
  if (dpop === undefined || dpop === false) return undefined;
  if (dpop !== true) {
    if (typeof dpop !== 'object' || dpop === null || Array.isArray(dpop))
      fail(`\`dpop\` must be true, false or { algorithm: 'ES256' | 'EdDSA' }, got ${kindOf(dpop)}.`);
    for (const key of Object.keys(dpop))
      if (key !== 'algorithm') fail(`\`dpop\` takes { algorithm } alone, got \`${key}\`.`);
    if (dpop.algorithm !== undefined && dpop.algorithm !== 'ES256' && dpop.algorithm !== 'EdDSA')
      fail(`\`dpop.algorithm\` must be 'ES256' or 'EdDSA', got ${kindOf(dpop.algorithm)}.`);
  }
  if (applyToken !== undefined)
    fail(
      '`dpop` puts the token on each request itself (`Authorization: DPoP <access>` with its proof): leave out `applyToken`.',
    );
  if (store && store.dpopKeys !== 'as-is' && store.dpopKeys !== 'sealed')
    fail(
      `\`dpop\` binds the tokens to a key the holders of the \`store\` must share, and this store keeps no key (its \`dpopKeys\` is ${String(store.dpopKeys)}). ` +
        'A FileTokenStore or RedisTokenStore keeps it sealed: give the store `encryption` (without `writeClear`); ' +
        'the memory and browser stores keep it as it is. A private key is never kept in clear.',
    );
  const algorithm = (dpop !== true && dpop.algorithm) || 'ES256';
  return new Dpop(algorithm, clock, store?.dpopKeys === 'sealed');
}

/** The DPoP scheme of one attachment. */
class Dpop implements TokenScheme {
  /** What each request that carries a pair is sent with: its config is the one the adapter is given. */
  readonly #targets = new WeakMap<InternalAxiosRequestConfig, DpopTarget>();
  /** The adapters made so far, one per adapter under them. */
  readonly #adapters = new WeakMap<AxiosAdapter, AxiosAdapter>();
  #runtime: Promise<DpopRuntime> | undefined;
  #loaded: DpopRuntime | undefined;

  /** `extractable`: the store exports a login's key into its sealed record. */
  constructor(
    readonly algorithm: DpopAlgorithm,
    private readonly clock: () => number,
    private readonly extractable: boolean,
  ) {}

  authorize(config: InternalAxiosRequestConfig, pair: TokenPair): void {
    config.headers.Authorization = `DPoP ${pair.access}`;
    if (pair.dpopKey) this.#targets.set(config, { key: pair.dpopKey, accessToken: pair.access });
  }

  adapter(adapter: AxiosAdapter): AxiosAdapter {
    let made = this.#adapters.get(adapter);
    if (!made) {
      made = (config) => {
        const target = this.#targets.get(config);
        return target ? this.#send(adapter, config, target, 'api') : adapter(config);
      };
      this.#adapters.set(adapter, made);
    }
    return made;
  }

  /** Each login and token call with a key (its binding) goes with a proof by it. */
  readonly callLayer = (next: AxiosAdapter): AxiosAdapter => {
    return (config) => {
      const key = callOf(config)?.binding?.dpopKey;
      return key ? this.#send(next, config, { key }, 'token') : next(config);
    };
  };

  /** A pair this holder can prove it holds: one with its key. A pair without, from a store, costs one login. */
  usable(pair: TokenPair | undefined): boolean {
    return pair?.dpopKey !== undefined;
  }

  /** A new key for each login: the pair it brings is bound to it. */
  async bind(): Promise<{ dpopKey: DpopKey }> {
    return { dpopKey: await (await this.#load()).newKey(this.algorithm, this.extractable) };
  }

  /** Every answer this scheme checks came to a call with a proof: the runtime that sent it is here. */
  checkAnswer(body: unknown, where: string, status: number): void {
    this.#loaded?.checkAnswer(body, where, status);
  }

  bindingOf({ dpopKey }: Partial<TokenPair>): { dpopKey: DpopKey } | undefined {
    return dpopKey && { dpopKey };
  }

  checkTokens(tokens: Partial<TokenPair>): void {
    if (!tokens.dpopKey?.privateKey)
      throw new TypeError(
        'auth.setTokens: with `dpop`, pass the key the tokens are bound to as `dpopKey` (made by `createDpopKey` of `axios-token-keeper/dpop`, the key whose proofs obtained them).',
      );
  }

  /**
   * Sends `config` by `adapter` with a proof for `target` (and once more for a nonce asked for), with the nonce of
   * `server`, the token service or the API, which keep theirs apart even on one origin.
   */
  #send(adapter: AxiosAdapter, config: InternalAxiosRequestConfig, target: DpopTarget, server: Server) {
    return this.#load().then((runtime) =>
      runtime.send(adapter, config, {
        target,
        server,
        url: new URL(requestURL(config) ?? '', pageAddress()).href,
        // A stream was consumed by the send: it cannot go once more for a nonce.
        replayable: !isStream(config.data),
      }),
    );
  }

  #load(): Promise<DpopRuntime> {
    return (this.#runtime ??= import('./runtime.js').then(
      ({ DpopRuntime }) => (this.#loaded = new DpopRuntime(this.clock)),
      (error: unknown) => {
        // A chunk that failed to load (a network blip in a browser) is tried again by the next call.
        this.#runtime = undefined;
        throw error;
      },
    ));
  }
}
