// The test sequencer of `npm run test:mutation`. Stryker's jest runner names the tests that reached a mutant
// (`--testNamePattern`) but not their files, so jest would load every quick suite for every mutant, about 30 s
// before any test runs. This keeps the files that hold one of those tests, as the first run noted them
// (environment.js), and orders them so that the first to fail comes soon: the files that caught the latest mutants
// first, then the others by the time their tests took in the first run, quickest first.
const { existsSync, readFileSync } = require('node:fs');
// jest's own sequencer, which jest depends on.
const Sequencer = require('@jest/test-sequencer').default;
const { TESTS_FILE, catchers } = require('./tests.js');

/** Each test's full name, with the files that hold a test of that name and its time there; read once. */
let tests;

function testsByName() {
  if (!tests && existsSync(TESTS_FILE)) {
    tests = new Map();
    for (const line of readFileSync(TESTS_FILE, 'utf8').split('\n')) {
      if (!line) continue;
      const [file, name, ms] = JSON.parse(line);
      tests.set(name, [...(tests.get(name) ?? []), { file, ms }]);
    }
  }
  return tests;
}

class MutationSequencer extends Sequencer {
  constructor(options) {
    super(options);
    this.pattern = options.globalConfig.testNamePattern;
  }

  async sort(tests) {
    const sorted = await super.sort(tests);
    const byName = testsByName();
    if (!byName) return sorted;
    // As jest matches it: case-insensitive, against each test's full name. Without a pattern (a mutant that runs as its
    // module loads, such as a constant or a rule's step, which Stryker runs against every test), every file, in the
    // same order.
    const pattern = this.pattern ? new RegExp(this.pattern, 'i') : undefined;
    const msByFile = new Map();
    for (const [name, holders] of byName)
      if (!pattern || pattern.test(name))
        for (const { file, ms } of holders) msByFile.set(file, (msByFile.get(file) ?? 0) + ms);
    const latest = catchers();
    const rank = (file) => {
      const caught = latest.indexOf(file);
      return caught >= 0 ? caught - latest.length : msByFile.get(file);
    };
    return sorted.filter((test) => msByFile.has(test.path)).sort((a, b) => rank(a.path) - rank(b.path));
  }
}

module.exports = MutationSequencer;
