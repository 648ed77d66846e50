// The charts of docs/benchmarks.md, drawn from a run's results. Plain SVG, no dependency.
//
// `npm run bench`'s chart plots what tells the contenders apart: the requests an expiry burst fails (scenario 2), the
// burst's p50 against the floor in the same round (2), and the time of a request in process against bare axios in the
// same round (6), each ratio with the spread of its rounds. Token calls (1 or 0 for every contender) and CPU over
// loopback HTTP (1), whose rounds spread wider than the gaps between contenders, stay in the tables. The fleet chart
// plots `npm run bench:fleet -- --holders`.
import { FLOOR } from './contenders.js';
import type { HoldersResult } from './fleet-holders.js';
import { FLOOR_BURST } from './scenarios.js';
import type { ScenarioResult } from './scenarios.js';
import type { Cell } from './stats.js';

const WIDTH = 860;
/** Room at the left for the axis' labels, and at the right. */
const LEFT = 64;
const RIGHT = 24;
/** Okabe and Ito's colours, which readers with a colour vision deficiency still tell apart. */
const COLORS = ['#0072b2', '#e69f00', '#009e73', '#cc79a7', '#56b4e9', '#d55e00'];
const GREY = '#555';
const LIGHT = '#ddd';

function value(cell: Cell | undefined): number | undefined {
  if (cell === undefined) return undefined;
  if (typeof cell === 'number') return cell;
  if (typeof cell === 'string') return undefined;
  return cell.median;
}

const escape = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
const count = (n: number) => n.toLocaleString('en-US');

/**
 * A text's width in pixels, overestimated: 0.62 em a character, as wide as DejaVu Sans (the widest of the usual
 * sans-serif faces) sets lower case, so that what is laid out beside a text does not touch it in any of them.
 */
const widthOf = (text: string, size: number) => text.length * size * 0.62;

interface TextStyle {
  size?: number;
  anchor?: 'start' | 'middle' | 'end';
  bold?: boolean;
  fill?: string;
}

/** A text with a white halo, so that it stays readable where it crosses a gridline or a reference line. */
function text(x: number, y: number, content: string, style: TextStyle = {}): string {
  const { size = 11, anchor = 'start', bold = false, fill = '#111' } = style;
  return (
    `<text x="${x.toFixed(1)}" y="${y.toFixed(1)}" font-size="${size}" text-anchor="${anchor}" fill="${fill}"` +
    `${bold ? ' font-weight="bold"' : ''} stroke="white" stroke-width="3" stroke-linejoin="round"` +
    ` paint-order="stroke">${escape(content)}</text>`
  );
}

/** `content` broken into lines no wider than `width` at `size`. */
function wrap(content: string, size: number, width: number): string[] {
  const lines: string[] = [];
  for (const word of content.split(' ')) {
    const last = lines[lines.length - 1];
    if (last !== undefined && widthOf(`${last} ${word}`, size) <= width) lines[lines.length - 1] = `${last} ${word}`;
    else lines.push(word);
  }
  return lines;
}

/** A panel's title and the lines under it; returns where they end. */
function heading(parts: string[], top: number, title: string, note: string | undefined): number {
  parts.push(text(LEFT, top + 18, title, { size: 15, bold: true }));
  let y = top + 18;
  for (const line of note === undefined ? [] : wrap(note, 12, WIDTH - LEFT - RIGHT)) {
    y += 17;
    parts.push(text(LEFT, y, line, { size: 12, fill: '#333' }));
  }
  return y;
}

/** A colour's swatch and name per entry, laid out in rows as wide as the chart: no two names touch. */
function legend(entries: ReadonlyArray<{ name: string; color: string }>, top: number): { svg: string; height: number } {
  const parts: string[] = [];
  let x = LEFT;
  let row = 0;
  for (const { name, color } of entries) {
    const width = 18 + widthOf(name, 12);
    if (x > LEFT && x + width > WIDTH - RIGHT) {
      x = LEFT;
      row += 1;
    }
    const y = top + 14 + row * 20;
    parts.push(`<rect x="${x.toFixed(1)}" y="${y - 11}" width="13" height="13" fill="${color}"/>`);
    parts.push(text(x + 18, y, name, { size: 12 }));
    x += width + 28;
  }
  return { svg: parts.join('\n'), height: 20 * (row + 1) + 4 };
}

/** The ticks of a value axis from 0 (or 1, on a log scale) to at least `max`: 3 to 6 round numbers. */
function ticksOf(max: number, log: boolean): number[] {
  if (log) {
    const ticks = [1];
    while (ticks[ticks.length - 1]! < max) ticks.push(ticks[ticks.length - 1]! * 10);
    return ticks;
  }
  const rough = max / 4;
  const power = 10 ** Math.floor(Math.log10(rough));
  const step = [1, 2, 2.5, 5, 10].map((m) => m * power).find((s) => s >= rough)!;
  const ticks = [0];
  while (ticks[ticks.length - 1]! < max) ticks.push(Number((ticks[ticks.length - 1]! + step).toFixed(6)));
  return ticks;
}

/** The smallest and the largest of the runs a median is drawn from: a whisker across the bar's end. */
type Range = readonly [number, number];

/** A bar, with the lines written above it (top first), or a word written in its place. */
type Slot = { value: number; range?: Range; lines: string[] } | { note: string } | undefined;

const WHISKER = '#222';

interface Columns {
  title: string;
  note?: string;
  /** Each group's label, one or two lines. */
  groups: string[][];
  series: Array<{ name: string; color: string; slots: Slot[] }>;
  /** The axis' tick labels. */
  tick: (value: number) => string;
  log?: boolean;
  /** A dashed line across the plot, at this value: the note says what it is (a label in the plot would meet a bar's). */
  reference?: number;
  /** A legend of the series under the plot (the fleet chart); the bench chart has one legend for all its panels. */
  legend?: boolean;
}

/** Bars in groups, one colour per series, with a value axis at the left. */
function columns(spec: Columns, top: number): { svg: string; height: number } {
  const parts: string[] = [];
  const headed = heading(parts, top, spec.title, spec.note);
  const labelLines = Math.max(
    1,
    ...spec.series.flatMap((s) => s.slots.map((slot) => (slot && 'lines' in slot ? slot.lines.length : 1))),
  );
  const plotTop = headed + 14 + labelLines * 13;
  const plotHeight = 170;
  const bottom = plotTop + plotHeight;
  const plotWidth = WIDTH - LEFT - RIGHT;
  const values = spec.series.flatMap((s) =>
    s.slots.flatMap((slot) => (slot && 'value' in slot ? [slot.value, ...(slot.range ?? [])] : [])),
  );
  const ticks = ticksOf(Math.max(...values, spec.reference ?? 0, Number.MIN_VALUE), spec.log ?? false);
  const scaleTop = ticks[ticks.length - 1]!;
  const y = (v: number) =>
    bottom - plotHeight * (spec.log ? Math.log10(Math.max(v, 1)) / Math.log10(scaleTop) : v / scaleTop);
  for (const tick of ticks) {
    parts.push(
      `<line x1="${LEFT}" y1="${y(tick).toFixed(1)}" x2="${LEFT + plotWidth}" y2="${y(tick).toFixed(1)}" stroke="${tick === ticks[0] ? '#333' : LIGHT}"/>`,
    );
    parts.push(text(LEFT - 6, y(tick) + 4, spec.tick(tick), { size: 11, anchor: 'end', fill: GREY }));
  }
  if (spec.reference !== undefined) {
    const at = y(spec.reference).toFixed(1);
    parts.push(
      `<line x1="${LEFT}" y1="${at}" x2="${LEFT + plotWidth}" y2="${at}" stroke="${GREY}" stroke-width="1.5" stroke-dasharray="6 4"/>`,
    );
  }
  const groupWidth = plotWidth / spec.groups.length;
  const barWidth = (groupWidth * 0.84) / spec.series.length;
  spec.groups.forEach((lines, g) => {
    const middle = LEFT + g * groupWidth + groupWidth / 2;
    lines.forEach((line, i) =>
      parts.push(
        text(middle, bottom + 17 + i * 15, line, {
          size: i === 0 ? 13 : 11,
          anchor: 'middle',
          fill: i === 0 ? '#111' : GREY,
        }),
      ),
    );
    spec.series.forEach((series, s) => {
      const slot = series.slots[g];
      if (slot === undefined) return;
      const x = LEFT + g * groupWidth + groupWidth * 0.08 + s * barWidth;
      const centre = x + barWidth / 2;
      if ('note' in slot) {
        parts.push(text(centre, bottom - 5, slot.note, { size: 10, anchor: 'middle', fill: GREY }));
        return;
      }
      // A zero still gets a sliver of its colour, so that the eye finds the contender in the group.
      const barTop = Math.min(y(slot.value), bottom - 2);
      parts.push(
        `<rect x="${(x + 1).toFixed(1)}" y="${barTop.toFixed(1)}" width="${(barWidth - 2).toFixed(1)}" height="${(bottom - barTop).toFixed(1)}" fill="${series.color}"/>`,
      );
      let above = barTop;
      if (slot.range) {
        const [low, high] = slot.range.map(y) as [number, number];
        const cap = Math.min(8, barWidth / 4);
        parts.push(
          `<path d="M${centre} ${low.toFixed(1)}V${high.toFixed(1)}M${centre - cap} ${low.toFixed(1)}h${2 * cap}M${centre - cap} ${high.toFixed(1)}h${2 * cap}" stroke="${WHISKER}" stroke-width="1.5" fill="none"/>`,
        );
        above = Math.min(barTop, high);
      }
      // Each line as large as fits over the bar, on white: a gridline or the reference line stops at the label.
      const sizes = slot.lines.map((line) => Math.min(11, Math.floor((barWidth - 2) / widthOf(line, 1))));
      const blockWidth = Math.max(...slot.lines.map((line, i) => widthOf(line, sizes[i]!)));
      const blockTop = above - 15 - (slot.lines.length - 1) * 13;
      parts.push(
        `<rect x="${(centre - blockWidth / 2).toFixed(1)}" y="${blockTop.toFixed(1)}" width="${blockWidth.toFixed(1)}" height="${(above - 2 - blockTop).toFixed(1)}" fill="white"/>`,
      );
      slot.lines.forEach((line, i) => {
        const size = sizes[i]!;
        const fill = i === 0 ? '#111' : '#333';
        parts.push(text(centre, above - 5 - (slot.lines.length - 1 - i) * 13, line, { size, anchor: 'middle', fill }));
      });
    });
  });
  let height = bottom + 17 + 15 * Math.max(...spec.groups.map((lines) => lines.length)) - top;
  if (spec.legend) {
    const drawn = legend(spec.series, top + height);
    parts.push(drawn.svg);
    height += drawn.height;
  }
  return { svg: parts.join('\n'), height: height + 8 };
}

interface Rows {
  title: string;
  note?: string;
  rows: Array<{ name: string; color: string; value: number; range?: Range; label: string }>;
  tick: (value: number) => string;
  reference: { value: number; label: string };
}

/** One horizontal bar per row, its name at the left and its value at its end. */
function rows(spec: Rows, top: number): { svg: string; height: number } {
  const parts: string[] = [];
  const headed = heading(parts, top, spec.title, spec.note);
  const names = Math.max(...spec.rows.map((row) => widthOf(row.name, 12)));
  const left = LEFT + names + 10;
  const labels = Math.max(...spec.rows.map((row) => widthOf(row.label, 11)));
  const plotWidth = WIDTH - RIGHT - labels - 8 - left;
  const plotTop = headed + 30;
  const rowHeight = 26;
  const bottom = plotTop + rowHeight * spec.rows.length;
  const ticks = ticksOf(
    Math.max(...spec.rows.flatMap((row) => [row.value, ...(row.range ?? [])]), spec.reference.value),
    false,
  );
  const x = (v: number) => left + (plotWidth * v) / ticks[ticks.length - 1]!;
  for (const tick of ticks) {
    parts.push(
      `<line x1="${x(tick).toFixed(1)}" y1="${plotTop - 6}" x2="${x(tick).toFixed(1)}" y2="${bottom}" stroke="${tick === 0 ? '#333' : LIGHT}"/>`,
    );
    parts.push(text(x(tick), bottom + 16, spec.tick(tick), { size: 11, anchor: 'middle', fill: GREY }));
  }
  const at = x(spec.reference.value).toFixed(1);
  parts.push(
    `<line x1="${at}" y1="${plotTop - 10}" x2="${at}" y2="${bottom}" stroke="${GREY}" stroke-width="1.5" stroke-dasharray="6 4"/>`,
  );
  parts.push(
    text(x(spec.reference.value), plotTop - 14, spec.reference.label, { size: 11, anchor: 'middle', fill: GREY }),
  );
  spec.rows.forEach((row, r) => {
    const y = plotTop + r * rowHeight;
    parts.push(text(left - 10, y + 15, row.name, { size: 12, anchor: 'end' }));
    parts.push(
      `<rect x="${left}" y="${y + 3}" width="${(x(row.value) - left).toFixed(1)}" height="${rowHeight - 8}" fill="${row.color}"/>`,
    );
    let end = x(row.value);
    if (row.range) {
      const [low, high] = row.range.map(x) as [number, number];
      const middle = y + rowHeight / 2 - 1;
      parts.push(
        `<path d="M${low.toFixed(1)} ${middle}H${high.toFixed(1)}M${low.toFixed(1)} ${middle - 6}v12M${high.toFixed(1)} ${middle - 6}v12" stroke="${WHISKER}" stroke-width="1.5" fill="none"/>`,
      );
      end = Math.max(end, high);
    }
    parts.push(text(end + 6, y + 15, row.label, { size: 11 }));
  });
  return { svg: parts.join('\n'), height: bottom + 30 - top };
}

type Drawn = (top: number) => { svg: string; height: number };

/** The parts one under the other, with the caption at the foot. */
function svgOf(drawn: readonly Drawn[], caption: string): string {
  let top = 10;
  const svgs = drawn.map((draw) => {
    const { svg, height } = draw(top);
    top += height + 14;
    return svg;
  });
  const lines = wrap(caption, 11, WIDTH - LEFT - RIGHT);
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${top + 16 * lines.length}" font-family="sans-serif">`,
    `<rect width="100%" height="100%" fill="white"/>`,
    ...svgs,
    ...lines.map((line, i) => text(WIDTH - RIGHT, top + 4 + 16 * i, line, { size: 11, anchor: 'end', fill: GREY })),
    '</svg>',
    '',
  ].join('\n');
}

type Row = ScenarioResult['rows'][number];

/** The burst sizes of scenario 2, from its columns (`N=1000 failed`). */
const sizesOf = (burst: ScenarioResult) =>
  burst.columns.filter((column) => column.endsWith(' failed')).map((column) => Number(column.slice(2, -7)));

/** A cell's smallest and largest run, where they differ. */
function rangeOf(cell: Cell | undefined): Range | undefined {
  return typeof cell === 'object' && cell.min !== cell.max ? [cell.min, cell.max] : undefined;
}

/** How many runs a cell's median is of, in words for a note. */
const runsOf = (cell: Cell | undefined) => (typeof cell === 'object' ? ` of ${cell.runs} rounds` : '');

/** A list in words: "a", "a and b", "a, b and c". */
const inWords = (names: readonly string[]) =>
  names.length < 2 ? names.join('') : `${names.slice(0, -1).join(', ')} and ${names[names.length - 1]!}`;

/**
 * `npm run bench`'s chart, from the results of scenarios 2 and 6 (a panel is left out when its scenario, or the
 * column it plots, is absent). The caption says which run they are from.
 */
export function chart(results: readonly ScenarioResult[], caption: string): string {
  const burst = results.find((result) => result.id === 2);
  const micro = results.find((result) => result.id === 6);
  // One colour per contender in every panel, in the order of scenario 2's rows; the floor is a line, not a colour.
  const contenders = (burst ?? micro)?.rows
    .map((row) => row.contender)
    .filter((name) => name !== FLOOR_BURST && name !== FLOOR.name);
  const colors = (contenders ?? []).map((name, i) => ({ name, color: COLORS[i % COLORS.length]! }));
  const colorOf = (name: string) => colors.find((each) => each.name === name)?.color ?? GREY;
  const drawn: Drawn[] = [(top) => legend(colors, top)];
  const whisker = 'whisker: the smallest to the largest round';

  if (burst) {
    const sizes = sizesOf(burst);
    const failed = (row: Row, n: number) => value(row.cells[`N=${n} failed`]);
    const p50 = (row: Row, n: number) => value(row.cells[`N=${n} p50 ms`]);
    const against = (row: Row, n: number) => row.cells[`N=${n} p50 vs floor`];
    const contending = burst.rows.filter((row) => row.contender !== FLOOR_BURST);
    drawn.push((top) =>
      columns(
        {
          title: 'Failed requests in a burst of N right after an expiry (0 is the goal)',
          note: 'Bar: the share of the N requests that failed (median of the rounds); above it, how many.',
          groups: sizes.map((n) => [`N = ${count(n)}`]),
          series: contending.map((row) => ({
            name: row.contender,
            color: colorOf(row.contender),
            slots: sizes.map((n): Slot => {
              const v = failed(row, n);
              return v === undefined ? undefined : { value: (100 * v) / n, lines: [count(v)] };
            }),
          })),
          tick: (v) => `${v}%`,
        },
        top,
      ),
    );
    const floor = burst.rows.find((row) => row.contender === FLOOR_BURST);
    if (floor && against(floor, sizes[0]!) !== undefined) {
      // A contender that failed its bursts has no latency to set against the floor's: the note names it instead.
      const delivered = contending.filter((row) => sizes.some((n) => value(against(row, n)) !== undefined));
      const left = contending.filter((row) => !delivered.includes(row)).map((row) => row.contender);
      drawn.push((top) =>
        columns(
          {
            title: "The burst's p50 latency against the floor's (below 1.00× is faster)",
            note:
              'The floor (dashed): bare axios sends each request, takes its 401 and sends it again with the pair of ' +
              `one token call. Bar: the p50 over the floor's in the same round (median${runsOf(against(floor, sizes[0]!))}); ` +
              `${whisker}; above, the p50.` +
              (left.length > 0 ? ` ${inWords(left)} failed the bursts: no latency to compare.` : ''),
            groups: sizes.map((n) => [`N = ${count(n)}`, `floor ${count(p50(floor, n) ?? Number.NaN)} ms`]),
            series: delivered.map((row) => ({
              name: row.contender,
              color: colorOf(row.contender),
              slots: sizes.map((n): Slot => {
                const ratio = value(against(row, n));
                if (ratio === undefined) return { note: 'failed' };
                const lines = [`${ratio.toFixed(2)}×`, `${count(p50(row, n) ?? Number.NaN)} ms`];
                return { value: ratio, range: rangeOf(against(row, n)), lines };
              }),
            })),
            tick: (v) => `${v.toFixed(1)}×`,
            reference: 1,
          },
          top,
        ),
      );
    }
  }

  if (micro) {
    const us = (row: Row | undefined) => value(row?.cells['µs / request, valid token'])?.toFixed(1);
    const bare = micro.rows.find((row) => row.contender === FLOOR.name);
    drawn.push((top) =>
      rows(
        {
          title: 'A request with a valid token, in process: its time against bare axios',
          note:
            'Data calls answered by an in-process adapter, so that only axios and the interceptors run (tinybench). ' +
            `Bar: the ratio to bare axios in the same round (median${runsOf(bare?.cells['vs bare'])}); ${whisker}; ` +
            'after it, the time of a request.',
          rows: (contenders ?? []).flatMap((name) => {
            const row = micro.rows.find((each) => each.contender === name);
            const ratio = value(row?.cells['vs bare']);
            if (ratio === undefined) return [];
            const label = `${ratio.toFixed(2)}× (${us(row)} µs)`;
            return [{ name, color: colorOf(name), value: ratio, range: rangeOf(row?.cells['vs bare']), label }];
          }),
          tick: (v) => `${v.toFixed(1)}×`,
          reference: { value: 1, label: `bare axios = 1.00× (${us(bare)} µs)` },
        },
        top,
      ),
    );
  }
  return svgOf(drawn, caption);
}

/**
 * docs/benchmarks.md's fleet chart, from `npm run bench:fleet -- --holders`: per setup and number of holders, the
 * Redis commands and CPU per holder per expiry (flat is the goal), and the delay until every holder has the new pair.
 */
export function fleetChart(results: readonly HoldersResult[], machine: string): string {
  const sizes = [...new Set(results.map((r) => r.holders))];
  const setups = [...new Set(results.map((r) => r.setup))];
  const series = (measure: (r: HoldersResult) => number, format: (v: number) => string) =>
    setups.map((setup, s) => ({
      name: setup,
      color: COLORS[s % COLORS.length]!,
      slots: sizes.map((size): Slot => {
        const r = results.find((each) => each.setup === setup && each.holders === size);
        return r && { value: measure(r), lines: [format(measure(r))] };
      }),
    }));
  const groups = sizes.map((size) => [`${count(size)} holders`]);
  return svgOf(
    [
      (top) =>
        columns(
          {
            title: 'Redis commands per holder per expiry (flat is the goal)',
            groups,
            series: series(
              (r) => r.perHolderPerExpiry.commands,
              (v) => v.toFixed(2),
            ),
            tick: (v) => String(v),
            legend: true,
          },
          top,
        ),
      (top) =>
        columns(
          {
            title: 'Redis CPU per holder per expiry, µs (summed over the masters)',
            groups,
            series: series(
              (r) => r.perHolderPerExpiry.cpuUs,
              (v) => v.toFixed(0),
            ),
            tick: (v) => String(v),
            legend: true,
          },
          top,
        ),
      (top) =>
        columns(
          {
            title: 'From an expiry until every holder has the new pair: p99, ms (log scale)',
            groups,
            series: series(
              (r) => r.delayMs.p99,
              (v) => v.toFixed(0),
            ),
            tick: (v) => count(v),
            log: true,
            legend: true,
          },
          top,
        ),
    ],
    `npm run bench:fleet -- --holders, ${machine}`,
  );
}
