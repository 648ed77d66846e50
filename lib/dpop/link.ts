// DPoP as the rest of the plugin meets it, in the main bundle and small: the key a login makes, and the adapter that
// sends a request or a token call with its proof. The work itself (keys, proofs, nonces) is in runtime.ts, which
// loads at the first call that needs it, so that an app without `dpop` ships none of it.
import type { AxiosAdapter, AxiosResponse, InternalAxiosRequestConfig } from 'axios';
import type { DpopAlgorithm, DpopKey } from '../contract/dpop.js';
import type { DpopRuntime } from './runtime.js';
import { isStream } from '../support/redact.js';
import { pageAddress, requestURL } from '../support/url.js';

/**
 * What a request or a token call carries for its proof: the key, and the access token it carries, if any. Under a
 * string key, which every axios version's config merges pass on as it is.
 */
export const DPOP_TARGET = 'axiosTokenKeeperDpop';

export interface DpopTarget {
  readonly key: DpopKey;
  readonly accessToken?: string | undefined;
}

/** A config that may carry a {@link DpopTarget}. */
export type Targeted = InternalAxiosRequestConfig & { [DPOP_TARGET]?: DpopTarget | undefined };

/** Marks `config` to go out with a proof for `target`. */
export function proveWith<Config extends object>(config: Config, target: DpopTarget): Config {
  (config as { [DPOP_TARGET]?: DpopTarget })[DPOP_TARGET] = target;
  return config;
}

/** The `dpop` option of one attachment: its algorithm, and the runtime, loaded once. */
export class DpopLink {
  private runtime: Promise<DpopRuntime> | undefined;

  constructor(
    readonly algorithm: DpopAlgorithm,
    private readonly clock: () => number,
  ) {}

  /** A key for a login; `extractable` when the store keeps it sealed, exported into the record. */
  async newKey(extractable: boolean): Promise<DpopKey> {
    return (await this.load()).newKey(this.algorithm, extractable);
  }

  /** `adapter`, a config marked by {@link proveWith} sent with its proof (and once more for a nonce asked for). */
  wrap(adapter: AxiosAdapter): AxiosAdapter {
    return (config: InternalAxiosRequestConfig): Promise<AxiosResponse> => {
      const target = (config as Targeted)[DPOP_TARGET];
      return target
        ? this.load().then((runtime) =>
            runtime.send(adapter, config, {
              target,
              url: new URL(requestURL(config) ?? '', pageAddress()).href,
              // A stream was consumed by the send: it cannot go once more for a nonce.
              replayable: !isStream(config.data),
            }),
          )
        : adapter(config);
    };
  }

  private load(): Promise<DpopRuntime> {
    return (this.runtime ??= import('./runtime.js').then(
      ({ DpopRuntime }) => new DpopRuntime(this.clock),
      (error: unknown) => {
        // A chunk that failed to load (a network blip in a browser) is tried again by the next call.
        this.runtime = undefined;
        throw error;
      },
    ));
  }
}
