import axios from 'axios';
import { attachTokenAuth, isTokenAuthError } from 'axios-token-keeper';

const api = axios.create({ baseURL: 'https://api.example.com' });
const auth = attachTokenAuth(api, { credentials: { username: 'jane', password: process.env.SERVICE_PASSWORD ?? '' } });

// Meter token generation: the account is suspended if it generates too many. No payload carries a secret.
auth.on('login', ({ reason, durationMs }) => console.info(`login (${reason}) in ${durationMs} ms`));
auth.on('refresh', ({ reason, rotated }) =>
  console.info(`token renewed (${reason})${rotated ? ', refresh token rotated' : ''}`),
);
auth.on('failure', ({ operation, code, error }) => console.warn(`${operation} failed: ${code}: ${error.message}`));

export async function report(): Promise<void> {
  try {
    await api.get('/reports/daily');
  } catch (error) {
    if (isTokenAuthError(error) && error.code === 'LOGIN_REJECTED')
      console.error('Fix the credentials, then call auth.login().');
    else throw error;
  }
  console.info(auth.stats()); // { logins, refreshes, replays, failures }
}
