// The decision after a refusal, in one room: whether a refused request goes again, and with which pair (one a renewal
// brought since it left, or the one its renewal brings), or whether the refusal goes to the caller as it is. It asks the
// request's account where it stands; it never sends, and it never renews for a replay's refusal, so replays cannot loop.
import { AxiosHeaders, isAxiosError } from 'axios';
import type { AxiosError, InternalAxiosRequestConfig } from 'axios';
import type { AccountKeeper, Ticket } from '../account/keeper.js';
import type { PairInUse } from '../account/pairs.js';
import type { Reports } from '../account/reports.js';
import { DEFAULTS } from '../options/defaults.js';
import type { ResolvedOptions } from '../options/defaults.js';
import { isStream } from '../support/redact.js';
import { answeredFrom, originOf, requestURL } from '../support/url.js';
import type { OriginPolicy } from './origins.js';

/** What the decision reads: the attachment's events, its origins, its `isTokenRejected`, and whether it was ejected. */
export interface RefusalParts {
  readonly reports: Reports;
  readonly origins: OriginPolicy;
  readonly options: Pick<ResolvedOptions, 'isTokenRejected'>;
  /** After eject() a request would go out without a token: nothing goes again. */
  readonly ejected: () => boolean;
}

/** The decisions after refusals, for every request of an attachment. */
export class RefusalDecision {
  /**
   * Whether the service refused the token, judged on the answer as the caller would see it: a custom test gets the
   * body parsed; the default one reads the status only, and is spared the parsing.
   */
  private readonly isTokenRefusal: (error: AxiosError, config: InternalAxiosRequestConfig) => boolean;

  constructor(private readonly parts: RefusalParts) {
    const isTokenRejected = parts.options.isTokenRejected;
    this.isTokenRefusal =
      isTokenRejected === DEFAULTS.isTokenRejected
        ? isTokenRejected
        : (error, config) => isTokenRejected(withParsedBody(error, config));
  }

  /**
   * After `error` ended the send of `ticket`'s request: the pair to send it again with, or the refusal itself,
   * masked, thrown for the caller. A replay refused for a pair that a later renewal has replaced (tokens that expired
   * again meanwhile) goes once more with the newer one; refused with the current pair, it goes to the caller. Throws
   * at once what needs no wait.
   */
  next(error: unknown, ticket: Ticket, config: InternalAxiosRequestConfig): Promise<PairInUse> {
    const { account } = ticket;
    if (!isAxiosError(error)) throw error;
    // A refusal from elsewhere (a redirect to another origin, which got no token) is not about our token.
    const answeredBy = answeredFrom(error.request);
    if (
      this.parts.ejected() ||
      !this.isTokenRefusal(error, config) ||
      (answeredBy !== undefined && !this.parts.origins.allowsURL(answeredBy))
    )
      throw account.secrets.axiosError(error);
    // A stream was consumed by the first send and cannot go again: the renewal is for the requests that follow.
    if (isStream(config.data)) return this.afterStreamSent(error, ticket, config);
    return this.replay(error, ticket, config);
  }

  /**
   * A request outside `origins`, which went without the token, failed: the error goes to the caller as it is, and a
   * refusal that looks like a token's is said once per origin, since perhaps the origin should have been listed.
   */
  outside(error: unknown, config: InternalAxiosRequestConfig): never {
    if (isAxiosError(error)) {
      const origin = originOf(requestURL(config));
      if (origin !== undefined && origin !== 'null' && this.refusesToken(error, config))
        this.parts.reports.refusedOutside(origin, this.parts.origins.listed());
    }
    throw error;
  }

  /**
   * {@link next}'s wait. What a request holds while it waits is held once per waiting request, thousands during a slow
   * renewal. Hence this function alone suspended, with no more than it needs (the checks that need no wait stay in
   * `next`), the account's waits awaited here rather than in a function of their own (each suspended function is
   * held), a try rather than a closure to mask with, and the endpoint worked out once the wait is over.
   */
  private async replay(error: AxiosError, ticket: Ticket, config: InternalAxiosRequestConfig): Promise<PairInUse> {
    const { account } = ticket;
    // A replay refused with a pair another holder obtained says nothing of whether renewing cures the endpoint: that
    // pair may have died (expired, revoked) since its holder got it. It is renewed once, as a first refusal would be.
    let inUse: PairInUse | null;
    if (ticket.replays === 0 || (ticket.replays === 1 && ticket.taken)) {
      try {
        await account.consult(config);
        await account.waitForRenewal(config);
        inUse = await this.afterWaits(ticket, config);
      } catch (reason) {
        throw masked(account, reason);
      }
    } else inUse = await this.afterReplayRefusal(ticket, config);
    if (inUse === null || this.parts.ejected()) throw account.secrets.axiosError(error);
    account.replaying(config);
    return inUse;
  }

  /** {@link next} for a stream: the renewal for the requests that follow, then the refusal for the caller. */
  private async afterStreamSent(error: AxiosError, ticket: Ticket, config: InternalAxiosRequestConfig): Promise<never> {
    const { account } = ticket;
    try {
      const endpoint = endpointOf(config);
      // Refused again with the pair a stream's refusal on this endpoint brought: renewing did not cure it.
      if (account.streamRenewedWith(endpoint, ticket)) await this.afterReplayRefusal(ticket, config);
      else {
        await account.consult(config);
        await account.waitForRenewal(config);
        const inUse = await this.afterWaits(ticket, config);
        if (inUse) account.streamRenewed(endpoint, inUse);
      }
    } catch (reason) {
      throw masked(account, reason);
    }
    throw account.secrets.axiosError(error);
  }

  /**
   * The pair to replay a refused request with, once the waits are over, by where the account stands. Nothing may be
   * awaited between the question and the renewal, or a renewal could finish meanwhile and this one renew its fresh
   * pair again.
   */
  private afterWaits(ticket: Ticket, config: InternalAxiosRequestConfig): PairInUse | null | Promise<PairInUse> {
    const { account } = ticket;
    const standing = account.standing(ticket, endpointOf(config));
    switch (standing.is) {
      case 'logged-out':
      case 'no-cure':
        return null;
      case 'newer':
        return standing.pair;
      case 'failed':
        throw standing.error;
      case 'renew':
        return account.renewForRefusal(ticket, config);
    }
  }

  /**
   * The pair to send a refused replay with once more: one that a renewal under way or finished since the replay left
   * brought. Never renews, so replays cannot loop: each one more needs a renewal that other requests caused. Null
   * when the replay was refused with the current pair: then renewing for its endpoint would not help either.
   */
  private async afterReplayRefusal(ticket: Ticket, config: InternalAxiosRequestConfig): Promise<PairInUse | null> {
    const { account } = ticket;
    // A wait that ended in an abort or a failed renewal says nothing about whether renewing cures this endpoint.
    if (!(await account.waitForRenewal(config).then(succeeded, failed))) return null;
    const newer = account.renewedSince(ticket);
    if (!newer) await account.uncured(ticket, endpointOf(config));
    return newer;
  }

  /** isTokenRejected's verdict, where one that throws says no: the caller gets the request's own error. */
  private refusesToken(error: AxiosError, config: InternalAxiosRequestConfig): boolean {
    try {
      return this.isTokenRefusal(error, config);
    } catch {
      return false;
    }
  }
}

const succeeded = (): boolean => true;
const failed = (): boolean => false;

/** What the account's refusals are remembered by: the method and the URL without its query, `GET /orders`. */
function endpointOf(config: InternalAxiosRequestConfig): string {
  return `${(config.method ?? 'get').toUpperCase()} ${(requestURL(config) ?? '').split(/[?#]/)[0]}`;
}

/** A failure of the wait after a refusal, as the caller gets it: an axios error of the app's request, masked. */
function masked(account: AccountKeeper, reason: unknown): unknown {
  return isAxiosError(reason) ? account.secrets.axiosError(reason) : reason;
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
