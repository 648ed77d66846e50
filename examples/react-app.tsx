// A React app whose users sign in: the access token in memory, the refresh token in an HttpOnly cookie no script can
// read, a reload that restores the session, and a sign-out that ends it in every open tab.
// A module for your app's bundle, not a script: it renders into <div id="root" data-api="https://api.example.com">. To
// try it locally, set data-api to the address of `npm run emulator -- --cors --refresh-cookie`.
import axios from 'axios';
import { useState, useSyncExternalStore } from 'react';
import type { FormEvent, ReactElement } from 'react';
import { createRoot } from 'react-dom/client';
import { attachTokenAuth } from 'axios-token-keeper';
import { BrowserTokenStore } from 'axios-token-keeper/browser-store';

const root = document.getElementById('root')!;
// The page says where the API is, so that one bundle serves every deployment.
export const api = axios.create({ baseURL: root.dataset.api ?? 'https://api.example.com' });
export const auth = attachTokenAuth(api, {
  refreshTokenInCookie: true,
  // The server clears the cookie and revokes its refresh token: a session it kept would outlive the sign-out.
  logoutRequest: () => ({ path: '/auth/api/v1/accounts/logout', withCredentials: true }),
  // No token in storage, where an injected script could read it: the open tabs hand the access token to each other,
  // and share in localStorage only the account's record, which tells every tab of a sign-out.
  store: new BrowserTokenStore({ key: 'orders-api', storage: 'none' }),
});

// Before the first render, so that a returning user sees "Signing in…" rather than a flash of the form. A visitor
// with no session (no cookie) lands on the form, which getState() says: nothing else to do with the rejection.
auth.refresh().catch(() => undefined);

function SignIn({ rejected }: { rejected: boolean }): ReactElement {
  const [username, setUsername] = useState('');
  const [password, setPassword] = useState('');
  const submit = (event: FormEvent): void => {
    event.preventDefault();
    // A refused password shows through getState(), as the `rejected` below.
    auth.login({ username, password }).catch(() => undefined);
  };
  return (
    <form onSubmit={submit}>
      {rejected && <p role="alert">Wrong username or password.</p>}
      <input name="username" autoComplete="username" value={username} onChange={(e) => setUsername(e.target.value)} />
      <input
        name="password"
        type="password"
        autoComplete="current-password"
        value={password}
        onChange={(e) => setPassword(e.target.value)}
      />
      <button type="submit">Sign in</button>
    </form>
  );
}

function App(): ReactElement {
  const { status, error } = useSyncExternalStore(auth.subscribe, auth.getState);
  if (status === 'signing-in') return <p role="status">Signing in…</p>;
  // Only a refused password is the user's to fix; a service that is down is not, nor is a visitor with no session.
  if (status === 'signed-out') return <SignIn rejected={error?.code === 'LOGIN_REJECTED'} />;
  // `renewing` is still signed in: requests wait for the new token by themselves.
  return (
    <main>
      {/* The tokens are dropped here even when the server cannot be told; the form shows either way. */}
      <button onClick={() => void auth.logout().catch(() => undefined)}>Sign out</button>
    </main>
  );
}

createRoot(root).render(<App />);
