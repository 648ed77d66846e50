// The members of the handle that act on one account (`auth.login()`, `auth.logout()`, `auth.getState()`, …), over the
// account's parts: `auth` has them for the default account, `auth.account(name)` for another.
import { isTokenAuthError, TokenAuthError } from '../contract/errors.js';
import type { Credentials, ParsedTokens } from '../contract/calls.js';
import type { TokenAuthAccount, TokenAuthState, TokenAuthStats } from '../contract/handle.js';
import type { TokenPair } from '../contract/store.js';
import type { ResolvedOptions } from '../options/defaults.js';
import type { CallGate, TokenClient } from '../token-calls/client.js';
import type { Guards } from './guards/guards.js';
import type { StoreLink } from './link.js';
import type { Pairs } from './pairs.js';
import type { RenewalMachine } from './renewal/machine.js';
import type { AccountReports } from './reports.js';
import type { SignInState } from './sign-in-state.js';

/** The parts of the account the members act through. */
export interface MemberParts {
  readonly name: string | undefined;
  readonly options: Pick<ResolvedOptions, 'clock' | 'scheme'>;
  readonly client: TokenClient;
  readonly pairs: Pairs;
  readonly guards: Guards;
  readonly link: StoreLink;
  readonly signIn: SignInState;
  readonly renewals: RenewalMachine;
  readonly reports: AccountReports;
}

const ignore = (): void => {};

/** What `auth` (or `auth.account(name)`) does for one account, but `accessToken()`: the keeper's, as a request's. */
export class AccountMembers implements Omit<TokenAuthAccount, 'accessToken'> {
  constructor(private readonly parts: MemberParts) {}

  async getTokens(): Promise<TokenPair | null> {
    const { link, pairs } = this.parts;
    await link.load();
    return pairs.current && { ...pairs.current.pair };
  }

  async login(credentials?: Credentials): Promise<void> {
    const { renewals, guards, link } = this.parts;
    // Without a renewal to wait for, it starts at once: `getState()` says `signing-in` as soon as this returns.
    if (renewals.renewal) await renewals.idle();
    if (credentials) guards.forgetRefusals();
    await renewals.wait(renewals.renew('manual', 'login', credentials));
    await link.settled();
  }

  /** Uses a pair obtained elsewhere, and writes it to the store under its lock, as a renewal would. */
  async setTokens(tokens: ParsedTokens | TokenPair): Promise<void> {
    if (typeof tokens?.access !== 'string' || tokens.access === '')
      throw new TypeError('auth.setTokens: pass { access, refresh?, expiresIn? } with a non-empty `access` token.');
    const { renewals, link, pairs, guards, options } = this.parts;
    options.scheme.checkTokens(tokens);
    const { calls } = renewals;
    await renewals.idle();
    const turn = await link.turn();
    try {
      const { expiresAt } = tokens as TokenPair;
      const pair: TokenPair = {
        ...(expiresAt === undefined
          ? calls.pairFrom(tokens, undefined)
          : { ...calls.pairFrom({ access: tokens.access }, tokens.refresh), expiresAt }),
        ...options.scheme.bindingOf(tokens),
      };
      await turn.openRecord();
      try {
        guards.cookieCleared();
        calls.keep(pair, turn, pairs.epoch);
      } finally {
        turn.closeRecord();
      }
    } finally {
      await turn.end();
    }
  }

  async refresh(): Promise<void> {
    const { renewals, link } = this.parts;
    // As login(): a restore at start-up is `signing-in` before the first render, with no flash of a sign-in form.
    if (renewals.renewal) await renewals.idle();
    await renewals.wait(renewals.renew('manual', 'refresh'));
    await link.settled();
  }

  async logout(): Promise<void> {
    const { pairs, guards, renewals, signIn, link, reports } = this.parts;
    const held = pairs.current?.pair ?? null;
    // Signed out here, and (in the record) for every holder; the next login may be another account, whose refusals
    // are its own: every holder forgets them.
    const markSignedOut = (): void => {
      pairs.drop();
      guards.signOut();
    };
    pairs.signOut();
    markSignedOut();
    renewals.wake();
    signIn.failed(undefined);
    // Under the store's lock: a renewal that another holder (tab, process) is running ends first, so that its pair
    // cannot land after the logout and log every holder back in. This holder's own renewal ends with LOGGED_OUT; the
    // turn's clear comes after the writes of the turns before it.
    const turn = await link.turn();
    await turn.openRecord();
    try {
      markSignedOut();
    } finally {
      turn.closeRecord();
    }
    await turn.clear();
    await turn.end();
    reports.logout();
    await this.tellLogout(held);
  }

  /** Resolves once the renewal under way, if any, has ended, and the last renewal's writes are done. */
  async flush(): Promise<void> {
    await this.parts.renewals.idle();
    await this.parts.link.settled();
  }

  stats(): TokenAuthStats {
    return { ...this.parts.reports.counts, budget: this.parts.guards.budgetLeft() };
  }

  /** Where the sign-in stands; the first call reads the store, as a UI's first render needs. */
  getState(): TokenAuthState {
    const { link, signIn } = this.parts;
    if (!link.loaded) link.load().then(() => signIn.update(), ignore);
    return signIn.get();
  }

  subscribe(listener: () => void): () => void {
    return this.parts.signIn.subscribe(listener);
  }

  /** Tells the server of the logout through `logoutRequest`, once; a failure is reported and thrown, after it. */
  private async tellLogout(pair: TokenPair | null): Promise<void> {
    const { client, name, options, reports } = this.parts;
    const attempts: CallGate & { count: number } = {
      count: 0,
      pass() {
        this.count += 1;
      },
    };
    const started = options.clock();
    try {
      await client.logout(pair, { account: name, gate: attempts });
    } catch (error) {
      const status = isTokenAuthError(error) ? error.status : undefined;
      const call = {
        reason: 'manual' as const,
        waiting: 0,
        durationMs: options.clock() - started,
        attempts: attempts.count,
        status,
      };
      const told = isTokenAuthError(error)
        ? new TokenAuthError(
            error.code,
            `${error.message} The tokens were dropped here, but the server may still hold the session (a cookie, the ` +
              'refresh token): call `auth.logout()` again to tell it.',
            { cause: error.cause, ...(error.status === undefined ? {} : { status: error.status }) },
          )
        : error;
      throw reports.failure('logout', told, call);
    }
  }
}
