import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { join } from 'node:path';
import axios from 'axios';
import type { AxiosResponse } from 'axios';
import type { TokenCall } from './token-call.js';

export type { TokenCall };

/** A client of the provider, in oidc-provider's (and RFC 7591's) metadata names. */
export interface OidcClientMetadata {
  client_id: string;
  client_secret: string;
  grant_types: string[];
  response_types: string[];
  redirect_uris: string[];
}

/** oidc-provider running in a child process on a loopback port, which the one who started it stops. */
export interface OidcProvider {
  /** `http://127.0.0.1:<port>`; the token endpoint is `/token`. */
  readonly issuer: string;
  /** Every call of the token endpoint so far, oldest first. */
  tokenCalls(): Promise<TokenCall[]>;
  stop(): Promise<void>;
}

const SERVER = join(__dirname, 'oidc-server.mjs');

/**
 * Starts panva's oidc-provider (ESM only, so in a child process: jest runs the tests as CommonJS) with these clients
 * and a `resource-server` client allowed to introspect, whose secret is `resourceServerSecret`.
 */
export async function startOidcProvider(options: {
  clients: OidcClientMetadata[];
  resourceServerSecret: string;
  accessTokenTtlSec?: number;
}): Promise<OidcProvider> {
  const clients = [
    ...options.clients,
    {
      client_id: 'resource-server',
      client_secret: options.resourceServerSecret,
      grant_types: [],
      response_types: [],
      redirect_uris: [],
    },
  ];
  const child = spawn(
    process.execPath,
    [SERVER, JSON.stringify({ clients, accessTokenTtlSec: options.accessTokenTtlSec })],
    {
      stdio: ['pipe', 'pipe', 'pipe'],
    },
  );
  const issuer = await announced(child);
  const http = axios.create({ baseURL: issuer });
  return {
    issuer,
    tokenCalls: async () => (await http.get<TokenCall[]>('/__harness/token-calls')).data,
    stop: () => stopped(child),
  };
}

/** The issuer the child prints once it listens; its stderr (oidc-provider's warnings) only if it fails first. */
function announced(child: ChildProcess): Promise<string> {
  return new Promise((resolve, reject) => {
    let out = '';
    let err = '';
    const timer = setTimeout(() => fail(new Error('oidc-provider did not start within 15 s')), 15_000);
    const fail = (error: Error) => {
      clearTimeout(timer);
      child.kill('SIGKILL');
      reject(new Error(`${error.message}\n${err}`));
    };
    child.stderr!.on('data', (chunk: Buffer) => void (err += chunk.toString()));
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const line = out.split('\n')[0];
      if (out.includes('\n') && line) {
        clearTimeout(timer);
        resolve((JSON.parse(line) as { issuer: string }).issuer);
      }
    });
    child.once('exit', (code) => fail(new Error(`oidc-provider exited with code ${code} before it listened`)));
    child.once('error', fail);
  });
}

function stopped(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    child.kill('SIGTERM');
  });
}

/** A client's id and secret, sent as `Authorization: Basic` (client_secret_basic). */
export interface ClientAuth {
  clientId: string;
  clientSecret: string;
}

function basic({ clientId, clientSecret }: ClientAuth): string {
  const encode = (value: string) => encodeURIComponent(value).replace(/%20/g, '+');
  return `Basic ${Buffer.from(`${encode(clientId)}:${encode(clientSecret)}`).toString('base64')}`;
}

/** The provider's token answer. */
export interface TokenAnswer {
  access_token: string;
  refresh_token?: string;
  expires_in: number;
  scope?: string;
}

/**
 * A user's sign-in through the authorization code flow with PKCE, as a browser would go through it: the provider's
 * own sign-in and consent pages (its development interactions), cookies kept between the steps, redirects followed
 * by hand up to the client's redirect URI, then the code exchanged at the token endpoint. `offline_access` with
 * `prompt=consent` is what makes oidc-provider issue a refresh token.
 */
export async function signIn(
  issuer: string,
  client: ClientAuth & { redirectUri: string },
  accountId: string,
): Promise<TokenAnswer> {
  const http = axios.create({ baseURL: issuer, maxRedirects: 0, validateStatus: () => true });
  const jar = new Map<string, string>();
  const send = async (method: 'GET' | 'POST', url: string, form?: Record<string, string>): Promise<AxiosResponse> => {
    const cookie = [...jar].map(([name, value]) => `${name}=${value}`).join('; ');
    const response = await http.request<unknown>({
      method,
      url,
      headers: cookie ? { Cookie: cookie } : {},
      ...(form && { data: new URLSearchParams(form) }),
    });
    for (const line of response.headers['set-cookie'] ?? []) {
      const [pair] = line.split(';');
      const eq = pair!.indexOf('=');
      jar.set(pair!.slice(0, eq), pair!.slice(eq + 1));
    }
    return response;
  };
  const verifier = randomBytes(32).toString('base64url');
  const query = new URLSearchParams({
    client_id: client.clientId,
    response_type: 'code',
    scope: 'openid offline_access',
    prompt: 'consent',
    redirect_uri: client.redirectUri,
    state: randomBytes(8).toString('hex'),
    code_challenge: createHash('sha256').update(verifier).digest('base64url'),
    code_challenge_method: 'S256',
  });
  let response = await send('GET', `/auth?${query.toString()}`);
  for (let step = 0; step < 10; step += 1) {
    const location = response.headers.location as string | undefined;
    if (response.status < 300 || response.status >= 400 || !location)
      throw new Error(`sign-in stopped at HTTP ${response.status}: ${JSON.stringify(response.data).slice(0, 300)}`);
    const target = new URL(location, issuer);
    if (location.startsWith(client.redirectUri)) {
      const code = target.searchParams.get('code');
      if (!code) throw new Error(`sign-in refused: ${target.searchParams.get('error') ?? 'no code'}`);
      const answer = await http.post<TokenAnswer>(
        '/token',
        new URLSearchParams({
          grant_type: 'authorization_code',
          code,
          redirect_uri: client.redirectUri,
          code_verifier: verifier,
        }),
        { headers: { Authorization: basic(client) } },
      );
      if (answer.status !== 200) throw new Error(`code exchange answered HTTP ${answer.status}`);
      return answer.data;
    }
    if (target.pathname.startsWith('/interaction/')) {
      // The page's form says which prompt it is: sign-in ("login") first, then consent.
      const page = await send('GET', target.pathname);
      const prompt = /name="prompt" value="(\w+)"/.exec(String(page.data))?.[1];
      if (prompt !== 'login' && prompt !== 'consent') throw new Error(`unexpected interaction page: ${prompt}`);
      response = await send('POST', target.pathname, prompt === 'login' ? { prompt, login: accountId } : { prompt });
    } else {
      response = await send('GET', target.pathname + target.search);
    }
  }
  throw new Error('sign-in did not reach the redirect URI in 10 steps');
}

/** RFC 7009 revocation at the provider, by the client the token was issued to. */
export async function revokeToken(
  issuer: string,
  client: ClientAuth,
  token: string,
  hint: 'access_token' | 'refresh_token',
): Promise<void> {
  await axios.post(`${issuer}/token/revocation`, new URLSearchParams({ token, token_type_hint: hint }), {
    headers: { Authorization: basic(client) },
  });
}

/** What a resource server learns of a token from RFC 7662 introspection. */
export interface Introspection {
  active: boolean;
  client_id?: string;
  sub?: string;
}

/** Asks the provider whether a token is active, as the `resource-server` client. */
export function introspector(issuer: string, resourceServerSecret: string): (token: string) => Promise<Introspection> {
  const auth = basic({ clientId: 'resource-server', clientSecret: resourceServerSecret });
  return async (token) =>
    (
      await axios.post<Introspection>(`${issuer}/token/introspection`, new URLSearchParams({ token }), {
        headers: { Authorization: auth },
      })
    ).data;
}
