// A browser app whose token service keeps the refresh token in an HttpOnly cookie, out of every script's reach: the
// access token lives in the tabs' memory, a reload restores the session from the cookie, a sign-out ends it on the
// server and in every tab. A module for your app's bundle, not a script; examples/react-app.tsx is the whole app.
import axios from 'axios';
import { attachTokenAuth } from 'axios-token-keeper';
import { BrowserTokenStore } from 'axios-token-keeper/browser-store';

export const api = axios.create({ baseURL: 'https://api.example.com' });
export const auth = attachTokenAuth(api, {
  refreshTokenInCookie: true, // the token call goes withCredentials: the browser sends the cookie
  logoutRequest: () => ({ path: '/auth/api/v1/accounts/logout', withCredentials: true }), // the server clears it
  store: new BrowserTokenStore({ key: 'orders-api', storage: 'none' }), // no token in storage
});

// Before the first render: 'signing-in' at once, then 'signed-in' (the cookie was good) or 'signed-out' (the form).
auth.refresh().catch(() => undefined);

export const signIn = (username: string, password: string): Promise<void> => auth.login({ username, password });
export const signOut = (): Promise<void> => auth.logout();
