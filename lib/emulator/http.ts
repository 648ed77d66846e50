// The emulator's HTTP plumbing: reading a request and its cookies, writing JSON answers, injected faults and the CORS
// headers. Node only.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { EmulatorFault } from './types.js';

/** A request as the routes read it, its body already received. */
export interface ServiceRequest {
  method: string;
  /** The path without its query string. */
  path: string;
  /** The path with its query string, as a data call echoes it. */
  fullPath: string;
  /** scheme://host:port/path as the emulator was reached (its Host header), without the query: a proof's `htu`. */
  url: string;
  /** The DPoP header: a proof, in DPoP mode. */
  dpop: string | undefined;
  authorization: string | undefined;
  cookie: string | undefined;
  contentType: string | undefined;
  body: string;
}

export function bodyOf(request: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    request.on('error', reject);
  });
}

export function headerText(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value.join(', ') : value;
}

/**
 * The request's URL as the client reached the emulator, without its query: the origin of its Host header (`fallback`,
 * the emulator's own, without one) and its `path`.
 */
export function requestUrl(request: IncomingMessage, path: string, fallback: string): string {
  const { host } = request.headers;
  try {
    return `${host ? new URL(`http://${host}`).origin : fallback}${path}`;
  } catch {
    return `${fallback}${path}`; // A Host header that names no host.
  }
}

/** The value, or the text itself when it is not JSON: a data call echoes what it got either way. */
export function parseJSON(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

export function sendJSON(
  response: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  response.writeHead(status, { 'Content-Type': 'application/json', ...headers }).end(JSON.stringify(body));
}

/** The value of the cookie `name` in a Cookie header; undefined when it is missing or empty. */
export function cookieValue(header: string | undefined, name: string): string | undefined {
  for (const pair of header?.split(';') ?? []) {
    const equals = pair.indexOf('=');
    if (equals > 0 && pair.slice(0, equals).trim() === name) return pair.slice(equals + 1).trim() || undefined;
  }
  return undefined;
}

/** Answers with an injected fault instead of what the route would have answered. */
export function sendFault(fault: EmulatorFault, response: ServerResponse): void {
  if (fault === 'hang') return;
  if (fault === 'drop') return void response.socket?.destroy();
  if (fault === 'reset') {
    response.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': '200' });
    response.write('{"access":"');
    setTimeout(() => response.socket?.destroy(), 5);
    return;
  }
  if (fault === 'malformed')
    return void response.writeHead(200, { 'Content-Type': 'application/json' }).end('{"access": "abc", ');
  if (fault === 'no-access-token') return sendJSON(response, 200, { status: true, data: { message: 'ok' } });
  if (fault === 'huge') return sendJSON(response, 200, { padding: 'x'.repeat(5 * 1024 * 1024) });
  if ('redirect' in fault) return void response.writeHead(302, { Location: fault.redirect }).end();
  response.writeHead(fault.status, { 'Content-Type': 'application/json', ...fault.headers });
  response.end(JSON.stringify(fault.body ?? { detail: `Injected fault: HTTP ${fault.status}` }));
}

/** The headers a client of the service sends, allowed whether or not a preflight names them. */
const ALLOWED_HEADERS = ['Authorization', 'Content-Type', 'X-Request-Id', 'X-Requested-With'];
/** In DPoP mode, the proof a client sends, and the answers' headers a page must be able to read. */
const DPOP_ALLOWED_HEADERS = [...ALLOWED_HEADERS, 'DPoP'];
const DPOP_EXPOSED_HEADERS = 'DPoP-Nonce, WWW-Authenticate';

/**
 * Adds the CORS headers, for tests in a browser; true when the request was a preflight, which it has answered. The
 * origin is echoed with credentials allowed, because a browser sends cookies (`withCredentials`) only to an answer
 * that names its origin, never to `*`; `*` stays for a request without an Origin, which no browser sends. With
 * `dpop`, the DPoP header is allowed too, and a page may read an answer's DPoP-Nonce and WWW-Authenticate.
 */
export function allowCors(request: IncomingMessage, response: ServerResponse, { dpop = false } = {}): boolean {
  const origin = request.headers.origin;
  response.setHeader('Access-Control-Allow-Origin', origin ?? '*');
  if (origin !== undefined) response.setHeader('Access-Control-Allow-Credentials', 'true');
  // The answer differs by origin: a cache must not serve one origin's to another.
  response.setHeader('Vary', 'Origin');
  const requested = headerText(request.headers['access-control-request-headers'])?.split(',') ?? [];
  const allowed = new Map((dpop ? DPOP_ALLOWED_HEADERS : ALLOWED_HEADERS).map((name) => [name.toLowerCase(), name]));
  for (const name of requested.map((each) => each.trim()).filter(Boolean))
    if (!allowed.has(name.toLowerCase())) allowed.set(name.toLowerCase(), name);
  response.setHeader('Access-Control-Allow-Headers', [...allowed.values()].join(', '));
  response.setHeader('Access-Control-Allow-Methods', 'GET, POST, PUT, PATCH, DELETE, OPTIONS');
  if (dpop) response.setHeader('Access-Control-Expose-Headers', DPOP_EXPOSED_HEADERS);
  if (request.method !== 'OPTIONS') return false;
  response.writeHead(204).end();
  return true;
}
