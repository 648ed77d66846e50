// The browser store's sealing, loaded at its first use: the cipher (sealing/cipher.ts: AES-GCM through WebCrypto) is
// reached only through the `import()` here, which an app's bundler makes a chunk of its own. An app without
// `encryption` never loads it; one with it loads it at the first seal or open, not with the page.
import type { TokenPair } from '../../contract/store.js';
import type { StoredPair } from '../common/record.js';
import type { Sealer } from '../sealing/records.js';
import type { PairSealer } from '../sealing/cipher.js';
import type { CheckedEncryption } from '../sealing/options.js';

/** The PairSealer of `encryption`, made when the first pair is sealed or opened. */
export class LazySealer implements Sealer {
  /** `encryption` as `sealing()` checked it: it holds the keys, hence a private field. */
  readonly #encryption: CheckedEncryption;
  readonly #crypto: Crypto;
  #loading: Promise<PairSealer> | undefined;

  /** `encryption` as `sealing()` checked it; `crypto`, the page's WebCrypto. */
  constructor(encryption: CheckedEncryption, crypto: Crypto) {
    this.#encryption = encryption;
    this.#crypto = crypto;
  }

  /** It seals what it keeps: not with `writeClear`. */
  get sealsPairs(): boolean {
    return !this.#encryption.writeClear;
  }

  async seal(pair: Partial<TokenPair>, context: string): Promise<StoredPair<Partial<TokenPair>>> {
    return (await this.#sealer()).seal(pair, context);
  }

  async open<Pair extends Partial<TokenPair>>(
    stored: StoredPair<Partial<TokenPair>>,
    context: string,
    where: string,
    check: (value: unknown) => value is Pair,
  ): Promise<Pair> {
    return (await this.#sealer()).open(stored, context, where, check);
  }

  /** The sealer, made once; a load that failed (the chunk did not arrive) is tried again by the next seal or open. */
  #sealer(): Promise<PairSealer> {
    return (this.#loading ??= import('../sealing/cipher.js').then(
      ({ PairSealer }) => new PairSealer(this.#encryption, () => this.#crypto),
      (error: unknown) => {
        this.#loading = undefined;
        throw error;
      },
    ));
  }
}
