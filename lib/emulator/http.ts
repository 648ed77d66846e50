// The emulator's HTTP plumbing: reading a request, writing JSON answers and injected faults. Node only.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { EmulatorFault } from './types.js';

/** A request as the routes read it, its body already received. */
export interface ServiceRequest {
  method: string;
  /** The path without its query string. */
  path: string;
  /** The path with its query string, as a data call echoes it. */
  fullPath: string;
  authorization: string | undefined;
  /** The Cookie header as received. */
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

/**
 * Adds the CORS headers, for tests in a browser; true when the request was a preflight, which it has answered.
 */
export function allowCors(request: IncomingMessage, response: ServerResponse): boolean {
  response.setHeader('Access-Control-Allow-Origin', request.headers.origin ?? '*');
  response.setHeader('Access-Control-Allow-Headers', 'Authorization, Content-Type, X-Requested-With');
  response.setHeader('Access-Control-Allow-Methods', 'GET, POST, PUT, PATCH, DELETE, OPTIONS');
  if (request.method !== 'OPTIONS') return false;
  response.writeHead(204).end();
  return true;
}
