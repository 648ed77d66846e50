/** Nearest-rank percentile of `values` (0–100); NaN for none. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

/** The middle value; for an even count, the mean of the two middle ones. */
export function median(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

/** A median with its spread: the smallest and largest of the runs. */
export interface Spread {
  median: number;
  min: number;
  max: number;
  runs: number;
}

export function spread(values: readonly number[]): Spread {
  return { median: median(values), min: Math.min(...values), max: Math.max(...values), runs: values.length };
}

/** Least-squares slope of y over x; 0 for fewer than two points or no spread in x. */
export function slope(points: ReadonlyArray<readonly [number, number]>): number {
  const n = points.length;
  if (n < 2) return 0;
  const mx = points.reduce((sum, [x]) => sum + x, 0) / n;
  const my = points.reduce((sum, [, y]) => sum + y, 0) / n;
  const sxy = points.reduce((sum, [x, y]) => sum + (x - mx) * (y - my), 0);
  const sxx = points.reduce((sum, [x]) => sum + (x - mx) ** 2, 0);
  return sxx === 0 ? 0 : sxy / sxx;
}

export function round(value: number, digits = 2): number {
  const scale = 10 ** digits;
  return Math.round(value * scale) / scale;
}

/** Runs `task` for each item with at most `limit` in flight; resolves when all have settled. */
export async function pool<T>(
  items: number,
  limit: number,
  task: (index: number) => Promise<T>,
): Promise<PromiseSettledResult<T>[]> {
  const results = new Array<PromiseSettledResult<T>>(items);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items) {
      const index = next++;
      try {
        results[index] = { status: 'fulfilled', value: await task(index) };
      } catch (reason) {
        results[index] = { status: 'rejected', reason };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items) }, worker));
  return results;
}

/**
 * `items` rotated left by `by`: the order of a round in which each contender goes in turn, starting one further on
 * every round, so that none is always first (on the coldest process) or always after the same one.
 */
export function rotated<T>(items: readonly T[], by: number): T[] {
  const n = items.length;
  return items.map((_, i) => items[(((i + by) % n) + n) % n]!);
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** What a table's cell holds: a text, a number, or the spread of a figure over runs. */
export type Cell = string | number | Spread;

/** A number as the tables show it: at most three decimals. */
const number = (value: number): string => String(Number(value.toFixed(3)));

/** A cell as the tables show it: a spread as its median, with [smallest–largest] where the runs differ. */
export function show(cell: Cell | undefined): string {
  if (cell === undefined) return '';
  if (typeof cell === 'number') return number(cell);
  if (typeof cell === 'string') return cell;
  if (cell.min === cell.max) return number(cell.median);
  return `${number(cell.median)} [${number(cell.min)}–${number(cell.max)}]`;
}
