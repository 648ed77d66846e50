/**
 * One function instance of a cold-start fleet (see cold-start.ts): a fresh process that makes its @upstash/redis client,
 * its RedisTokenStore and its axios instance with the plugin, as a handler's module does on a cold start, then makes
 * the requests its parent asks for over IPC. Bundled by cold-start.ts, so that it starts as fast as a function does.
 *
 * It never reports a token: only statuses, error codes and messages with the password masked.
 */
import axios from 'axios';
import { Redis } from '@upstash/redis';
import { attachTokenAuth, isTokenAuthError } from '../lib/index.js';
import { RedisTokenStore } from '../lib/stores/redis/index.js';
import { E2E_PASSWORD, E2E_USER } from './account.js';
import type { ColdStartConfig, InstanceAnswer, InstanceAsk } from './cold-start.js';

const config = JSON.parse(process.env.COLD_START_CONFIG ?? '{}') as ColdStartConfig;
const redis = new Redis({ url: config.restUrl, token: config.restToken, enableTelemetry: false });
const store = new RedisTokenStore(redis, { prefix: config.prefix, lockTtlMs: config.lockTtlMs });
const api = axios.create({ baseURL: config.serviceUrl });
const auth = attachTokenAuth(api, { credentials: { username: E2E_USER, password: E2E_PASSWORD }, store });

const mask = (text: string): string => text.split(E2E_PASSWORD).join('***');

async function answer(ask: InstanceAsk): Promise<InstanceAnswer> {
  try {
    const response = await api.get(ask.path);
    // The store's writes and the lock's release go on off the request's path: done before the instance says so.
    await auth.flush();
    return { id: ask.id, status: response.status };
  } catch (error) {
    await auth.flush();
    const code = isTokenAuthError(error) ? error.code : axios.isAxiosError(error) ? error.code : undefined;
    return { id: ask.id, error: mask(`${code ?? 'ERROR'}: ${error instanceof Error ? error.message : String(error)}`) };
  }
}

process.on('message', (ask: InstanceAsk) => {
  void answer(ask).then((reply) => process.send?.(reply));
});
process.on('disconnect', () => process.exit(0));
process.send?.({ id: 0, status: 0 } satisfies InstanceAnswer);
