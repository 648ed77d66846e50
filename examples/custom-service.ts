// A service that differs from the default: the refresh token travels in a header, the answer is
// { token: { value, ttl }, renew }, and an expired token gets 403. The emulator speaks the default shape only, so
// run it against yours: LEGACY_URL=https://legacy.internal LEGACY_PASSWORD=… npx tsx examples/custom-service.ts
import axios from 'axios';
import { attachTokenAuth } from 'axios-token-keeper';

const api = axios.create({ baseURL: process.env.LEGACY_URL ?? 'https://legacy.example.com' });

const auth = attachTokenAuth(api, {
  credentials: { username: 'svc-reports', password: process.env.LEGACY_PASSWORD ?? '' },
  loginPath: '/session',
  tokenPath: '/session/renew',
  refreshRequest: (refreshToken) => ({ headers: { 'X-Refresh-Token': refreshToken } }),
  parseTokens: (body) => {
    const answer = body as { token?: { value?: string; ttl?: number }; renew?: string };
    return answer.token?.value
      ? { access: answer.token.value, refresh: answer.renew, expiresIn: answer.token.ttl }
      : undefined;
  },
  applyToken: (config, access) => {
    config.headers.set('X-Session', access);
  },
  isTokenRejected: (error) => error.response?.status === 403,
});

api.get('/reports/daily').then(
  ({ status }) => console.log(`GET /reports/daily: ${status}`, auth.stats()),
  (error: unknown) => {
    console.error(error instanceof Error ? error.message : error);
    process.exitCode = 1;
  },
);
