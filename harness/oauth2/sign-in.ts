// A user's sign-in at oidc-provider through the authorization code flow with PKCE, as a browser goes through it, and
// the code exchanged at the token endpoint: with a DPoP proof when the test asks, so that the pair is bound to its key.
import { createHash, randomBytes } from 'node:crypto';
import axios from 'axios';
import type { AxiosInstance, AxiosResponse } from 'axios';
import { assertionForm } from './assertion.js';
import { basic } from './client-auth.js';
import type { ClientAuth, TokenAnswer } from './client-auth.js';

/** What one DPoP proof is for: the call's method and URL, and the server's nonce once it asked for one. */
export interface DpopProofRequest {
  method: string;
  url: string;
  nonce?: string | undefined;
}

/**
 * DPoP for the code exchange: `proof` signs a proof for each call (a test makes it with the plugin's own key and
 * proofs). `jkt`, the key's thumbprint, when given, goes as `dpop_jkt` in the authorization request, which binds the
 * code to that key (RFC 9449 §10): an exchange proved by another key is refused.
 */
export interface SignInDpop {
  proof(request: DpopProofRequest): Promise<string>;
  jkt?: string | undefined;
}

/**
 * The client that signs in: its id, its registered redirect URI, and how its code exchange authenticates: with its
 * secret (client_secret_basic), or with `assertion`, which makes a new client assertion for each call (private_key_jwt,
 * client_secret_jwt; see assertion.ts).
 */
export type SignInClient = { clientId: string; redirectUri: string } & (
  Pick<ClientAuth, 'clientSecret'> | { assertion: () => string }
);

/**
 * A user's sign-in through the authorization code flow with PKCE, as a browser would go through it: the provider's
 * own sign-in and consent pages (its development interactions), cookies kept between the steps, redirects followed
 * by hand up to the client's redirect URI, then the code exchanged at the token endpoint. `offline_access` with
 * `prompt=consent` is what makes oidc-provider issue a refresh token.
 *
 * With `dpop`, the exchange carries a proof, and once more with the provider's nonce when it answers
 * `use_dpop_nonce`; the answer must then be a DPoP-bound pair (`token_type` DPoP).
 */
export async function signIn(
  issuer: string,
  client: SignInClient,
  accountId: string,
  dpop?: SignInDpop,
): Promise<TokenAnswer> {
  const verifier = randomBytes(32).toString('base64url');
  const code = await authorize(new Browser(issuer), client, accountId, { verifier, jkt: dpop?.jkt });
  const answer = await exchangeCode(issuer, client, { code, verifier }, dpop);
  if (dpop && answer.token_type !== 'DPoP') throw new Error(`code exchange gave a ${answer.token_type} token`);
  return answer;
}

/** An HTTP client that keeps cookies and follows no redirect by itself, as the sign-in's browser. */
class Browser {
  readonly http: AxiosInstance;
  private readonly jar = new Map<string, string>();

  constructor(readonly issuer: string) {
    this.http = axios.create({ baseURL: issuer, maxRedirects: 0, validateStatus: () => true });
  }

  async send(method: 'GET' | 'POST', url: string, form?: Record<string, string>): Promise<AxiosResponse> {
    const cookie = [...this.jar].map(([name, value]) => `${name}=${value}`).join('; ');
    const response = await this.http.request<unknown>({
      method,
      url,
      headers: cookie ? { Cookie: cookie } : {},
      ...(form && { data: new URLSearchParams(form) }),
    });
    for (const line of response.headers['set-cookie'] ?? []) {
      const [pair] = line.split(';');
      const eq = pair!.indexOf('=');
      this.jar.set(pair!.slice(0, eq), pair!.slice(eq + 1));
    }
    return response;
  }
}

/** The authorization request, the sign-in and consent pages, up to the redirect URI: the code it carries. */
async function authorize(
  browser: Browser,
  client: SignInClient,
  accountId: string,
  { verifier, jkt }: { verifier: string; jkt: string | undefined },
): Promise<string> {
  const query = new URLSearchParams({
    client_id: client.clientId,
    response_type: 'code',
    scope: 'openid offline_access',
    prompt: 'consent',
    redirect_uri: client.redirectUri,
    state: randomBytes(8).toString('hex'),
    code_challenge: createHash('sha256').update(verifier).digest('base64url'),
    code_challenge_method: 'S256',
    ...(jkt !== undefined && { dpop_jkt: jkt }),
  });
  let response = await browser.send('GET', `/auth?${query.toString()}`);
  for (let step = 0; step < 10; step += 1) {
    const location = response.headers.location as string | undefined;
    if (response.status < 300 || response.status >= 400 || !location)
      throw new Error(`sign-in stopped at HTTP ${response.status}: ${JSON.stringify(response.data).slice(0, 300)}`);
    const target = new URL(location, browser.issuer);
    if (location.startsWith(client.redirectUri)) {
      const code = target.searchParams.get('code');
      if (!code) throw new Error(`sign-in refused: ${target.searchParams.get('error') ?? 'no code'}`);
      return code;
    }
    if (target.pathname.startsWith('/interaction/')) {
      // The page's form says which prompt it is: sign-in ("login") first, then consent.
      const page = await browser.send('GET', target.pathname);
      const prompt = /name="prompt" value="(\w+)"/.exec(String(page.data))?.[1];
      if (prompt !== 'login' && prompt !== 'consent') throw new Error(`unexpected interaction page: ${prompt}`);
      const form: Record<string, string> = prompt === 'login' ? { prompt, login: accountId } : { prompt };
      response = await browser.send('POST', target.pathname, form);
    } else {
      response = await browser.send('GET', target.pathname + target.search);
    }
  }
  throw new Error('sign-in did not reach the redirect URI in 10 steps');
}

/** The code exchanged at `/token`; with `dpop`, proved, and proved once more with the nonce a `use_dpop_nonce` gave. */
async function exchangeCode(
  issuer: string,
  client: SignInClient,
  { code, verifier }: { code: string; verifier: string },
  dpop: SignInDpop | undefined,
): Promise<TokenAnswer> {
  const url = `${issuer}/token`;
  const form = { grant_type: 'authorization_code', code, redirect_uri: client.redirectUri, code_verifier: verifier };
  let nonce: string | undefined;
  for (let attempt = 1; ; attempt += 1) {
    const proof = dpop && (await dpop.proof({ method: 'POST', url, nonce }));
    // An assertion is spent by the call it goes with: each attempt signs its own.
    const authentication =
      'assertion' in client
        ? { form: assertionForm(client.assertion()), headers: {} }
        : { form: {}, headers: { Authorization: basic(client) } };
    const answer = await axios.post<TokenAnswer & { error?: string }>(
      url,
      new URLSearchParams({ ...form, ...authentication.form }),
      { headers: { ...authentication.headers, ...(proof && { DPoP: proof }) }, validateStatus: () => true },
    );
    const offered = answer.headers['dpop-nonce'] as unknown;
    if (proof && attempt === 1 && answer.data?.error === 'use_dpop_nonce' && typeof offered === 'string') {
      nonce = offered;
      continue;
    }
    if (answer.status !== 200)
      throw new Error(`code exchange answered HTTP ${answer.status}: ${JSON.stringify(answer.data).slice(0, 300)}`);
    return answer.data;
  }
}
