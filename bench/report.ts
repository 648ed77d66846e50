import type { ScenarioResult } from './scenarios.js';
import { show } from './stats.js';

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
