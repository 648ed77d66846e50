// `npm run test:mutation`: Stryker changes the renewal's decision and the guards one mutant at a time (a `<` for a
// `<=`, a rule's condition for `true`, a branch emptied) and runs the tests that cover each change; a mutant the tests
// do not notice (it survives) is a change of the decision no test would catch. The quick suites only
// (jest.quick.config.js): a mutant is run many times, and the suites that start redis-server, Chromium or other
// processes are too slow for that. Not part of `npm test` nor of CI: run it after changing the renewal or the guards.
/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  mutate: ['lib/account/renewal/**/*.ts', 'lib/account/guards/**/*.ts'],
  testRunner: 'jest',
  jest: {
    projectType: 'custom',
    configFile: 'jest.quick.config.js',
    // Each mutant runs only the tests that reached it, found by a first run of the whole quick suite, and only the
    // files that hold them; after the first failure the rest are skipped (scripts/mutation/). jest's related tests
    // would not narrow them: every suite reaches the renewal and the guards through attachTokenAuth.
    config: {
      testEnvironment: './scripts/mutation/environment.js',
      testRunner: '<rootDir>/scripts/mutation/jest-circus-runner.js',
      testSequencer: '<rootDir>/scripts/mutation/sequencer.js',
    },
    enableFindRelatedTests: false,
  },
  coverageAnalysis: 'perTest',
  // A mutant that does not type-check is no change a user could make: tsc says so, and it counts neither way. The
  // library alone (tsconfig.build.json) is checked: with the tests, examples and benchmarks, tsc took half the time.
  checkers: ['typescript'],
  tsconfigFile: 'tsconfig.build.json',
  // The mutated files alone skip tsc's checks under jest; the examples the docs include must stay as they are.
  disableTypeChecks: 'lib/**/*.ts',
  // A later run takes the results of the last (reports/stryker-incremental.json) for the mutants and tests that did not
  // change: after a new test, only the mutants it reaches run again.
  incremental: true,
  // Two processes on a machine of 2 cores: tsc beside one jest, then two jest once tsc has checked every mutant.
  concurrency: 2,
  // A test's own time, 1.5 times over, plus 20 s: a busy machine slows a run, and a mutant that never ends (a loop
  // whose exit was mutated away) still fails as a timeout, which counts as caught.
  timeoutFactor: 1.5,
  // The first run is the whole quick suite in one process, with Stryker counting what each test reaches.
  dryRunTimeoutMinutes: 30,
  timeoutMS: 20_000,
  reporters: ['clear-text', 'html', 'json', 'progress'],
  htmlReporter: { fileName: 'reports/mutation/index.html' },
  jsonReporter: { fileName: 'reports/mutation/mutation.json' },
  // The sandbox is a copy of the repository: what no quick suite reads stays out of it.
  ignorePatterns: ['dist', 'coverage', 'docs/api', '.tmp', '.runtimes', '.jest-cache', 'reports'],
  cleanTempDir: 'always',
};
