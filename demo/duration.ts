/** Reads a duration such as `1500`, `1500ms`, `30s`, `45m` or `2h` into milliseconds. */
export function parseDuration(text: string, option: string): number {
  const match = /^(\d+(?:\.\d+)?)(ms|s|m|h)?$/.exec(text.trim());
  if (!match) throw new Error(`--${option} must be a duration such as 1500ms, 30s or 45m, got "${text}".`);
  const unit = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 }[(match[2] ?? 'ms') as 'ms' | 's' | 'm' | 'h'];
  return Math.round(Number(match[1]) * unit);
}

export function parseCount(text: string, option: string): number {
  const value = Number(text);
  if (!Number.isInteger(value) || value < 1)
    throw new Error(`--${option} must be a whole number of 1 or more, got "${text}".`);
  return value;
}
