// The README's chart, drawn from a run's results: token calls after an expiry burst (log scale) and the CPU cost
// of a request with a valid token, relative to bare axios; and docs/benchmarks.md's fleet chart. Plain SVG, no
// dependency.
import type { HoldersResult } from './fleet-holders.js';
import type { ScenarioResult } from './scenarios.js';
import type { Cell } from './stats.js';

const COLORS = ['#2b6cb0', '#dd6b20', '#c05621', '#805ad5', '#718096'];
const WIDTH = 860;

function value(cell: Cell | undefined): number | undefined {
  if (cell === undefined) return undefined;
  if (typeof cell === 'number') return cell;
  if (typeof cell === 'string') return undefined;
  return cell.median;
}

const escape = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;');

interface Panel {
  title: string;
  groups: string[];
  series: Array<{ name: string; values: Array<number | undefined> }>;
  log: boolean;
  format: (value: number) => string;
}

function panel(spec: Panel, top: number): { svg: string; height: number } {
  const height = 260;
  const left = 60;
  const plotWidth = WIDTH - left - 20;
  const plotTop = top + 30;
  const plotHeight = height - 80;
  const all = spec.series.flatMap((series) => series.values.filter((v): v is number => v !== undefined));
  const max = Math.max(...all, spec.log ? 10 : 1);
  const scale = (v: number) => (spec.log ? Math.log10(Math.max(v, 1)) / Math.log10(max * 1.5) : v / (max * 1.15));
  const groupWidth = plotWidth / spec.groups.length;
  const barWidth = (groupWidth * 0.8) / spec.series.length;
  const parts = [`<text x="${left}" y="${top + 18}" font-size="15" font-weight="bold">${escape(spec.title)}</text>`];
  parts.push(
    `<line x1="${left}" y1="${plotTop + plotHeight}" x2="${left + plotWidth}" y2="${plotTop + plotHeight}" stroke="#333"/>`,
  );
  spec.groups.forEach((group, g) => {
    parts.push(
      `<text x="${left + g * groupWidth + groupWidth / 2}" y="${plotTop + plotHeight + 18}" font-size="12" text-anchor="middle">${escape(group)}</text>`,
    );
    spec.series.forEach((series, s) => {
      const v = series.values[g];
      const x = left + g * groupWidth + groupWidth * 0.1 + s * barWidth;
      if (v === undefined) return;
      const h = Math.max(1, scale(v) * plotHeight);
      parts.push(
        `<rect x="${x.toFixed(1)}" y="${(plotTop + plotHeight - h).toFixed(1)}" width="${(barWidth - 2).toFixed(1)}" height="${h.toFixed(1)}" fill="${COLORS[s % COLORS.length]}"/>`,
      );
      parts.push(
        `<text x="${(x + barWidth / 2 - 1).toFixed(1)}" y="${(plotTop + plotHeight - h - 3).toFixed(1)}" font-size="10" text-anchor="middle">${escape(spec.format(v))}</text>`,
      );
    });
  });
  spec.series.forEach((series, s) => {
    const x = left + s * 170;
    const y = top + height - 22;
    parts.push(
      `<rect x="${x}" y="${y - 10}" width="12" height="12" fill="${COLORS[s % COLORS.length]}"/><text x="${x + 16}" y="${y}" font-size="11">${escape(series.name)}</text>`,
    );
  });
  return { svg: parts.join('\n'), height };
}

export function chart(results: readonly ScenarioResult[], machine: string): string {
  const panels: Panel[] = [];
  const burst = results.find((result) => result.id === 2);
  if (burst) {
    const sizes = burst.columns.filter((column) => column.endsWith('token calls'));
    panels.push({
      title: 'Token calls after one expiry, by burst size (fewer is better; 1 is the goal)',
      groups: sizes.map((column) => column.replace(' token calls', '')),
      series: burst.rows.map((row) => ({
        name: row.contender,
        values: sizes.map((column) => value(row.cells[column])),
      })),
      log: true,
      format: (v) => String(Math.round(v)),
    });
  }
  const overhead = results.find((result) => result.id === 1);
  if (overhead) {
    panels.push({
      title: 'CPU per request with a valid token, relative to bare axios (1.00 is the floor)',
      groups: ['CPU vs bare', 'wall vs bare'],
      series: overhead.rows.map((row) => ({
        name: row.contender,
        values: [value(row.cells['CPU vs bare']), value(row.cells['wall vs bare'])],
      })),
      log: false,
      format: (v) => v.toFixed(2),
    });
  }
  return svgOf(panels, `npm run bench, ${machine}`);
}

/** The panels one under the other, with the caption at the foot. */
function svgOf(panels: readonly Panel[], caption: string): string {
  let top = 10;
  const drawn = panels.map((spec) => {
    const { svg, height } = panel(spec, top);
    top += height + 10;
    return svg;
  });
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${top + 20}" font-family="sans-serif">`,
    `<rect width="100%" height="100%" fill="white"/>`,
    ...drawn,
    `<text x="${WIDTH - 10}" y="${top + 10}" font-size="10" text-anchor="end" fill="#555">${escape(caption)}</text>`,
    '</svg>',
    '',
  ].join('\n');
}

/**
 * docs/benchmarks.md's fleet chart, from `npm run bench:fleet -- --holders`: per setup and number of holders, the
 * Redis commands and CPU per holder per expiry (flat is the goal), and the delay until every holder has the new pair.
 */
export function fleetChart(results: readonly HoldersResult[], machine: string): string {
  const sizes = [...new Set(results.map((r) => r.holders))];
  const setups = [...new Set(results.map((r) => r.setup))];
  const series = (value: (r: HoldersResult) => number) =>
    setups.map((setup) => ({
      name: setup,
      values: sizes.map((size) => {
        const r = results.find((each) => each.setup === setup && each.holders === size);
        return r && value(r);
      }),
    }));
  const groups = sizes.map((size) => `${size.toLocaleString('en-US')} holders`);
  return svgOf(
    [
      {
        title: 'Redis commands per holder per expiry (flat is the goal)',
        groups,
        series: series((r) => r.perHolderPerExpiry.commands),
        log: false,
        format: (v) => v.toFixed(2),
      },
      {
        title: 'Redis CPU per holder per expiry, µs (summed over the masters)',
        groups,
        series: series((r) => r.perHolderPerExpiry.cpuUs),
        log: false,
        format: (v) => v.toFixed(0),
      },
      {
        title: 'From an expiry until every holder has the new pair: p99, ms (log scale)',
        groups,
        series: series((r) => r.delayMs.p99),
        log: true,
        format: (v) => v.toFixed(0),
      },
    ],
    `npm run bench:fleet -- --holders, ${machine}`,
  );
}
