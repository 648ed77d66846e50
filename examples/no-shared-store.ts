// A function on a platform with no shared store (no Redis it can reach): every cold start is a process with empty
// memory, so each costs one login, or nothing when a pair is handed in. Here the pair comes from a secret manager,
// which a single scheduled job keeps fresh (the instances never write it back: their renewals stay their own). It is
// not a script: the platform imports it and calls `handler`. It reads API_URL, API_USERNAME, API_PASSWORD and
// TOKEN_PAIR_SECRET (the secret's value as JSON: `{ "access": …, "refresh": …, "expiresAt": … }`, or unset).
import axios from 'axios';
import { attachTokenAuth } from 'axios-token-keeper';
import type { TokenPair } from 'axios-token-keeper';

const api = axios.create({ baseURL: process.env.API_URL });
const auth = attachTokenAuth(api, {
  credentials: () => ({ username: process.env.API_USERNAME ?? '', password: process.env.API_PASSWORD ?? '' }),
});

/** The pair of the secret manager, once per cold start; with AWS, `GetSecretValue` (its extension caches it). */
function fromSecretManager(): Promise<TokenPair | undefined> {
  const secret = process.env.TOKEN_PAIR_SECRET;
  return Promise.resolve(secret ? (JSON.parse(secret) as TokenPair) : undefined);
}

const ready = fromSecretManager().then((pair) => (pair ? auth.setTokens(pair) : undefined));

export async function handler(event: { page?: number }): Promise<{ statusCode: number; body: string }> {
  await ready;
  const { data } = await api.get<unknown>('/allocation/api/v1/tracking/order-list', {
    params: { page: event.page ?? 0 },
  });
  return { statusCode: 200, body: JSON.stringify(data) };
}
