import { execFile } from 'node:child_process';
import { join } from 'node:path';

// tsc over everything tsconfig.json includes: the library, the tests, the examples the docs show, the benchmarks, the
// scripts, the demo and the harness. ts-jest only transpiles (isolatedModules), so a type error in a test, or in an
// example no test runs, would pass unseen without it. A file of the suite, not a step before it: it takes one of jest's
// workers for its ~45 s, beside the files that mostly wait, instead of holding the whole run back on one core.

const root = join(__dirname, '..');

it('the library, tests, examples, benchmarks, scripts, demo and harness type-check (tsc -p tsconfig.json)', async () => {
  const output = await new Promise<string>((resolve) => {
    execFile(
      process.execPath,
      [require.resolve('typescript/bin/tsc'), '-p', 'tsconfig.json', '--pretty', 'false'],
      { cwd: root, encoding: 'utf8', maxBuffer: 16 * 1024 * 1024 },
      // tsc exits 2 with its errors on stdout: they are the test's message.
      (_error, stdout, stderr) => resolve(`${stdout}${stderr}`.trim()),
    );
  });

  expect(output).toBe('');
}, 300_000);
