// The emulator's routes as a test calls them with bare axios over real HTTP (no plugin): every answer resolves,
// whatever its status, for the test to look at.
import axios from 'axios';
import type { AxiosInstance, AxiosResponse } from 'axios';

export const LOGIN = '/auth/api/v1/accounts/login';
export const TOKEN = '/auth/api/v1/accounts/token';
export const LOGOUT = '/auth/api/v1/accounts/logout';

/** The Basic header of `user` and `password`. */
export const basic = (user: string, password: string) =>
  `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;

/** Bare axios on `url`, which resolves with every answer. */
export const raw = (url: string): AxiosInstance => axios.create({ baseURL: url, validateStatus: () => true });

/** A login with Basic credentials, the emulator's default user unless told. */
export async function login(url: string, user = 'demo', password = 'demo-password'): Promise<AxiosResponse> {
  return raw(url).post(LOGIN, undefined, { headers: { Authorization: basic(user, password) } });
}
