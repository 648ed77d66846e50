import axios from 'axios';
import { attachTokenAuth } from 'axios-token-keeper';

// A service that differs from the default: the refresh token travels in a header, the answer is
// { token: { value, ttl }, renew }, and an expired token gets 403.
const api = axios.create({ baseURL: 'https://legacy.example.com' });

attachTokenAuth(api, {
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

export { api };
