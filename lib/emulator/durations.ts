// The values the demo's and the emulator's flags take. A bad one is a UsageError that names the flag.
import { UsageError } from './command-line.js';

const UNITS = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** What the usage of a command with duration flags says about them. */
export const DURATIONS = 'A <time> takes its unit: 300ms, 1.5s, 45m or 2h.';

/**
 * Reads a duration such as `300ms`, `1.5s`, `45m` or `2h` into milliseconds, 1 or more. The unit is required: a
 * bare `1.5` may mean seconds as well as milliseconds, and a wrong guess runs the demo a thousand times too fast.
 */
export function parseDuration(text: string, option: string): number {
  const match = /^(\d+(?:\.\d+)?)(ms|s|m|h)?$/.exec(text);
  if (match && !match[2]) throw new UsageError(`--${option} ${text} needs a unit, such as ${text}s or ${text}ms`);
  const ms = match ? Math.round(Number(match[1]) * UNITS[match[2] as keyof typeof UNITS]) : 0;
  if (ms < 1) throw new UsageError(`--${option} takes a duration of 1ms or more such as 300ms or 1.5s, got "${text}"`);
  return ms;
}

/** Reads a whole number, 1 or more. */
export function parseCount(text: string, option: string): number {
  const value = /^\d+$/.test(text) ? Number(text) : 0;
  if (value < 1) throw new UsageError(`--${option} takes a whole number of 1 or more, got "${text}"`);
  return value;
}

/** Reads a port; 0 asks for a free one. */
export function parsePort(text: string): number {
  const port = /^\d+$/.test(text) ? Number(text) : NaN;
  if (!(port <= 65_535)) throw new UsageError(`--port takes a port from 0 (any free one) to 65535, got "${text}"`);
  return port;
}
