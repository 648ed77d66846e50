import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';

// The README and the guides stay honest: short where a user lands, their examples copies of files `npm test`
// type-checks, and every link they hold pointing at a file and a heading that exist, on GitHub and in the package.
const root = join(__dirname, '..');
const read = (page: string): string => readFileSync(join(root, page), 'utf8');
const guides = readdirSync(join(root, 'docs'))
  .filter((name) => name.endsWith('.md'))
  .map((name) => `docs/${name}`);
const pages = ['README.md', 'CONTRIBUTING.md', 'ARCHITECTURE.md', ...guides];
const readme = read('README.md');

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces as hyphens. */
function slug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}_\- ]/gu, '')
    .replace(/ /g, '-');
}

function anchorsOf(page: string): Set<string> {
  const anchors = new Set<string>();
  let fenced = false;
  for (const line of read(page).split('\n')) {
    if (line.startsWith('```')) fenced = !fenced;
    const heading = /^#{1,6} (.*)$/.exec(line);
    if (!fenced && heading) anchors.add(slug(heading[1]!));
  }
  return anchors;
}

/** The relative links of a page (not those inside code blocks): [text](target). */
function linksOf(page: string): string[] {
  const prose = read(page).replace(/```[\s\S]*?```/g, '');
  return [...prose.matchAll(/\]\(([^)\s]+)\)/g)]
    .map((match) => match[1]!)
    .filter((target) => !/^[a-z]+:/i.test(target));
}

describe('README.md', () => {
  it('stays short: under 16 KB, the depth in docs/', () => {
    expect(Buffer.byteLength(readme)).toBeLessThan(16 * 1024);
  });

  it('shows the user’s install line and the newcomer’s two commands in its first screen', () => {
    const head = readme.split('\n').slice(0, 20).join('\n');
    expect(head).toMatch(/npm install axios-token-keeper axios/);
    expect(head).toMatch(/npm install && npm start/);
    expect(head).toMatch(/npm test/);
    // Nothing else to type: `npm test` installs what its suites need (scripts/test-needs.mjs).
    expect(head).not.toMatch(/apt-get/);
  });

  it('links only to what the package ships, so its links work on npm too', () => {
    const shipped = (JSON.parse(read('package.json')) as { files: string[] }).files;
    const inPackage = (file: string) =>
      shipped.some((entry) =>
        entry.includes('*')
          ? new RegExp(`^${entry.replace(/\./g, '\\.').replace(/\*/g, '[^/]*')}$`).test(file)
          : file === entry || file.startsWith(`${entry}/`),
      );
    const files = linksOf('README.md')
      .map((target) => target.split('#')[0]!)
      .filter((file) => file !== '');
    expect(files.length).toBeGreaterThan(5);
    for (const file of files) expect([file, inPackage(file)]).toEqual([file, true]);
  });
});

describe.each(pages)('%s', (page) => {
  it('shows each example it includes as the file is', () => {
    for (const [, file, block] of read(page).matchAll(/<!-- include: (\S+) -->\n```tsx?\n([\s\S]*?)```/g))
      expect([file, block]).toEqual([file, read(file!)]);
  });

  it('links to files and headings that exist', () => {
    for (const target of linksOf(page)) {
      const [path = '', anchor] = target.split('#');
      const file = path === '' ? page : normalize(relative(root, join(root, dirname(page), path)));
      expect([target, existsSync(join(root, file))]).toEqual([target, true]);
      if (anchor !== undefined && file.endsWith('.md'))
        expect([target, anchorsOf(file).has(anchor)]).toEqual([target, true]);
    }
  });
});

it('the README shows at least the quick start, and the recipes every example meant to be read', () => {
  const shown = pages.flatMap((page) => [...read(page).matchAll(/<!-- include: (\S+) -->/g)].map((match) => match[1]));
  expect(shown).toContain('examples/quick-start.ts');
  // The recipes; the generated clients under examples/generated/ are what the generated-client recipes import.
  const examples = readdirSync(join(root, 'examples'), { withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => `examples/${entry.name}`);
  for (const example of examples) expect([example, shown.includes(example)]).toEqual([example, true]);
});
