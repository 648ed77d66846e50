// A browser app whose users sign in with a form, its tokens in localStorage: every open tab shares one pair (one
// renews at an expiry, under a Web Lock, and tells the others), a reopened app finds it, and a sign-out in one tab
// signs out all. A module for your app's bundle, not a script; to try it, point it at `npm run emulator -- --cors`.
import axios from 'axios';
import { attachTokenAuth } from 'axios-token-keeper';
import { BrowserTokenStore } from 'axios-token-keeper/browser-store';

// The service must allow the app's origin (CORS), with the Authorization and Content-Type headers.
export const api = axios.create({ baseURL: 'https://api.example.com' });
// One key per account: it names the storage entry, the lock and the channel. No `credentials`: no password is kept.
export const auth = attachTokenAuth(api, { store: new BrowserTokenStore({ key: 'orders-api' }) });

// The form's credentials serve one login and are not kept. A UI renders `auth.getState().status`: 'signed-out' (the
// form), 'signing-in', 'signed-in' or 'renewing'; `auth.subscribe(render)` tells it of each change, in every tab.
export const signIn = (username: string, password: string): Promise<void> => auth.login({ username, password });
export const signOut = (): Promise<void> => auth.logout();
