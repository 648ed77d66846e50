// A token for what does not go through axios: an EventSource, a WebSocket, a fetch, a signed URL. `accessToken()`
// waits for a renewal under way, renews a token known to be expired and logs in when none is held, sharing the one
// renewal, the budget and the cooldown with the instance's requests. Ask for it each time you connect: a token kept
// in a variable expires. A module for your app to import, not a script; it reads API_URL, API_USERNAME and
// API_PASSWORD.
import axios from 'axios';
import { attachTokenAuth } from 'axios-token-keeper';

const API_URL = process.env.API_URL ?? 'https://api.example.com';
const api = axios.create({ baseURL: API_URL });
export const auth = attachTokenAuth(api, {
  credentials: { username: process.env.API_USERNAME ?? 'jane', password: process.env.API_PASSWORD ?? '' },
});

/** Server-sent events cannot carry headers: the token goes in the query, and a reconnect asks for a fresh one. */
export async function followOrders(onOrder: (order: unknown) => void): Promise<EventSource> {
  const token = encodeURIComponent(await auth.accessToken());
  const events = new EventSource(`${API_URL}/allocation/api/v1/tracking/stream?access_token=${token}`);
  events.onmessage = (message: MessageEvent<string>) => onOrder(JSON.parse(message.data));
  events.onerror = () => {
    // The token may have expired: close, and open again with the current one after a pause.
    events.close();
    setTimeout(() => void followOrders(onOrder), 1_000);
  };
  return events;
}

/** A WebSocket that authenticates with its first message, where the server expects that. */
export async function openSocket(): Promise<WebSocket> {
  const token = await auth.accessToken();
  const socket = new WebSocket(`${API_URL.replace(/^http/, 'ws')}/allocation/api/v1/live`);
  socket.addEventListener('open', () => socket.send(JSON.stringify({ type: 'auth', token })));
  return socket;
}

/** A plain fetch, for a download that should not be buffered by axios. */
export async function download(path: string): Promise<Response> {
  return fetch(`${API_URL}${path}`, { headers: { Authorization: `Bearer ${await auth.accessToken()}` } });
}
