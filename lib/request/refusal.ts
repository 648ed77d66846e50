import { AxiosHeaders, isAxiosError } from 'axios';
import type { AxiosAdapter, AxiosError, AxiosResponse, InternalAxiosRequestConfig } from 'axios';
import { succeeds } from '../support/abort.js';
import type { Ticket } from '../account/keeper.js';
import type { PairInUse } from '../account/pairs.js';
import { DEFAULTS } from '../options/defaults.js';
import type { ResolvedOptions } from '../options/defaults.js';
import { answeredFrom, originOf, requestURL } from '../support/url.js';
import type { OriginPolicy } from './origins.js';
import { isStream } from '../support/redact.js';
import type { Reports } from '../account/reports.js';

/**
 * The replays of refused requests, in one room: the decision after a refusal (a late one, one renewing did not cure,
 * a stream that cannot go again, a replay refused again), made by asking the request's account, and what the
 * account's memory of refusals is told (uncured, cured).
 */
export class Replays {
  /**
   * Whether the service refused the token, judged on the answer as the caller would see it: a custom test gets the
   * body parsed; the default one reads the status only, and is spared the parsing.
   */
  private readonly isTokenRefusal: (error: AxiosError, config: InternalAxiosRequestConfig) => boolean;

  /**
   * `ejected`: after eject() a request would go out without a token. `sendAgain` sends a refused request once more,
   * one function for every request, so that a waiting request holds no step and no closure of its own for it.
   */
  constructor(
    private readonly reports: Reports,
    private readonly origins: OriginPolicy,
    options: Pick<ResolvedOptions, 'isTokenRejected'>,
    private readonly ejected: () => boolean,
    private readonly sendAgain: SendAgain,
  ) {
    const isTokenRejected = options.isTokenRejected;
    this.isTokenRefusal =
      isTokenRejected === DEFAULTS.isTokenRejected
        ? isTokenRejected
        : (error, config) => isTokenRejected(withParsedBody(error, config));
  }

  /**
   * After a refusal: the request sent once more through `via` (its adapter) with the pair to send it with, or the
   * refusal itself, masked, for the caller. A replay refused for a pair that a later renewal has replaced (tokens that
   * expired again meanwhile) goes once more with the newer one; refused with the current pair, it goes to the caller.
   * Throws at once what needs no wait.
   */
  recover(
    error: unknown,
    ticket: Ticket,
    config: InternalAxiosRequestConfig,
    via: AxiosAdapter,
  ): Promise<AxiosResponse> {
    const { account } = ticket;
    if (!isAxiosError(error)) throw error;
    // A refusal from elsewhere (a redirect to another origin, which got no token) is not about our token.
    const answeredBy = answeredFrom(error.request);
    if (
      this.ejected() ||
      !this.isTokenRefusal(error, config) ||
      (answeredBy !== undefined && !this.origins.allowsURL(answeredBy))
    )
      throw account.secrets.axiosError(error);
    // A stream was consumed by the first send and cannot go again: the renewal is for the requests that follow.
    if (isStream(config.data)) return this.afterStreamSent(error, ticket, config);
    return this.replay(error, ticket, config, via);
  }

  /**
   * {@link recover}'s wait, and the send after it. What a request holds while it waits is held once per waiting
   * request, thousands during a slow renewal. Hence this function alone suspended, with no more than it needs (the
   * checks that need no wait stay in `recover`), afterRefusal's waits awaited here rather than in a function of its
   * own (each suspended function is held), a try rather than a closure to mask with (a closure here would hold this
   * function's variables in a context of their own), and the endpoint worked out once the wait is over.
   */
  private async replay(
    error: AxiosError,
    ticket: Ticket,
    config: InternalAxiosRequestConfig,
    via: AxiosAdapter,
  ): Promise<AxiosResponse> {
    // A replay refused with a pair another holder obtained says nothing of whether renewing cures the endpoint: that
    // pair may have died (expired, revoked) since its holder got it. It is renewed once, as a first refusal would be.
    let inUse: PairInUse | null;
    if (ticket.replays === 0 || (ticket.replays === 1 && ticket.taken)) {
      try {
        await ticket.account.consult(config);
        await ticket.account.waitForRenewal(config);
        inUse = await this.afterWaits(ticket, config);
      } catch (reason) {
        throw masked(ticket, reason);
      }
    } else inUse = await this.afterReplayRefusal(ticket, config);
    if (inUse === null || this.ejected()) throw ticket.account.secrets.axiosError(error);
    ticket.account.replaying(config);
    return this.sendAgain(via, config, ticket, inUse);
  }

  /** {@link recover} for a stream: the renewal for the requests that follow, then the refusal for the caller. */
  private async afterStreamSent(error: AxiosError, ticket: Ticket, config: InternalAxiosRequestConfig): Promise<never> {
    try {
      await this.afterStreamRefusal(ticket, config);
    } catch (reason) {
      throw masked(ticket, reason);
    }
    throw ticket.account.secrets.axiosError(error);
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

  /**
   * The pair to replay a request with, after the pair it carried was refused; null when the refusal must reach the
   * caller as it is.
   */
  private async afterRefusal(ticket: Ticket, config: InternalAxiosRequestConfig): Promise<PairInUse | null> {
    // What any holder of a shared store found about refusals, read first.
    await ticket.account.consult(config);
    await ticket.account.waitForRenewal(config);
    return this.afterWaits(ticket, config);
  }

  /**
   * {@link afterRefusal} once its waits are over. Nothing may be awaited between these checks and the renewal, or a
   * renewal could finish meanwhile and this one renew its fresh pair again.
   */
  private afterWaits(ticket: Ticket, config: InternalAxiosRequestConfig): PairInUse | null | Promise<PairInUse> {
    const { account } = ticket;
    // Sent before a logout: its refusal must not log the user back in.
    if (account.loggedOutSince(ticket)) return null;
    // Refused for a pair that has since been replaced (a late 401): the current pair needs no renewal.
    const newer = account.renewedSince(ticket);
    if (newer) return newer;
    // Renewing would cure nothing: a permission of this endpoint, or, while refusals are general, not yet again; as
    // any holder of a shared store found (consulted above).
    if (!account.mayRenewFor(endpointOf(config))) return null;
    // A renewal failed after this request left: its late 401 shares that outcome, as it would have shared a success.
    const failed = account.failedSince(ticket);
    if (failed) throw failed.error;
    return account.renewForRefusal(config);
  }

  /**
   * The pair to send a refused replay with once more: one that a renewal under way or finished since the replay left
   * brought. Never renews, so replays cannot loop: each one more needs a renewal that other requests caused. Null
   * when the replay was refused with the current pair: then renewing for `endpoint` would not help either.
   */
  private async afterReplayRefusal(ticket: Ticket, config: InternalAxiosRequestConfig): Promise<PairInUse | null> {
    const { account } = ticket;
    // A wait that ended in an abort or a failed renewal says nothing about whether renewing cures this endpoint.
    if (!(await succeeds(account.waitForRenewal(config)))) return null;
    const newer = account.renewedSince(ticket);
    if (!newer) await account.uncured(ticket, endpointOf(config));
    return newer;
  }

  /**
   * After a refused request whose body cannot be sent again: renews as for any refusal, for the requests that follow.
   * The next such request refused on the same endpoint with the renewed pair plays the replay's part: renewing did not
   * cure that endpoint.
   */
  private async afterStreamRefusal(ticket: Ticket, config: InternalAxiosRequestConfig): Promise<void> {
    const { account } = ticket;
    const endpoint = endpointOf(config);
    if (account.streamRenewedWith(endpoint) === ticket.generation) {
      await this.afterReplayRefusal(ticket, config);
      return;
    }
    const inUse = await this.afterRefusal(ticket, config);
    if (inUse) account.streamRenewed(endpoint, inUse);
  }
}

/**
 * Sends a refused request again through `via` (its adapter) under `ticket`, whose account's pair `inUse` it goes with
 * now: one function for every request (see {@link Replays.recover}).
 */
export type SendAgain = (
  via: AxiosAdapter,
  config: InternalAxiosRequestConfig,
  ticket: Ticket,
  inUse: PairInUse,
) => Promise<AxiosResponse>;

/** What the account's refusals are remembered by: the method and the URL without its query, `GET /orders`. */
function endpointOf(config: InternalAxiosRequestConfig): string {
  return `${(config.method ?? 'get').toUpperCase()} ${(requestURL(config) ?? '').split(/[?#]/)[0]}`;
}

/** A failure of the wait after a refusal, as the caller gets it: an axios error of the app's request, masked. */
function masked(ticket: Ticket, reason: unknown): unknown {
  return isAxiosError(reason) ? ticket.account.secrets.axiosError(reason) : reason;
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
