// A React app: one axios instance with the plugin for the whole app. The login form hands over the password for one
// login only; after that the plugin keeps the tokens, and the components learn of logins and failures from events.
// A module for your app's bundle, not a script; to try it locally, point it at `npm run emulator -- --cors`.
import axios from 'axios';
import { useEffect, useState } from 'react';
import type { FormEvent, ReactElement } from 'react';
import { attachTokenAuth } from 'axios-token-keeper';
import type { TokenAuthErrorCode } from 'axios-token-keeper';
import { BrowserTokenStore } from 'axios-token-keeper/browser-store';

export const api = axios.create({ baseURL: 'https://api.example.com' });
// Every tab of the app shares the pair: one login, one renewal per expiry, and a logout in one tab signs out all.
// The store needs the browser: with server rendering, load this module on the client only.
const store = new BrowserTokenStore({ key: 'orders-api' });
// No credentials kept: the form hands them to one login. When the refresh token is refused later, the plugin has
// none, fails with NO_CREDENTIALS, and the form shows again.
export const auth = attachTokenAuth(api, { store });

export const logIn = (username: string, password: string): Promise<void> => auth.login({ username, password });

/** Whether the app holds tokens, and the code of the last failed login, kept up to date by the plugin's events. */
export function useTokenAuth(): { signedIn: boolean; problem: TokenAuthErrorCode | null } {
  const [signedIn, setSignedIn] = useState(false);
  const [problem, setProblem] = useState<TokenAuthErrorCode | null>(null);
  useEffect(() => {
    let mounted = true;
    // A pair may already be in the store: one left from before, or another holder's.
    void auth.getTokens().then((pair) => mounted && setSignedIn(pair !== null));
    const stops = [
      auth.on('login', () => {
        setSignedIn(true);
        setProblem(null);
      }),
      auth.on('load', () => setSignedIn(true)),
      auth.on('logout', () => setSignedIn(false)),
      // Another tab logged in or out: the store tells every tab.
      store.subscribe((pair) => setSignedIn(pair !== null)),
      // A login runs only when no usable pair is left, so a failed one leaves the user signed out.
      auth.on('failure', ({ operation, code }) => {
        if (operation !== 'login') return;
        setSignedIn(false);
        setProblem(code);
      }),
    ];
    return () => {
      mounted = false;
      for (const stop of stops) stop();
    };
  }, []);
  return { signedIn, problem };
}

const MESSAGES: Partial<Record<TokenAuthErrorCode, string>> = {
  LOGIN_REJECTED: 'Wrong username or password.',
  NO_CREDENTIALS: 'Your session has ended. Sign in again.',
};

export function OrdersPage(): ReactElement {
  const { signedIn, problem } = useTokenAuth();
  const [orders, setOrders] = useState<unknown>(null);

  const submit = (event: FormEvent<HTMLFormElement>): void => {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    const field = (name: string): string => {
      const value = form.get(name);
      return typeof value === 'string' ? value : '';
    };
    // The failure event reports a refused login; nothing else to do with the rejection here.
    logIn(field('username'), field('password')).catch(() => undefined);
  };
  const load = (): void => {
    api.get('/allocation/api/v1/tracking/order-list').then(
      (response) => setOrders(response.data),
      () => setOrders(null),
    );
  };

  if (!signedIn) {
    return (
      <form onSubmit={submit}>
        {problem && <p>{MESSAGES[problem] ?? `Could not sign in (${problem}).`}</p>}
        <input name="username" autoComplete="username" />
        <input name="password" type="password" autoComplete="current-password" />
        <button type="submit">Sign in</button>
      </form>
    );
  }
  return (
    <main>
      <button onClick={load}>Load orders</button>
      <button onClick={() => void auth.logout()}>Sign out</button>
      <pre>{JSON.stringify(orders, null, 2)}</pre>
    </main>
  );
}
