// The test runner of `npm run test:mutation`: jest-circus, as jest's own, but a file that comes after a test caught the
// mutant is not loaded at all (see environment.js): with the library's modules, loading one costs about half a second.
// Its name says jest-circus, which Stryker's jest runner looks for before it counts what each test reaches.
// jest's own test runner, which jest depends on.
const circus = require('jest-circus/runner').default;
const { createEmptyTestResult } = require('@jest/test-result');
const { isCaught } = require('./tests.js');

module.exports = async function mutationRunner(globalConfig, config, environment, runtime, testPath, send) {
  if (isCaught()) return { ...createEmptyTestResult(), skipped: true, testFilePath: testPath };
  return circus(globalConfig, config, environment, runtime, testPath, send);
};
