import type { Cell, ScenarioResult } from './scenarios.js';

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

/** A Markdown table with its columns padded to their widest cell. */
export function markdownTable(header: readonly string[], rows: ReadonlyArray<readonly string[]>): string {
  const widths = header.map((title, i) => Math.max(title.length, ...rows.map((row) => row[i]!.length)));
  const line = (cells: readonly string[]) => `| ${cells.map((cell, i) => cell.padEnd(widths[i]!)).join(' | ')} |`;
  return [line(header), `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`, ...rows.map(line)].join('\n');
}

/** A scenario's results as a Markdown table, one row per contender. */
export function table(result: ScenarioResult): string {
  const rows = result.rows.map((row) => [row.contender, ...result.columns.map((column) => show(row.cells[column]))]);
  return markdownTable(['contender', ...result.columns], rows);
}
