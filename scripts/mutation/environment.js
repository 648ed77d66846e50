// The test environment of `npm run test:mutation`: jest's node environment, and two things more for Stryker's runs,
// which run every suite in one process. In the first run (no mutant) it notes which file holds each test, and its
// time, for sequencer.js. In a mutant's run it skips every test left once one has failed (jest-circus-runner.js skips
// the files left): that test caught the mutant, and the others would only cost time, since Stryker's jest runner
// cannot use jest's `bail` and runs every test that reached the mutant, up to hundreds.
const { appendFileSync, mkdirSync } = require('node:fs');
const { dirname } = require('node:path');
// jest's own node environment, which jest depends on.
const { TestEnvironment } = require('jest-environment-node');
const { TESTS_FILE, activeMutant, fullName, isCaught, noteCaught } = require('./tests.js');

class MutationEnvironment extends TestEnvironment {
  constructor(config, context) {
    super(config, context);
    this.testPath = context.testPath;
  }

  async handleTestEvent(event, state) {
    await super.handleTestEvent?.(event, state);
    if (activeMutant() === undefined) {
      if (event.name === 'test_done') {
        mkdirSync(dirname(TESTS_FILE), { recursive: true });
        const line = [this.testPath, fullName(event.test), event.test.duration ?? 0];
        appendFileSync(TESTS_FILE, `${JSON.stringify(line)}\n`);
      }
    } else if (event.name === 'test_start' && isCaught()) {
      event.test.mode = 'skip';
    } else if (event.name === 'test_done' && event.test.errors.length > 0) {
      noteCaught(this.testPath);
    }
  }
}

module.exports = MutationEnvironment;
