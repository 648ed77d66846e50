// The calls a renewal makes in its turn: a login or a token call, each attempt passing the account's gates (and the
// lease of the turn's lock) as it leaves, each reported, and the pair it brings kept and written to the store.
import { TokenAuthError } from '../../contract/errors.js';
import type { Credentials, ParsedTokens } from '../../contract/calls.js';
import type { RenewalReason, TokenCallReport } from '../../contract/handle.js';
import type { TokenPair } from '../../contract/store.js';
import { credentialsFor } from '../../token-calls/credentials.js';
import { pairFromAnswer } from '../../token-calls/parse.js';
import type { Answer, CallGate, TokenClient } from '../../token-calls/client.js';
import type { Binding } from '../../token-calls/scheme.js';
import type { ResolvedOptions } from '../../options/defaults.js';
import type { SecretList } from '../../support/redact.js';
import type { GuardedCall, Guards } from '../guards/guards.js';
import type { StoreLink, Turn } from '../link.js';
import type { PairInUse, Pairs } from '../pairs.js';
import type { AccountReports } from '../reports.js';
import { decide } from './decide.js';

/** What a turn is for: `auto` follows the client rule; `login` and `refresh` are the user's explicit calls. */
export type Mode = 'auto' | 'login' | 'refresh';

/** What a renewal runs under in its turn: why and for what, the pair it replaces, its turn, and who waits for it. */
export interface TurnScope {
  readonly reason: RenewalReason;
  readonly mode: Mode;
  readonly replacing: TokenPair | undefined;
  /** The logout epoch it started in. */
  readonly epoch: number;
  readonly turn: Turn;
  /** Credentials `auth.login()` was given for this renewal alone: a sign-in a person typed. */
  readonly credentials?: Credentials | undefined;
  /** How many callers waited for it so far, which its calls report. */
  readonly waiting: () => number;
}

/** Why a renewal under way ended: a logout came meanwhile, and what it brought is dropped. */
export function loggedOutMeanwhile(): TokenAuthError {
  return new TokenAuthError(
    'LOGGED_OUT',
    '`auth.logout()` was called while this request waited for tokens; the tokens obtained meanwhile were dropped.',
  );
}

/** What the calls of a renewal need of the account: its parts, built before them. */
export interface CallParts {
  readonly name: string | undefined;
  readonly options: ResolvedOptions;
  readonly client: TokenClient;
  readonly pairs: Pairs;
  readonly guards: Guards;
  readonly link: StoreLink;
  readonly reports: AccountReports;
  readonly secrets: SecretList;
}

/**
 * What each attempt of a call passes as it leaves, counted: the lease of the turn's lock, checked first (a holder that
 * thawed after its lease lapsed sends nothing), then the account's gates (the budget counts it).
 */
class Attempts implements CallGate {
  count = 0;

  constructor(
    private readonly call: GuardedCall,
    private readonly turn: Turn,
    private readonly guards: Guards,
  ) {}

  pass(): void {
    this.turn.confirmLease();
    this.guards.pass(this.call);
    this.count += 1;
  }
}

/** The calls of the renewals of one account. */
export class RenewalCalls {
  constructor(private readonly parts: CallParts) {}

  async logIn(reason: RenewalReason, scope: TurnScope): Promise<PairInUse> {
    const { options, guards, client, reports, secrets, name } = this.parts;
    // Credentials a person just typed: neither the budget nor the login pause is theirs (see TokenAuth.login).
    const call: GuardedCall = { operation: 'login', mode: scope.mode, typed: scope.credentials !== undefined };
    const attempts = new Attempts(call, scope.turn, guards);
    // The login pause says no before the credentials are even asked for (the budget, as each attempt leaves).
    if (decide({ at: 'login', paused: guards.paused(call) !== undefined }) === 'fail-paused')
      throw guards.paused(call)!;
    let credentials: Credentials;
    const asked = options.clock();
    try {
      credentials = await credentialsFor(options.credentials, scope.credentials, {
        account: name,
        basic: options.loginRequest === undefined,
        redact: (error) => secrets.copy(error),
      });
    } catch (error) {
      throw reports.failure('login', error, this.report(reason, attempts, undefined, asked, scope));
    }
    const started = options.clock();
    // What the scheme binds the pair to, made for each login.
    const binding = await options.scheme.bind();
    const answer = await this.call(call, attempts, { reason, started, scope }, () =>
      client.login(credentials, { account: name, gate: attempts, binding }),
    );
    // A login that succeeded counts, even if a logout since drops what it brought.
    reports.login(this.report(reason, attempts, answer.status, started, scope));
    return this.keep(bound(this.pairFrom(answer.tokens, undefined), binding), scope.turn, scope.epoch);
  }

  /** A token call with the refresh token of `from` (one the scheme can use: see TokenScheme.usable). */
  async refresh(from: TokenPair | undefined, scope: TurnScope): Promise<PairInUse> {
    const { options, client, reports, guards, name } = this.parts;
    const refreshToken = from?.refresh;
    const binding = from && options.scheme.bindingOf(from);
    const call: GuardedCall = { operation: 'refresh', mode: scope.mode, typed: false, refreshToken };
    const attempts = new Attempts(call, scope.turn, guards);
    const started = options.clock();
    const { reason } = scope;
    const answer = await this.call(call, attempts, { reason, started, scope }, () =>
      client.refresh(refreshToken, { account: name, gate: attempts, binding }),
    );
    const { refresh } = answer.tokens;
    const rotated = refresh !== undefined && refresh !== refreshToken && refreshToken !== undefined;
    reports.refresh(this.report(reason, attempts, answer.status, started, scope), rotated);
    return this.keep(bound(this.pairFrom(answer.tokens, refreshToken), binding), scope.turn, scope.epoch);
  }

  /**
   * Uses a pair this holder obtained, and has it written to the store off the waiting requests' path; one obtained
   * while the store's lock could not be taken stays this holder's alone: written without the lock, it could replace
   * the pair of the holder that has it.
   */
  keep(pair: TokenPair, turn: Turn, epoch: number): PairInUse {
    const { pairs } = this.parts;
    if (epoch !== pairs.epoch) throw loggedOutMeanwhile();
    const alone = turn.lockMissed;
    const inUse = pairs.use(pair, false, alone);
    if (!alone) turn.write(pair, () => epoch === pairs.epoch);
    return inUse;
  }

  /** Uses a pair another holder wrote to the store, unless logout() came in between. */
  take(pair: TokenPair, epoch: number): PairInUse {
    const { pairs } = this.parts;
    if (epoch !== pairs.epoch) throw loggedOutMeanwhile();
    const current = pairs.current;
    return pair.access === current?.pair.access ? current : pairs.use(pair, true);
  }

  /** The pair a token answer (or a `setTokens` argument) stands for, its expiry read as an answer's. */
  pairFrom(parsed: ParsedTokens, previousRefresh: string | undefined): TokenPair {
    const { clock, accessTokenLifetimeMs: lifetimeMs, marginFor } = this.parts.options;
    return pairFromAnswer(parsed, previousRefresh, { now: clock(), lifetimeMs, marginFor });
  }

  /** Makes `call` with `send`, and tells the gates how it ended; a failure is reported, and thrown. */
  private async call(
    call: GuardedCall,
    attempts: Attempts,
    { reason, started, scope }: { reason: RenewalReason; started: number; scope: TurnScope },
    send: () => Promise<Answer>,
  ): Promise<Answer> {
    const { guards, reports } = this.parts;
    try {
      const answer = await send();
      guards.learn(call);
      return answer;
    } catch (error) {
      const refused = error instanceof TokenAuthError ? error : undefined;
      if (refused) guards.learn(call, refused);
      throw reports.failure(call.operation, error, this.report(reason, attempts, refused?.status, started, scope));
    }
  }

  /** What a call of the renewal in `scope` did, `started` by the clock, for its event. */
  private report(
    reason: RenewalReason,
    attempts: Attempts,
    status: number | undefined,
    started: number,
    scope: TurnScope,
  ): TokenCallReport {
    const durationMs = this.parts.options.clock() - started;
    return { reason, durationMs, attempts: attempts.count, status, waiting: scope.waiting() };
  }
}

/** `pair`, with what it is bound to. */
function bound(pair: TokenPair, binding: Binding | undefined): TokenPair {
  return binding ? { ...pair, ...binding } : pair;
}
