// Type tests of `auth.on`: the event names and the payload each listener receives.
import axios from 'axios';
import { expectTypeOf } from 'expect-type';
import { attachTokenAuth } from 'axios-token-keeper';
import type {
  RenewalReason,
  TokenAuthError,
  TokenAuthErrorCode,
  TokenAuthEvents,
  TokenCallReport,
} from 'axios-token-keeper';

expectTypeOf<keyof TokenAuthEvents>().toEqualTypeOf<
  'login' | 'refresh' | 'load' | 'replay' | 'failure' | 'logout' | 'warning'
>();
expectTypeOf<RenewalReason>().toEqualTypeOf<
  'no-token' | 'expired' | 'rejected' | 'refresh-rejected' | 'store-lost' | 'manual'
>();

/** What a login or token call's events say of it. */
type Call = {
  reason: RenewalReason;
  durationMs: number;
  attempts: number;
  status: number | undefined;
  waiting: number;
};
// Every event of an account names it, but the default account's.
type Named = { account?: string };
expectTypeOf<TokenAuthEvents['login']>().toEqualTypeOf<Call & Named>();
expectTypeOf<TokenAuthEvents['login']>().toEqualTypeOf<TokenCallReport & Named>();
expectTypeOf<TokenAuthEvents['refresh']>().toEqualTypeOf<Call & Named & { rotated: boolean }>();
expectTypeOf<TokenAuthEvents['load']>().toEqualTypeOf<Named & { expiresAt: number | undefined }>();
expectTypeOf<TokenAuthEvents['replay']>().toEqualTypeOf<Named & { method: string; url: string }>();
expectTypeOf<TokenAuthEvents['failure']>().toEqualTypeOf<
  | (Call & Named & { operation: 'login' | 'refresh' | 'logout'; code: TokenAuthErrorCode; error: TokenAuthError })
  | (Named & { operation: 'store'; code: TokenAuthErrorCode; error: TokenAuthError })
>();
expectTypeOf<TokenAuthEvents['logout']>().toEqualTypeOf<Named>();
expectTypeOf<TokenAuthEvents['warning']>().toEqualTypeOf<
  | { code: 'ORIGIN_NOT_IN_ORIGINS'; message: string; origin: string }
  | (Named & { code: 'STORE_UNAVAILABLE' | 'STORE_LOCK_MISSED'; message: string })
>();

export function listen(): void {
  const auth = attachTokenAuth(axios.create(), { credentials: { username: 'jane', password: 'pw' } });

  // The listener's payload is inferred from the event name, with no annotation.
  const stop = auth.on('login', (event) => expectTypeOf(event).toEqualTypeOf<TokenAuthEvents['login']>());
  expectTypeOf(stop).toEqualTypeOf<() => void>();
  auth.on('refresh', (event) => expectTypeOf(event.rotated).toEqualTypeOf<boolean>());
  auth.on('load', (event) => expectTypeOf(event.expiresAt).toEqualTypeOf<number | undefined>());
  auth.on('replay', (event) => expectTypeOf(event).toEqualTypeOf<Named & { method: string; url: string }>());
  auth.on('failure', (event) => {
    expectTypeOf(event.code).toEqualTypeOf<TokenAuthErrorCode>();
    expectTypeOf(event.error).toEqualTypeOf<TokenAuthError>();
    // What the call did is there once `operation` says it was a call, not the store.
    if (event.operation !== 'store') expectTypeOf(event.attempts).toEqualTypeOf<number>();
    // @ts-expect-error a store failure made no login or token call
    void event.attempts;
  });
  auth.on('logout', (event) => expectTypeOf(event.account).toEqualTypeOf<string | undefined>());

  // @ts-expect-error no such event: a misspelt name is caught, not silently never called
  auth.on('logins', () => undefined);
  auth.on('login', (event) => {
    // @ts-expect-error a login brings no `rotated`; only a refresh does
    void event.rotated;
  });
  auth.on('replay', (event) => {
    // @ts-expect-error a replay payload carries no headers (they would hold the token)
    void event.headers;
  });
  // @ts-expect-error the listener of one event cannot take another event's payload
  auth.on('login', (event: TokenAuthEvents['refresh']) => void event);
  // @ts-expect-error `operation` is a closed set
  auth.on('failure', (event) => event.operation === 'eject');
}
