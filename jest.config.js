const { join } = require('node:path');

// AXIOS_PACKAGE=DIR runs the tests on the axios package in DIR instead of the repository's own (the newest): `npm run
// test:axios-range` points it at node_modules/axios-oldest, the oldest axios of the peer range. Every import of
// 'axios', the plugin's, the tests' and their dependencies', gets that one copy, as in an app with one axios.
const axiosPackage = process.env.AXIOS_PACKAGE;

/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/__tests__'],
  testMatch: ['**/*.test.ts'],
  transform: { '^.+\\.ts$': ['ts-jest', { tsconfig: 'tsconfig.json' }] },
  // Sources import './x.js' (what ESM needs at run time); jest resolves that to the .ts file.
  moduleNameMapper: {
    '^(\\.{1,2}/.*)\\.js$': '$1',
    '^axios-token-keeper$': '<rootDir>/lib/index.ts',
    '^axios-token-keeper/emulator$': '<rootDir>/lib/emulator/index.ts',
    '^axios-token-keeper/file-store$': '<rootDir>/lib/stores/file/index.ts',
    '^axios-token-keeper/redis-store$': '<rootDir>/lib/stores/redis/index.ts',
    '^axios-token-keeper/postgres-store$': '<rootDir>/lib/stores/postgres/index.ts',
    '^axios-token-keeper/browser-store$': '<rootDir>/lib/stores/browser/index.ts',
    '^axios-token-keeper/sealing$': '<rootDir>/lib/stores/sealing/index.ts',
    '^axios-token-keeper/presets$': '<rootDir>/lib/presets.ts',
    '^axios-token-keeper/otel$': '<rootDir>/lib/otel.ts',
    '^axios-token-keeper/dpop$': '<rootDir>/lib/dpop/index.ts',
    '^axios-token-keeper/client-auth$': '<rootDir>/lib/client-auth/index.ts',
    ...(axiosPackage ? { '^axios$': join(axiosPackage, 'dist', 'node', 'axios.cjs') } : {}),
  },
  testTimeout: 20000,
  // Two files at a time on a machine of 2 cores (jest's default there is one): many files mostly wait (a store's
  // outage, a restart, a fleet of processes, a browser), and they overlap with the ones that compute. Three made the
  // fleets' processes and Chromium contend for the cores, and bounds on a fleet's latency failed under load.
  // `npm run test:quick` passes its own.
  maxWorkers: 2,
  // jest's cache inside the clone (gitignored), not in the machine's temporary folder, where it outlives clones: a
  // fresh clone runs cold in CI as on a newcomer's machine (the cache decides the order of files, hence which files
  // share a worker).
  cacheDirectory: '<rootDir>/.jest-cache',
  // jest's own order of files, or a shuffled one with TEST_SHUFFLE=<seed> (CONTRIBUTING.md).
  testSequencer: '<rootDir>/scripts/test-sequencer.js',
  // The package packed once per run, in the background, for the suites that use it as a consumer does
  // (scripts/test-pack.js).
  globalSetup: '<rootDir>/scripts/test-pack.js',
  globalTeardown: '<rootDir>/scripts/test-pack-teardown.js',
  setupFilesAfterEnv: [
    // Records every error, event payload and console line of each test file and fails the file if a test secret is in
    // one.
    '<rootDir>/__tests__/helpers/scan-secrets.ts',
    // Arms nock for the files that import it, around each test, and restores it after every file.
    '<rootDir>/__tests__/helpers/nock-per-file.ts',
  ],
  reporters: ['default', '<rootDir>/scripts/summary-reporter.js'],
};
