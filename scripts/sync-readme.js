// Copies each file named by an `<!-- include: path -->` marker in the README and the guides under docs/ into the
// code block under it, so they show the examples exactly as CI compiles and runs them. `readme.test.ts` fails when
// they differ. Paths in a marker are from the repository's root.
const { readFileSync, readdirSync, writeFileSync } = require('node:fs');
const { join } = require('node:path');

const root = join(__dirname, '..');
const pages = [
  'README.md',
  ...readdirSync(join(root, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => `docs/${name}`),
];
let updated = 0;
for (const page of pages) {
  const path = join(root, page);
  const text = readFileSync(path, 'utf8');
  const synced = text.replace(
    /(<!-- include: (\S+) -->\n```tsx?\n)[\s\S]*?```/g,
    (_, head, file) => `${head}${readFileSync(join(root, file), 'utf8')}\`\`\``,
  );
  if (synced !== text) {
    writeFileSync(path, synced);
    updated += 1;
  }
}
console.log(
  updated === 0
    ? 'Examples in the docs already match examples/'
    : `Examples updated from examples/ in ${updated} page(s)`,
);
