// `npm run bench`: this package side by side with axios-auth-refresh, axios-jwt and bare axios, on the same work
// against the emulator over loopback. Prints a table per scenario and writes bench/results/bench.json and
// bench/results/bench.svg. Not part of `npm test`: numbers are reported, never asserted.
//
//   npm run bench                 every scenario in full (about 10 minutes on 2 cores)
//   npm run bench -- --quick      smaller runs of every scenario, in under a minute (55 s on 2 cores)
//   npm run bench -- --only 2,3   some scenarios (their JSON in bench/results/bench-only.json)
//   npm run bench -- --chart      the chart's scenarios alone (2 and 6): bench/results/chart.json and the chart
//   npm run bench -- --report     the tables again from bench/results/bench.json, the chart from chart.json
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { availableParallelism, cpus } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { chart } from './chart.js';
import { table } from './report.js';
import { accountsBurst, accountsCycled, accountsHeld } from './accounts.js';
import { accountsFleet, redisPerRenewal } from './accounts-fleet.js';
import { expiryBurst, late401s, longRun, memory, micro, overhead } from './scenarios.js';
import type { ScenarioResult } from './scenarios.js';

/** The scenarios, numbered from 1 in this order (`--only 2,7`). */
const SCENARIOS = [
  overhead,
  expiryBurst,
  late401s,
  longRun,
  memory,
  micro,
  accountsBurst,
  accountsHeld,
  accountsCycled,
  accountsFleet,
  redisPerRenewal,
] as const;

/** The scenarios the chart draws (chart.ts): a full run or `--chart` keeps them in chart.json, for `--report`. */
const CHARTED = [expiryBurst, micro].map((scenario) => SCENARIOS.indexOf(scenario) + 1);

const { values } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    only: { type: 'string' },
    chart: { type: 'boolean', default: false },
    report: { type: 'boolean', default: false },
  },
});

/** What a run writes: its results, with the machine, the day and the command that measured them. */
interface Saved {
  machine: string;
  date: string;
  quick: boolean;
  /** Absent in the runs saved before `--chart` existed. */
  command?: string;
  results: ScenarioResult[];
}

/** The chart's caption: which run it is drawn from. */
const captionOf = (saved: Saved) =>
  `${saved.command ?? 'npm run bench'}, ${saved.date.slice(0, 10)}, ${saved.machine}. Medians over runs.`;

/**
 * `--report`: the tables again, from the last full run's JSON, and the chart again, from the run it was drawn from,
 * without measuring anything.
 */
async function report(): Promise<void> {
  const file = join(__dirname, 'results', 'bench.json');
  const saved = JSON.parse(await readFile(file, 'utf8')) as Saved;
  console.log(`From ${file}: ${saved.machine}, ${saved.date}\n`);
  for (const result of saved.results) console.log(`${result.id}. ${result.title}\n\n${table(result)}\n`);
  const charted = JSON.parse(await readFile(join(__dirname, 'results', 'chart.json'), 'utf8')) as Saved;
  await writeFile(join(__dirname, 'results', 'bench.svg'), chart(charted.results, captionOf(charted)));
}

async function main(): Promise<void> {
  if (values.report) return report();
  if (values.chart && values.only) throw new Error('--chart runs the scenarios of the chart: it takes no --only.');
  const mode = { quick: values.quick };
  const only = values.chart ? CHARTED : values.only?.split(',').map(Number);
  const machine = `${availableParallelism()} cores (${cpus()[0]?.model.trim() ?? 'unknown CPU'}), Node ${process.version}, ${process.platform}`;
  const args = process.argv.slice(2);
  const command = `npm run bench${args.length > 0 ? ` -- ${args.join(' ')}` : ''}`;
  console.log(`${command}: ${machine}\nMedians over runs, [smallest–largest] where the runs differ.\n`);
  const results: ScenarioResult[] = [];
  for (const scenario of SCENARIOS) {
    const id = SCENARIOS.indexOf(scenario) + 1;
    if (only && !only.includes(id)) continue;
    const started = Date.now();
    const result = await scenario(mode);
    results.push(result);
    console.log(
      `${result.id}. ${result.title}\n   goal: ${result.goal}\n\n${table(result)}\n${result.notes.map((note) => `   ${note}\n`).join('')}   (${((Date.now() - started) / 1000).toFixed(0)} s)\n`,
    );
  }
  const directory = join(__dirname, 'results');
  await mkdir(directory, { recursive: true });
  const quick = mode.quick ? '-quick' : '';
  const date = new Date().toISOString();
  const saved = (part: ScenarioResult[]): Saved => ({
    machine,
    date,
    quick: mode.quick,
    command,
    results: part,
  });
  const write = (name: string, part: ScenarioResult[]) =>
    writeFile(join(directory, name), `${JSON.stringify(saved(part), null, 2)}\n`);
  // Some scenarios alone go to a file of their own: bench.json stays the last run of them all, which --report prints.
  if (!values.chart) await write(`bench${quick}${only ? '-only' : ''}.json`, results);
  if (values.chart || !only) {
    const charted = results.filter((result) => CHARTED.includes(result.id));
    await write(`chart${quick}.json`, charted);
    await writeFile(join(directory, `bench${quick}.svg`), chart(charted, captionOf(saved(charted))));
  }
}

main().catch((error: unknown) => {
  console.error(`The benchmark stopped: ${error instanceof Error ? error.message : String(error)}`);
  process.exitCode = 1;
});
