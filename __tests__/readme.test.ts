import { readFileSync } from 'node:fs';
import { join } from 'node:path';

// README examples are copies of files under examples/, which `npm test` type-checks: they cannot drift.
const root = join(__dirname, '..');
const readme = readFileSync(join(root, 'README.md'), 'utf8');
const includes = [...readme.matchAll(/<!-- include: (\S+) -->\n```tsx?\n([\s\S]*?)```/g)];

it('shows at least the quick start from examples/', () => {
  expect(includes.map((match) => match[1])).toContain('examples/quick-start.ts');
});

it.each(includes.map((match) => [match[1]!, match[2]!]))('shows %s as it is', (file, block) => {
  expect(block).toBe(readFileSync(join(root, file), 'utf8'));
});

it('starts with the commands a newcomer runs', () => {
  const head = readme.split('\n').slice(0, 12).join('\n');
  expect(head).toMatch(/npm install/);
  expect(head).toMatch(/npm test/);
});
