import { AxiosHeaders, isAxiosError } from 'axios';
import type { AxiosError, InternalAxiosRequestConfig } from 'axios';
import type { PairInUse } from './account.js';
import { abortable, succeeds } from './abort.js';
import { DEFAULTS } from './options.js';
import type { ResolvedOptions } from './options.js';
import { answeredFrom, originOf, requestURL } from './origins.js';
import type { OriginPolicy } from './origins.js';
import { isStream } from './redact.js';
import type { SecretList } from './redact.js';
import type { Renewals } from './renewal.js';
import type { Reports } from './reports.js';

/**
 * What a request carried: which pair, how many renewals had failed when it left, and in which logout epoch. No secret
 * in it.
 */
export interface Ticket {
  readonly generation: number;
  readonly failedRenewals: number;
  readonly epoch: number;
  /** The request is a replay: its refusal goes to the caller, or once more with a pair others' renewals brought. */
  readonly replay: boolean;
}

/**
 * The replays of refused requests, in one room: the ticket a request leaves with, the decision after its refusal (a
 * late one, one renewing did not cure, a stream that cannot go again, a replay refused again) and what the account's
 * memory of refusals is told (uncured, cured).
 */
export class Replays {
  /**
   * Whether the service refused the token, judged on the answer as the caller would see it: a custom test gets the
   * body parsed; the default one reads the status only, and is spared the parsing.
   */
  private readonly isTokenRefusal: (error: AxiosError, config: InternalAxiosRequestConfig) => boolean;

  constructor(
    private readonly renewals: Renewals,
    private readonly reports: Reports,
    private readonly secrets: SecretList,
    private readonly origins: OriginPolicy,
    options: Pick<ResolvedOptions, 'isTokenRejected'>,
  ) {
    const isTokenRejected = options.isTokenRejected;
    this.isTokenRefusal =
      isTokenRejected === DEFAULTS.isTokenRejected
        ? isTokenRejected
        : (error, config) => isTokenRejected(withParsedBody(error, config));
  }

  /** The ticket of a request that leaves now with `inUse`. */
  ticket(inUse: PairInUse, replay: boolean): Ticket {
    const { renewals } = this;
    return {
      generation: inUse.generation,
      failedRenewals: renewals.failedRenewals.count,
      epoch: renewals.epoch,
      replay,
    };
  }

  /**
   * After a refusal: the pair to send the request with once more, or the refusal itself, masked, for the caller.
   * A replay refused for a pair that a later renewal has replaced (tokens that expired again meanwhile) goes once
   * more with the newer one; refused with the current pair, it goes to the caller. `ejected`: after eject() the
   * request would go out without a token.
   */
  async recover(
    error: unknown,
    ticket: Ticket,
    config: InternalAxiosRequestConfig,
    ejected: () => boolean,
  ): Promise<PairInUse> {
    if (!isAxiosError(error)) throw error;
    // A refusal from elsewhere (a redirect to another origin, which got no token) is not about our token.
    const answeredBy = answeredFrom(error.request);
    if (
      ejected() ||
      !this.isTokenRefusal(error, config) ||
      (answeredBy !== undefined && !this.origins.allowsURL(answeredBy))
    )
      throw this.secrets.axiosError(error);
    const endpoint = `${(config.method ?? 'get').toUpperCase()} ${(requestURL(config) ?? '').split(/[?#]/)[0]}`;
    // A stream was consumed by the first send and cannot go again: the renewal is for the requests that follow.
    if (isStream(config.data)) {
      await this.afterStreamRefusal(ticket, endpoint, config).catch(this.masked);
      throw this.secrets.axiosError(error);
    }
    const inUse = ticket.replay
      ? await this.afterReplayRefusal(ticket, endpoint, config)
      : await this.afterRefusal(ticket, endpoint, config).catch(this.masked);
    if (inUse === null || ejected()) throw this.secrets.axiosError(error);
    this.reports.replay((config.method ?? 'get').toUpperCase(), () => this.secrets.mask(config.url ?? ''));
    return inUse;
  }

  /**
   * A request outside `origins`, which went without the token, failed: the error goes to the caller as it is, and a
   * refusal that looks like a token's is said once per origin, since perhaps the origin should have been listed.
   */
  outside(error: unknown, config: InternalAxiosRequestConfig): never {
    if (isAxiosError(error)) {
      const origin = originOf(requestURL(config));
      if (origin !== undefined && origin !== 'null' && this.refusesToken(error, config))
        this.reports.refusedOutside(origin, this.origins.listed());
    }
    throw error;
  }

  /** isTokenRejected's verdict, where one that throws says no: the caller gets the request's own error. */
  private refusesToken(error: AxiosError, config: InternalAxiosRequestConfig): boolean {
    try {
      return this.isTokenRefusal(error, config);
    } catch {
      return false;
    }
  }

  /** A replay that carried `ticket`'s pair was accepted: a renewal cured a refusal, so renewals cure again. */
  cured(ticket: Ticket): void {
    const { account } = this.renewals;
    // Every holder hears of a cure, but only of one that changed something: most accepted replays do not.
    if (account.refusals.cured(ticket.generation) && account.shared)
      this.renewals.changeAccount(() => account.refusals.cured(ticket.generation)).catch(() => undefined);
  }

  /** An axios error leaving the plugin (a CanceledError while waiting, too) may carry a token in its config. */
  readonly masked = (error: unknown): never => {
    throw isAxiosError(error) ? this.secrets.axiosError(error) : error;
  };

  /**
   * The pair to replay a request with, after the pair it carried was refused; null when the refusal must reach the
   * caller as it is.
   */
  private async afterRefusal(
    ticket: Ticket,
    endpoint: string,
    config: InternalAxiosRequestConfig,
  ): Promise<PairInUse | null> {
    const { renewals } = this;
    // What any holder of a shared store found about refusals, read first: nothing may be awaited between the checks
    // below and the renewal, or a renewal could finish meanwhile and this one renew its fresh pair again.
    if (renewals.account.shared) await abortable(renewals.consultAccount(), config);
    if (renewals.renewal) await renewals.wait(renewals.renewal, config);
    // Sent before a logout: its refusal must not log the user back in.
    if (ticket.epoch !== renewals.epoch) return null;
    // Refused for a pair that has since been replaced (a late 401): the current pair needs no renewal.
    const newer = renewals.account.newerThan(ticket.generation);
    if (newer) return newer;
    // Renewing would cure nothing: a permission of this endpoint, or, while refusals are general, not yet again; as
    // any holder of a shared store found (consulted above).
    if (!renewals.account.refusals.mayRenewFor(endpoint)) return null;
    // A renewal failed after this request left: its late 401 shares that outcome, as it would have shared a success.
    const failed = renewals.failedRenewals;
    if (ticket.failedRenewals !== failed.count) throw failed.last;
    return renewals.wait(renewals.renew('rejected'), config);
  }

  /**
   * The pair to send a refused replay with once more: one that a renewal under way or finished since the replay left
   * brought. Never renews, so replays cannot loop: each one more needs a renewal that other requests caused. Null
   * when the replay was refused with the current pair: then renewing for `endpoint` would not help either.
   */
  private async afterReplayRefusal(
    ticket: Ticket,
    endpoint: string,
    config: InternalAxiosRequestConfig,
  ): Promise<PairInUse | null> {
    const { renewals } = this;
    // A wait that ended in an abort or a failed renewal says nothing about whether renewing cures this endpoint.
    if (renewals.renewal && !(await succeeds(renewals.wait(renewals.renewal, config)))) return null;
    const newer = renewals.account.newerThan(ticket.generation);
    if (!newer && renewals.account.current?.generation === ticket.generation)
      await renewals.changeAccount(() => renewals.account.refusals.uncured(ticket.generation, endpoint));
    return newer;
  }

  /**
   * After a refused request whose body cannot be sent again: renews as for any refusal, for the requests that follow.
   * The next such request refused on the same endpoint with the renewed pair plays the replay's part: renewing did not
   * cure that endpoint.
   */
  private async afterStreamRefusal(
    ticket: Ticket,
    endpoint: string,
    config: InternalAxiosRequestConfig,
  ): Promise<void> {
    const refusals = this.renewals.account.refusals;
    if (refusals.streamRenewedWith(endpoint) === ticket.generation) {
      await this.afterReplayRefusal(ticket, endpoint, config);
      return;
    }
    const inUse = await this.afterRefusal(ticket, endpoint, config);
    if (inUse) refusals.streamRenewed(endpoint, inUse.generation);
  }
}

/**
 * `error` as the caller will see it, its body run through the request's `transformResponse` (JSON parsed), for a
 * custom `isTokenRejected` that reads the body; axios does the same to the error the plugin lets through.
 */
function withParsedBody(error: AxiosError, config: InternalAxiosRequestConfig): AxiosError {
  const response = error.response;
  if (!response) return error;
  let data = response.data;
  try {
    const headers = AxiosHeaders.from(response.headers as AxiosHeaders).normalize(false);
    for (const transform of [config.transformResponse ?? []].flat())
      data = transform.call(config, data, headers, response.status) as unknown;
  } catch {
    data = response.data;
  }
  const view = Object.create(Object.getPrototypeOf(error) as object) as AxiosError;
  return Object.assign(view, error, { response: { ...response, data } });
}
