// `npm run bench`: this package side by side with axios-auth-refresh, axios-jwt and bare axios, on the same work
// against the emulator over loopback. Prints a table per scenario and writes bench/results/bench.json and
// bench/results/bench.svg. Not part of `npm test`: numbers are reported, never asserted.
//
//   npm run bench                 every scenario in full (about 10 minutes on 2 cores)
//   npm run bench -- --quick      smaller runs of every scenario, in under a minute (55 s on 2 cores)
//   npm run bench -- --only 2,3   some scenarios (their JSON in bench/results/bench-only.json)
//   npm run bench -- --report     the tables and chart again from bench/results/bench.json
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

const { values } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    only: { type: 'string' },
    report: { type: 'boolean', default: false },
  },
});

/** `--report`: the tables and the chart again, from the last full run's JSON, without measuring anything. */
async function report(): Promise<void> {
  const file = join(__dirname, 'results', 'bench.json');
  const saved = JSON.parse(await readFile(file, 'utf8')) as {
    machine: string;
    date: string;
    results: ScenarioResult[];
  };
  console.log(`From ${file}: ${saved.machine}, ${saved.date}\n`);
  for (const result of saved.results) console.log(`${result.id}. ${result.title}\n\n${table(result)}\n`);
  await writeFile(join(__dirname, 'results', 'bench.svg'), chart(saved.results, saved.machine));
}

async function main(): Promise<void> {
  if (values.report) return report();
  const mode = { quick: values.quick };
  const only = values.only?.split(',').map(Number);
  const machine = `${availableParallelism()} cores (${cpus()[0]?.model.trim() ?? 'unknown CPU'}), Node ${process.version}, ${process.platform}`;
  console.log(
    `npm run bench${mode.quick ? ' --quick' : ''}: ${machine}\nMedians over runs, [smallest–largest] where the runs differ.\n`,
  );
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
  // Some scenarios alone go to a file of their own: bench.json stays the last run of them all, which --report draws.
  const suffix = `${mode.quick ? '-quick' : ''}${only ? '-only' : ''}`;
  await writeFile(
    join(directory, `bench${suffix}.json`),
    `${JSON.stringify({ machine, date: new Date().toISOString(), quick: mode.quick, results }, null, 2)}\n`,
  );
  if (!only) await writeFile(join(directory, `bench${suffix}.svg`), chart(results, machine));
}

main().catch((error: unknown) => {
  console.error(`The benchmark stopped: ${error instanceof Error ? error.message : String(error)}`);
  process.exitCode = 1;
});
