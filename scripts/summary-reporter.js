// Prints jest's outcome as one plain closing line, `N passed, N failed[, N skipped]`, which CI reads.
class SummaryReporter {
  onRunComplete(_contexts, results) {
    // A test file that could not run (it does not compile, or lacks the redis-server or Chromium it needs) counts as
    // one failed: jest never collected its tests, so there is no honest count of them to add instead.
    const failed = results.numFailedTests + results.numRuntimeErrorTestSuites;
    const skipped = results.numPendingTests + results.numTodoTests;
    process.stdout.write(
      `\n${results.numPassedTests} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}\n`,
    );
  }
}

module.exports = SummaryReporter;
