// The work of DPoP, loaded by scheme.ts at the first call that needs it: keys made, and each marked request or token
// call sent with a fresh proof, the servers' nonces learnt from every answer, and a `use_dpop_nonce` refusal tried once
// more with the nonce it gave. That one more try is below everything else: no refusal, no renewal, no budget.
import { isAxiosError } from 'axios';
import type { AxiosAdapter, AxiosResponse, InternalAxiosRequestConfig } from 'axios';
import type { DpopAlgorithm, DpopKey } from '../contract/dpop.js';
import { TokenAuthError } from '../contract/errors.js';
import { tokenTypeOf } from '../token-calls/parse.js';
import { createDpopKey } from './key.js';
import { DpopProofs, isNonceChallenge } from './proof.js';
import type { Server } from './proof.js';

/** What a request or a token call carries its proof for: the key, and the access token it carries, if any. */
export interface DpopTarget {
  readonly key: DpopKey;
  readonly accessToken?: string | undefined;
}

export class DpopRuntime {
  private readonly proofs: DpopProofs;

  constructor(clock: () => number) {
    this.proofs = new DpopProofs(clock);
  }

  newKey(algorithm: DpopAlgorithm, extractable: boolean): Promise<DpopKey> {
    return createDpopKey(algorithm, extractable);
  }

  /** Throws TOKEN_RESPONSE_INVALID for an answer whose token is not bound to the key (a `token_type` not DPoP). */
  checkAnswer(body: unknown, where: string, status: number): void {
    const tokenType = tokenTypeOf(body);
    if (tokenType && !/^dpop$/i.test(tokenType))
      throw new TokenAuthError(
        'TOKEN_RESPONSE_INVALID',
        `The token service answered ${where} with a token of type ${tokenType.slice(0, 20)}, not DPoP: it did not bind the token to the key of \`dpop\` (a service without DPoP, or one that does not offer it to this client). ` +
          'Turn DPoP on for this client at the service, or leave out `dpop`.',
        { status },
      );
  }

  /**
   * Sends `config` by `adapter` with a proof for `target` at `url`, with the latest nonce of `server` there; a nonce
   * asked for, once more with it, when its body can go again (`replayable`). The proof is for that one send: it leaves the config once the send is over, so that no
   * error or answer the app is given carries it.
   */
  async send(
    adapter: AxiosAdapter,
    config: InternalAxiosRequestConfig,
    { target, server, url, replayable }: { target: DpopTarget; server: Server; url: string; replayable: boolean },
  ): Promise<AxiosResponse> {
    const method = (config.method ?? 'get').toUpperCase();
    for (let tries = 1; ; tries += 1) {
      const used = this.proofs.nonceFor(server, url);
      config.headers.set(
        'DPoP',
        await this.proofs.proof(target.key, { server, method, url, accessToken: target.accessToken }),
      );
      try {
        const response = await adapter(config);
        this.proofs.learn(server, url, header(response, 'dpop-nonce'));
        return response;
      } catch (error) {
        const response = isAxiosError(error) ? error.response : undefined;
        const offered = response && header(response, 'dpop-nonce');
        this.proofs.learn(server, url, offered);
        // One more try when the answer asks for a nonce and gives one other than the proof carried: the requests
        // challenged at once all get the same nonce, and each goes once more with it.
        const challenge =
          typeof offered === 'string' &&
          offered !== used &&
          isNonceChallenge(response!.status, header(response!, 'www-authenticate'), json(response!.data));
        if (!challenge || tries > 1 || !replayable) throw error;
      } finally {
        config.headers.delete('DPoP');
      }
    }
  }
}

/** A header of an answer, as the adapter left it (an AxiosHeaders, or a plain object from another adapter). */
function header(response: AxiosResponse, name: string): unknown {
  const headers = response.headers as { get?: (name: string) => unknown } & Record<string, unknown>;
  return typeof headers?.get === 'function' ? headers.get(name) : headers?.[name];
}

/** An answer's body as the adapter gave it: JSON text before axios parses it, or already an object. */
function json(data: unknown): unknown {
  if (typeof data !== 'string') return data;
  try {
    return JSON.parse(data) as unknown;
  } catch {
    return undefined;
  }
}
