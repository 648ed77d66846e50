// A browser app open in several tabs: they share one pair. At an expiry one tab renews, under a Web Lock, and the
// others take its pair over a BroadcastChannel without calling the service; a reopened app finds the refresh token.
// A module for your app's bundle, not a script; to try it locally, point it at `npm run emulator -- --cors`.
import axios from 'axios';
import { attachTokenAuth } from 'axios-token-keeper';
import { BrowserTokenStore } from 'axios-token-keeper/browser-store';

// The service must allow the app's origin (CORS), with the Authorization and Content-Type headers.
export const api = axios.create({ baseURL: 'https://api.example.com' });

export const store = new BrowserTokenStore({
  key: 'orders-api', // one key per account: it names the storage entry, the lock and the channel
  keepAccessInMemory: true, // localStorage gets the refresh token only; tabs hand the access token to each other
});

// No credentials kept: the login form hands them to one login. When the refresh token is refused later, requests
// fail with NO_CREDENTIALS, and the app shows the form again.
export const auth = attachTokenAuth(api, { store });

export const logIn = (username: string, password: string): Promise<void> => auth.login({ username, password });

/** Logging out in one tab logs out every tab: the store tells them. */
export const logOut = (): Promise<void> => auth.logout();
