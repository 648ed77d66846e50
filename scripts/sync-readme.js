// Copies each file named by an `<!-- include: path -->` marker in the README into the code block under it, so the
// README shows the examples exactly as CI compiles and runs them. `readme.test.ts` fails when they differ.
const { readFileSync, writeFileSync } = require('node:fs');
const { join } = require('node:path');

const root = join(__dirname, '..');
const readmePath = join(root, 'README.md');
const readme = readFileSync(readmePath, 'utf8');
const synced = readme.replace(
  /(<!-- include: (\S+) -->\n```tsx?\n)[\s\S]*?```/g,
  (_, head, file) => `${head}${readFileSync(join(root, file), 'utf8')}\`\`\``,
);
if (synced !== readme) writeFileSync(readmePath, synced);
console.log(synced === readme ? 'README examples already match examples/' : 'README examples updated from examples/');
