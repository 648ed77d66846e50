// What the test environment, the test runner and the sequencer of `npm run test:mutation` share. All three run in
// Stryker's test runner process, in its sandbox, one jest run after the other: the first run of the quick suites (no
// mutant), then one run per mutant.
const { join } = require('node:path');

/** One line per test, `[file, full name, ms]`, written by the first run. */
const TESTS_FILE = join(process.cwd(), '.tmp', 'mutation-tests.jsonl');

/** The mutant this run is for, as Stryker's jest runner sets it; undefined in the first run, which has none. */
function activeMutant() {
  return process.env.__STRYKER_ACTIVE_MUTANT__;
}

/** A test's full name as jest matches `--testNamePattern` against it: its describe blocks' names, then its own. */
function fullName(test) {
  const names = [];
  for (let block = test; block && block.parent; block = block.parent) names.unshift(block.name);
  return names.join(' ');
}

/** The mutant a test has failed for, which ends that mutant's run; and the files that caught one, latest first. */
const caught = { mutant: undefined, files: [] };

/** A test of `file` failed: the mutant of this run is caught. */
function noteCaught(file) {
  caught.mutant = activeMutant();
  caught.files = [file, ...caught.files.filter((known) => known !== file)];
}

/** Whether a test failed in this mutant's run: whatever is left of it would change nothing. */
function isCaught() {
  return caught.mutant !== undefined && caught.mutant === activeMutant();
}

/** The files that caught a mutant, latest first: the next mutant, often on the same line, tries them first. */
function catchers() {
  return caught.files;
}

module.exports = { TESTS_FILE, activeMutant, fullName, noteCaught, isCaught, catchers };
