// What a test listens to (see scan-secrets.ts): every event of an attachment, and the console, captured and silenced.
import type { TokenAuth, TokenAuthEvents } from '../../lib/index.js';

export const EVENT_NAMES = ['login', 'refresh', 'load', 'replay', 'failure', 'logout'] as const satisfies ReadonlyArray<
  keyof TokenAuthEvents
>;

export interface Recorded {
  event: keyof TokenAuthEvents;
  payload: unknown;
}

/** Listens to every event of `auth`; the returned array fills as they are emitted. */
export function recordEvents(auth: TokenAuth): Recorded[] {
  const recorded: Recorded[] = [];
  for (const event of EVENT_NAMES) auth.on(event, (payload) => void recorded.push({ event, payload }));
  return recorded;
}

export const CONSOLE_METHODS = ['log', 'info', 'warn', 'error', 'debug', 'trace'] as const;

/** Captures (and silences) console output; undo with `jest.restoreAllMocks()` after the test. */
export function captureConsole(): unknown[][] {
  const calls: unknown[][] = [];
  for (const method of CONSOLE_METHODS) {
    jest.spyOn(console, method).mockImplementation((...args: unknown[]) => void calls.push(args));
  }
  return calls;
}
