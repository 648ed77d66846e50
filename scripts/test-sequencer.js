// jest's order of test files, the longest ones first, or, with TEST_SHUFFLE set, a shuffled one: a file that leaves something behind in its
// worker (nock armed on Node's http, a server, a patched Node module) breaks whichever file runs after it there, and a
// fixed order hides that. TEST_SHUFFLE=<integer> replays one order; TEST_SHUFFLE=random draws a seed.
// Either way the seed is printed, so a failing order can be run again (with --maxWorkers=1, every file shares one
// worker with all the files before it).
const { basename } = require('node:path');
const Sequencer = require('@jest/test-sequencer').default;

/**
 * The files that take longest, most of it waiting (outages, restarts, fleets of processes, a browser, other runtimes),
 * longest first, as one worker timed them (issue 43): they start first, so that they overlap with the rest rather than
 * run alone at the end. jest's own order, by the durations in its cache, has none on a fresh clone: it goes by size.
 */
const LONGEST_FIRST = [
  'redis-clients.test.ts',
  // tsc, on one core for most of a minute: beside the lease waits of redis-clients, not at the end of the run.
  'typecheck.test.ts',
  'store-outage-go-alone.test.ts',
  'sealed-fleet.test.ts',
  'store-outage.test.ts',
  'redis-restart.test.ts',
  'postgres-fleet.test.ts',
  'runtimes.test.ts',
  'browser.test.ts',
];

/** mulberry32: a small seeded generator, enough to replay an order from its seed. */
function generator(seed) {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function seedOf(value) {
  if (value === 'random') return Math.floor(Math.random() * 2 ** 31);
  if (/^\d+$/.test(value)) return Number(value);
  throw new Error(`TEST_SHUFFLE must be an integer seed or 'random', not ${JSON.stringify(value)}`);
}

class ShuffleSequencer extends Sequencer {
  sort(tests) {
    const value = process.env.TEST_SHUFFLE;
    if (!value) {
      const rank = (test) => {
        const at = LONGEST_FIRST.indexOf(basename(test.path));
        return at < 0 ? LONGEST_FIRST.length : at;
      };
      // Array.prototype.sort is stable: the rest keep jest's order.
      return [...super.sort(tests)].sort((a, b) => rank(a) - rank(b));
    }
    const seed = seedOf(value);
    const random = generator(seed);
    // From one order that does not depend on jest's cache of durations, so that a seed means one order everywhere.
    const shuffled = [...tests].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
    for (let i = shuffled.length - 1; i > 0; i -= 1) {
      const j = Math.floor(random() * (i + 1));
      [shuffled[i], shuffled[j]] = [shuffled[j], shuffled[i]];
    }
    process.stderr.write(`Test files shuffled: TEST_SHUFFLE=${seed}\n`);
    return shuffled;
  }
}

module.exports = ShuffleSequencer;
