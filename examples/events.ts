// Run it against the emulator: `npm run emulator`, then
// API_URL=http://127.0.0.1:8080 API_USERNAME=demo API_PASSWORD=demo-password npx tsx examples/events.ts
// (a wrong API_PASSWORD shows the failure event and the advice).
import axios from 'axios';
import { attachTokenAuth, isTokenAuthError } from 'axios-token-keeper';

const api = axios.create({ baseURL: process.env.API_URL ?? 'https://api.example.com' });
const auth = attachTokenAuth(api, {
  credentials: { username: process.env.API_USERNAME ?? 'jane', password: process.env.API_PASSWORD ?? '' },
});

// Meter token generation: the account is suspended if it generates too many. No payload carries a secret.
auth.on('login', ({ reason, durationMs }) => console.info(`login (${reason}) in ${durationMs} ms`));
auth.on('refresh', ({ reason, rotated }) =>
  console.info(`token renewed (${reason})${rotated ? ', refresh token rotated' : ''}`),
);
auth.on('failure', ({ operation, code, error }) => console.warn(`${operation} failed: ${code}: ${error.message}`));

async function report(): Promise<void> {
  try {
    await api.get('/reports/daily');
  } catch (error) {
    if (isTokenAuthError(error) && error.code === 'LOGIN_REJECTED')
      console.error('Fix the credentials, then call auth.login().');
    else throw error;
  }
  console.info(auth.stats()); // { logins, refreshes, replays, failures, waiting, budget }
}

report().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exitCode = 1;
});
