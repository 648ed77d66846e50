// Type tests of the per-request keys that lib/types.ts adds to axios by module augmentation (`skipAuth`, `account`), so
// users never cast.
// The same check runs against the packed package in __tests__/fixtures/consumer/use.ts.
import axios from 'axios';
import type { AxiosRequestConfig, InternalAxiosRequestConfig } from 'axios';
import { expectTypeOf } from 'expect-type';
import 'axios-token-keeper';

const api = axios.create({ baseURL: 'https://api.example.com' });

expectTypeOf<AxiosRequestConfig['skipAuth']>().toEqualTypeOf<boolean | undefined>();
// Interceptors see the config as InternalAxiosRequestConfig: the flag must be there too.
expectTypeOf<InternalAxiosRequestConfig['skipAuth']>().toEqualTypeOf<boolean | undefined>();
expectTypeOf<AxiosRequestConfig['account']>().toEqualTypeOf<string | undefined>();
expectTypeOf<InternalAxiosRequestConfig['account']>().toEqualTypeOf<string | undefined>();

export function requests(): void {
  void api.get('/public', { skipAuth: true });
  void api.post('/public', { q: 1 }, { skipAuth: false });
  void api.request({ url: '/public', method: 'DELETE', skipAuth: true });
  void axios.get('https://elsewhere.example.com', { skipAuth: true });

  // @ts-expect-error the flag is a boolean, not any truthy value
  void api.get('/public', { skipAuth: 'yes' });
  // @ts-expect-error the flag is a boolean, not a number
  void api.request({ url: '/public', skipAuth: 1 });
  void api.get('/orders', { account: 'tenant-42' });
  // @ts-expect-error an account is named by a string
  void api.get('/orders', { account: 42 });
}
