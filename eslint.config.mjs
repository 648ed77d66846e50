// @ts-check
// ESLint with typescript-eslint's type-aware rules over every TypeScript file tsconfig.json type-checks.
// recommendedTypeChecked, not strictTypeChecked: strict's extra findings here were mostly style (numbers in template
// strings, void-returning arrow shorthands) or asked to drop the run-time checks `validateOptions` makes of options
// that JavaScript callers pass untyped.
import js from '@eslint/js';
import { defineConfig, globalIgnores } from 'eslint/config';
import tseslint from 'typescript-eslint';

/** The Node globals the plain JavaScript files use (this repository has no `globals` package). */
const nodeGlobals = {
  console: 'readonly',
  process: 'readonly',
  require: 'readonly',
  module: 'writable',
  exports: 'writable',
  __dirname: 'readonly',
  __filename: 'readonly',
};

export default defineConfig(
  globalIgnores([
    'dist/',
    'docs/',
    '.tmp/',
    '.jest-cache/',
    'coverage/',
    'bench/results/',
    // npm run test:mutation's sandbox and reports.
    '.stryker-tmp/',
    'reports/',
    // Consumer projects of the packed tarball, type-checked against it by package.test.ts, not against lib/.
    '__tests__/fixtures/consumer/',
    // The generators' output as they write it (`npm run generate:clients`); tsc still type-checks it.
    'examples/generated/',
  ]),
  js.configs.recommended,
  tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
  },
  {
    // The library emits events and lets its users decide what to log; its public types never say `any`.
    files: ['lib/**/*.ts'],
    rules: {
      'no-console': 'error',
      '@typescript-eslint/no-explicit-any': 'error',
    },
  },
  {
    // Config files and CommonJS scripts, run by Node as they are: outside the TypeScript project, so not type-aware.
    files: ['**/*.js', '**/*.cjs', '**/*.mjs'],
    extends: [tseslint.configs.disableTypeChecked],
    languageOptions: { globals: nodeGlobals },
  },
  {
    files: ['**/*.js', '**/*.cjs'],
    languageOptions: { sourceType: 'commonjs' },
    rules: {
      // These files are CommonJS, loaded by Node and jest as they are: require() is their import.
      '@typescript-eslint/no-require-imports': 'off',
    },
  },
  {
    // The README shows this file verbatim (readme.test.ts compares them), so it reads as a user's first code and
    // cannot carry lint comments: an async credentials callback, and axios' response data as axios types it.
    files: ['examples/quick-start.ts'],
    rules: {
      '@typescript-eslint/require-await': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
    },
  },
);
