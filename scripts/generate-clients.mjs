// Generates the API clients of the generated-client recipes (docs/recipes.md) from __tests__/fixtures/orders-api.yaml,
// with the four generators at the versions package.json pins, into examples/generated/<generator>/:
// `npm run generate:clients`. `node scripts/generate-clients.mjs DIR` writes DIR/examples/generated/ instead, beside a
// copy of the orval mutator, so that generated-clients.test.ts can compare a fresh run with what is committed.
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, rmSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { generate } from 'orval';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const target = resolve(process.argv[2] ?? root);
const spec = join(root, '__tests__', 'fixtures', 'orders-api.yaml');
const generated = join(target, 'examples', 'generated');
const bin = (name) => join(root, 'node_modules', '.bin', name);
const run = (name, args) => execFileSync(bin(name), args, { cwd: target, stdio: ['ignore', 'ignore', 'inherit'] });

rmSync(generated, { recursive: true, force: true });
mkdirSync(generated, { recursive: true });

// openapi-typescript-codegen: the services on the global axios, and a client class named OrdersClient.
const codegen = ['-i', spec, '-c', 'axios', '--useOptions', '--useUnionTypes', '--indent', '2'];
run('openapi', [...codegen, '-o', join(generated, 'openapi-typescript-codegen')]);
run('openapi', [...codegen, '--name', 'OrdersClient', '-o', join(generated, 'openapi-typescript-codegen-client')]);

// swagger-typescript-api: one Api.ts whose class makes its own axios instance.
run('swagger-typescript-api', [
  'generate',
  '--path',
  spec,
  '--output',
  join(generated, 'swagger-typescript-api'),
  '--axios',
  '--module-name-first-tag',
  '--enum-style=union',
  '--type-only-imports',
  '--silent',
]);

// @hey-api/openapi-ts: its axios client, bundled into the output.
run('openapi-ts', [
  '-i',
  spec,
  '-o',
  join(generated, 'hey-api'),
  '-c',
  '@hey-api/client-axios',
  '--silent',
  '--no-log-file',
]);

// orval: its axios functions, sending through the custom instance of examples/orval.ts.
const mutator = join(target, 'examples', 'orval.ts');
if (target !== root) copyFileSync(join(root, 'examples', 'orval.ts'), mutator);
await generate({
  input: { target: spec },
  output: {
    target: join(generated, 'orval', 'orders.ts'),
    client: 'axios-functions',
    override: { mutator: { path: mutator, name: 'customInstance' } },
  },
});
