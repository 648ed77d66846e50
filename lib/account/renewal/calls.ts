// The calls a renewal makes in its turn: a login or a token call, each passing the account's guards as each attempt
// leaves (and the lease of the turn's lock), each reported, and the pair it brings kept and written to the store.
import { TokenAuthError } from '../../contract/errors.js';
import type { Credentials, ParsedTokens } from '../../contract/calls.js';
import type { RenewalReason, TokenCallReport } from '../../contract/handle.js';
import type { TokenPair } from '../../contract/store.js';
import type { DpopKey } from '../../contract/dpop.js';
import { credentialsFor } from '../../token-calls/credentials.js';
import { pairFromAnswer } from '../../token-calls/parse.js';
import type { CallGate, CallOutcome } from '../../token-calls/client.js';
import type { GuardedCall } from '../guards/guards.js';
import type { PairInUse } from '../pairs.js';
import type { StoreTurn } from '../store/turn.js';
import type { ResolvedOptions } from '../../options/defaults.js';
import type { SecretList } from '../../support/redact.js';
import type { TokenClient } from '../../token-calls/client.js';
import type { Guards } from '../guards/guards.js';
import type { Pairs } from '../pairs.js';
import type { AccountReports } from '../reports.js';
import type { StoreLink } from '../store/link.js';

/** What a turn is for: `auto` follows the client rule; `login` and `refresh` are the user's explicit calls. */
export type Mode = 'auto' | 'login' | 'refresh';

/** What a renewal runs under in its turn: why and for what, the pair it replaces, its turn, and who waits for it. */
export interface TurnScope {
  readonly reason: RenewalReason;
  readonly mode: Mode;
  readonly replacing: TokenPair | undefined;
  /** The logout epoch it started in. */
  readonly epoch: number;
  readonly turn: StoreTurn;
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

/** What the work in a turn needs of the account: its parts, built before it. */
export interface TurnWorkParts {
  readonly name: string | undefined;
  readonly options: ResolvedOptions;
  readonly client: TokenClient;
  readonly pairs: Pairs;
  readonly guards: Guards;
  readonly link: StoreLink;
  readonly reports: AccountReports;
  readonly secrets: SecretList;
}

/** The calls of the renewals of one account. */
export class RenewalCalls {
  constructor(private readonly parts: TurnWorkParts) {}

  async logIn(reason: RenewalReason, scope: TurnScope): Promise<PairInUse> {
    const { options, guards, client, reports, secrets, name } = this.parts;
    // Credentials a person just typed: neither the budget nor the login pause is theirs (see TokenAuth.login).
    const call: GuardedCall = { operation: 'login', mode: scope.mode, typed: scope.credentials !== undefined };
    // The login pause says no before the credentials are even asked for (the budget, as each attempt leaves).
    const paused = guards.pause.refuse(call);
    if (paused) throw paused;
    const outcome: CallOutcome = { attempts: 0, status: undefined };
    let credentials: Credentials;
    const asked = options.clock();
    try {
      credentials = await credentialsFor(options.credentials, scope.credentials, {
        account: name,
        basic: options.loginRequest === undefined,
        redact: (error) => secrets.copy(error),
      });
    } catch (error) {
      throw reports.failure('login', error, this.report(reason, outcome, asked, scope));
    }
    const started = options.clock();
    // With `dpop`, a new key for each login: the pair it brings is bound to it.
    const dpopKey = await options.dpop?.newKey(this.parts.link.exportsDpopKeys);
    const parsed = await this.call(call, { reason, outcome, started, scope }, () =>
      client.login(credentials, { account: name, gate: this.gate(call, scope), outcome, dpopKey }),
    );
    // A login that succeeded counts, even if a logout since drops what it brought.
    reports.login(this.report(reason, outcome, started, scope));
    return this.keep(withKey(this.pairFrom(parsed, undefined), dpopKey), scope.turn, scope.epoch);
  }

  /**
   * A token call with the refresh token of `from`. With `dpop`, a pair without its key logs in instead: a refresh token
   * bound to a key goes only with that key's proof.
   */
  async refresh(from: Pick<TokenPair, 'refresh' | 'dpopKey'> | undefined, scope: TurnScope): Promise<PairInUse> {
    const { options, client, reports, name } = this.parts;
    const { refresh: refreshToken, dpopKey } = from ?? {};
    if (options.dpop && !dpopKey) return this.logIn(scope.reason, scope);
    const call: GuardedCall = { operation: 'refresh', mode: scope.mode, typed: false, refreshToken };
    const outcome: CallOutcome = { attempts: 0, status: undefined };
    const started = options.clock();
    const { reason } = scope;
    const parsed = await this.call(call, { reason, outcome, started, scope }, () =>
      client.refresh(refreshToken, { account: name, gate: this.gate(call, scope), outcome, dpopKey }),
    );
    const rotated = parsed.refresh !== undefined && parsed.refresh !== refreshToken && refreshToken !== undefined;
    reports.refresh(this.report(reason, outcome, started, scope), rotated);
    return this.keep(withKey(this.pairFrom(parsed, refreshToken), dpopKey), scope.turn, scope.epoch);
  }

  /** Makes `call` with `send`, and tells the guards how it ended; a failure is reported, and thrown. */
  private async call(
    call: GuardedCall,
    {
      reason,
      outcome,
      started,
      scope,
    }: { reason: RenewalReason; outcome: CallOutcome; started: number; scope: TurnScope },
    send: () => Promise<ParsedTokens>,
  ): Promise<ParsedTokens> {
    const { guards, reports } = this.parts;
    try {
      const parsed = await send();
      guards.learn(call);
      return parsed;
    } catch (error) {
      if (error instanceof TokenAuthError) guards.learn(call, error);
      throw reports.failure(call.operation, error, this.report(reason, outcome, started, scope));
    }
  }

  /**
   * What each attempt of `call` passes as it leaves: the lease of the turn's lock, checked first (a holder that thawed
   * after its lease lapsed sends nothing), then the account's guards (the budget counts it).
   */
  private gate(call: GuardedCall, { turn }: TurnScope): CallGate {
    const { guards } = this.parts;
    return {
      pass() {
        turn.confirmLease();
        guards.pass(call);
      },
    };
  }

  /** What a call of the renewal in `scope` did, `started` by the clock, for its event. */
  private report(reason: RenewalReason, outcome: CallOutcome, started: number, scope: TurnScope): TokenCallReport {
    const { attempts, status } = outcome;
    return { reason, durationMs: this.parts.options.clock() - started, attempts, status, waiting: scope.waiting() };
  }

  /**
   * Uses a pair this holder obtained, and has it written to the store off the waiting requests' path; one obtained
   * while the store's lock could not be taken stays this holder's alone: written without the lock, it could replace
   * the pair of the holder that has it.
   */
  keep(pair: TokenPair, turn: StoreTurn, epoch: number): PairInUse {
    const { pairs, link } = this.parts;
    if (epoch !== pairs.epoch) throw loggedOutMeanwhile();
    const alone = turn.lockMissed;
    const inUse = pairs.use(pair, false, alone);
    if (!alone) link.write(turn, pair, () => epoch === pairs.epoch);
    return inUse;
  }

  /** The pair a token answer (or a `setTokens` argument) stands for, its expiry read as an answer's. */
  pairFrom(parsed: ParsedTokens, previousRefresh: string | undefined): TokenPair {
    const { clock, accessTokenLifetimeMs: lifetimeMs, marginFor } = this.parts.options;
    return pairFromAnswer(parsed, previousRefresh, { now: clock(), lifetimeMs, marginFor });
  }
}

/** `pair`, bound to `dpopKey` when there is one. */
function withKey(pair: TokenPair, dpopKey: DpopKey | undefined): TokenPair {
  return dpopKey ? { ...pair, dpopKey } : pair;
}
