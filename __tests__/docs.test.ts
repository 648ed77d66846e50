import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import axios from 'axios';
import { attachTokenAuth, DEFAULTS } from '../lib/index.js';

// What the README and the guides repeat of the code stays the code's: every default a table or a sentence states is
// read from DEFAULTS, the error codes from lib/contract/errors.ts, the option names and the handle's members from what
// attachTokenAuth takes and returns. A changed default fails here until the docs follow.
const root = join(__dirname, '..');
const read = (page: string): string => readFileSync(join(root, page), 'utf8');
const pages = [
  'README.md',
  ...readdirSync(join(root, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => `docs/${name}`),
];

type Option = keyof typeof DEFAULTS;
const isOption = (name: string): name is Option => Object.hasOwn(DEFAULTS, name);

/** The text of a page between its heading `heading` and the next heading of the same level or above. */
function section(page: string, heading: string): string {
  const text = read(page);
  const level = /^#+/.exec(heading)![0].length;
  const start = text.indexOf(`\n${heading}\n`);
  if (start < 0) throw new Error(`${page} has no "${heading}"`);
  const rest = text.slice(start + heading.length + 2);
  const next = new RegExp(`^#{1,${level}} `, 'm').exec(rest);
  return next ? rest.slice(0, next.index) : rest;
}

/** The cells of a Markdown table row, `\|` kept as a `|` inside its cell. */
function cellsOf(row: string): string[] {
  return row
    .trim()
    .replace(/^\||\|$/g, '')
    .split(/(?<!\\)\|/)
    .map((cell) => cell.trim().replace(/\\\|/g, '|'));
}

interface Table {
  page: string;
  header: string[];
  rows: string[][];
}

/** Every table of the pages (not those in code blocks). */
function tables(): Table[] {
  const found: Table[] = [];
  for (const page of pages) {
    const lines = read(page)
      .replace(/```[\s\S]*?```/g, '')
      .split('\n');
    for (let i = 0; i + 1 < lines.length; i += 1) {
      if (!lines[i]!.startsWith('|') || !/^\|[\s:|-]+\|$/.test(lines[i + 1]!.trim())) continue;
      const rows: string[][] = [];
      let j = i + 2;
      for (; j < lines.length && lines[j]!.startsWith('|'); j += 1) rows.push(cellsOf(lines[j]!));
      found.push({ page, header: cellsOf(lines[i]!), rows });
      i = j;
    }
  }
  return found;
}

const MS = { ms: 1, s: 1_000, min: 60_000, h: 3_600_000, d: 86_400_000 } as const;
const UNITS: Array<[RegExp, keyof typeof MS]> = [
  [/^(ms|milliseconds?)$/, 'ms'],
  [/^(s|secs?|seconds?)$/, 's'],
  [/^(min|mins|minutes?)$/, 'min'],
  [/^(h|hours?)$/, 'h'],
  [/^(d|days?)$/, 'd'],
];

/**
 * Every quantity `text` states, in its order: a duration in milliseconds (`45 min`, `60 s`, `45-minute`, `an hour`),
 * else the number as written (`2_700_000`, `1,000`, `3`). Words that are no quantity ("a third of") are skipped.
 */
function quantities(text: string): number[] {
  const plain = text.replace(/`/g, '');
  const found: number[] = [];
  const pattern = /\b(?:(an?)|(\d{1,3}(?:[_,]\d{3})+|\d+)(?:\.\d+)?)(?:[\s-]([a-z]+))?/gi;
  for (const match of plain.matchAll(pattern)) {
    const [, article, digits, word] = match;
    const unit = UNITS.find(([spelling]) => spelling.test(word ?? ''))?.[1];
    if (article !== undefined) {
      if (unit !== undefined) found.push(MS[unit]);
      continue;
    }
    const value = Number(digits!.replace(/[_,]/g, ''));
    found.push(unit === undefined ? value : value * MS[unit]);
  }
  return found;
}

/** What is wrong with `text` as a statement of option `name`'s default; undefined when it says the default. */
function defaultProblem(name: Option, text: string, { firstOnly = false } = {}): string | undefined {
  const value: unknown = DEFAULTS[name];
  if (name === 'tokenBudget') {
    const limits = DEFAULTS.tokenBudget;
    const plain = text.replace(/`/g, '');
    const window =
      /windowMs:\s*([\d_,]+)/.exec(plain)?.[1] ??
      /(?:an?|per|\d+)\s*(?:h|hours?|minutes?|min|days?)\b/.exec(plain)?.[0];
    const said = {
      windowMs: window === undefined ? undefined : quantities(window)[0],
      logins: Number(/logins:\s*(\d+)|(\d+) logins?/.exec(plain)?.slice(1).find(Boolean)),
      refreshes: Number(/refreshes:\s*(\d+)|(\d+) (?:token calls?|refreshes)/.exec(plain)?.slice(1).find(Boolean)),
    };
    const expected = { windowMs: limits.windowMs, logins: limits.logins, refreshes: limits.refreshes };
    return JSON.stringify(said) === JSON.stringify(expected)
      ? undefined
      : `says ${JSON.stringify(said)}, DEFAULTS has ${JSON.stringify(expected)}`;
  }
  if (typeof value === 'number') {
    const said = quantities(text);
    const checked = firstOnly ? said.slice(0, 1) : said;
    if (checked.length === 0) return `states no number, DEFAULTS has ${value}`;
    const wrong = checked.filter((quantity) => quantity !== value);
    return wrong.length === 0 ? undefined : `says ${wrong.join(', ')}, DEFAULTS has ${value}`;
  }
  if (typeof value === 'boolean')
    return text.includes(`\`${value}\``) && !text.includes(`\`${!value}\``) ? undefined : `does not say \`${value}\``;
  if (typeof value === 'string') return text.includes(`'${value}'`) ? undefined : `does not say '${value}'`;
  if (name === 'clock') return text.includes('Date.now') ? undefined : 'does not say Date.now';
  // The other functions are described in words; parseTokens is checked against what it reads, below.
  return undefined;
}

interface Statement {
  where: string;
  name: Option;
  text: string;
  firstOnly?: boolean;
}

/** Every place the docs state a default: options tables, "`option` (value…)" in prose, the README's defaults. */
function statements(): Statement[] {
  const found: Statement[] = [];
  for (const { page, header, rows } of tables()) {
    const defaultColumn = header.indexOf('Default');
    if (header[0] !== 'Option' || defaultColumn < 0) continue;
    for (const row of rows) {
      const names = [...row[0]!.matchAll(/`(\w+)`/g)].map((match) => match[1]!);
      if (!names.some(isOption)) continue;
      // One option per row, so that each default cell can be checked.
      expect([page, row[0], names.length]).toEqual([page, row[0], 1]);
      found.push({ where: `${page} table`, name: names[0] as Option, text: row[defaultColumn]! });
    }
  }
  for (const page of pages) {
    const prose = read(page).replace(/```[\s\S]*?```/g, '');
    for (const [, name = '', text = ''] of prose.matchAll(/`(\w+)` \((\d[^)]*)\)/g))
      if (isOption(name)) found.push({ where: `${page} prose`, name, text, firstOnly: true });
  }
  for (const bullet of section('README.md', '## Important defaults').split(/\n(?=- )/)) {
    const name = /^- `(\w+)`/.exec(bullet)?.[1];
    const bold = /\*\*(.+?)\*\*/.exec(bullet)?.[1];
    if (name !== undefined && isOption(name) && bold !== undefined)
      found.push({ where: 'README.md Important defaults', name, text: bold });
  }
  return found;
}

describe('the defaults the docs state are DEFAULTS', () => {
  const stated = statements();

  it('reads them where they are: the options reference, the README’s defaults, prose', () => {
    const where = new Set(stated.map((statement) => statement.where));
    expect([...where]).toEqual(
      expect.arrayContaining(['docs/options.md table', 'README.md Important defaults', 'docs/behaviour.md prose']),
    );
    // Every default is stated in the options reference.
    const inReference = stated.filter((statement) => statement.where === 'docs/options.md table').map((s) => s.name);
    expect(inReference.sort()).toEqual(Object.keys(DEFAULTS).sort());
  });

  it('states each as DEFAULTS has it, in whatever spelling (2_700_000, 45 min, 60 s, an hour)', () => {
    const problems = stated
      .map(({ where, name, text, firstOnly }) => {
        const problem = defaultProblem(name, text, { firstOnly });
        return problem && `${where}, \`${name}\`: "${text}" ${problem}`;
      })
      .filter(Boolean);
    expect(problems).toEqual([]);
  });

  it('reads the spellings the way the test means them', () => {
    expect(quantities('`2_700_000` (45 min)')).toEqual([2_700_000, 2_700_000]);
    expect(quantities('30 s, or a tenth of a shorter token’s life')).toEqual([30_000]);
    expect(quantities('an hour, a 45-minute token, 1,000 accounts')).toEqual([3_600_000, 2_700_000, 1_000]);
    // Written from DEFAULTS, so that these checks of the reading still hold when a default changes.
    const { windowMs, logins, refreshes } = DEFAULTS.tokenBudget;
    const minutes = windowMs / 60_000;
    expect(defaultProblem('tokenBudget', `${logins} logins and ${refreshes} token calls per ${minutes} min`)).toBe(
      undefined,
    );
    expect(defaultProblem('tokenBudget', `{ windowMs: ${windowMs}, logins: ${logins}, refreshes: ${refreshes} }`)).toBe(
      undefined,
    );
    expect(
      defaultProblem('tokenBudget', `${logins} logins and ${refreshes + 1} token calls per ${minutes} min`),
    ).toMatch(/says/);
    expect(defaultProblem('loginCooldownMs', `no automatic login for ${DEFAULTS.loginCooldownMs / 1000} s`)).toBe(
      undefined,
    );
    expect(
      defaultProblem('loginCooldownMs', `no automatic login for ${DEFAULTS.loginCooldownMs / 1000 + 1} s`),
    ).toMatch(/says/);
    expect(defaultProblem('allowInsecureHttp', `\`${!DEFAULTS.allowInsecureHttp}\``)).toMatch(/does not say/);
  });

  it('the options reference names every option attachTokenAuth takes, once', () => {
    let known: string[] = [];
    try {
      attachTokenAuth(axios.create({ baseURL: 'https://api.example.com' }), { notAnOption: true } as never);
    } catch (error) {
      known = /Known options: (.*)\.$/.exec((error as Error).message)![1]!.split(', ');
    }
    const reference = tables().find((table) => table.page === 'docs/options.md' && table.header[0] === 'Option')!;
    const listed = reference.rows.map((row) => /`(\w+)`/.exec(row[0]!)![1]);
    expect(known.length).toBeGreaterThan(20);
    expect([...listed].sort()).toEqual([...known].sort());
  });

  it('the options reference lists the keys the default parseTokens reads, and only those', () => {
    const row = tables()
      .find((table) => table.page === 'docs/options.md' && table.header[0] === 'Option')!
      .rows.find((cells) => cells[0] === '`parseTokens`')!;
    const listed = [...row[1]!.matchAll(/`(\w+)`(?:\/`(\w+)`)+/g)].map((match) =>
      match[0].split('/').map((key) => key.replace(/`/g, '')),
    );
    const [access = [], refresh = [], expires = []] = listed;
    const reads = (body: object) => DEFAULTS.parseTokens(body);
    const spellings = (base: string) => [base, `${base}_token`, `${base}Token`, `${base}-token`, `${base}_Token`];
    expect(spellings('access').filter((key) => reads({ [key]: 'a' })?.access === 'a')).toEqual(access);
    expect(spellings('refresh').filter((key) => reads({ access: 'a', [key]: 'r' })?.refresh === 'r')).toEqual(refresh);
    const expiry = ['expires_in', 'expiresIn', 'expires', 'expires_at', 'expiresAt', 'exp', 'ttl'];
    expect(expiry.filter((key) => reads({ access: 'a', [key]: 60 })?.expiresIn === 60)).toEqual(expires);
    // At the top level or under `data`, as the cell says.
    expect(row[1]).toMatch(/at the top level or under `data`/);
    for (const key of [...access]) expect(reads({ data: { [key]: 'a' } })?.access).toBe('a');
  });
});

describe('the error codes the docs list are lib/contract/errors.ts’s', () => {
  const codes = [...read('lib/contract/errors.ts').matchAll(/^\s*\| '([A-Z_]+)'/gm)].map((match) => match[1]!).sort();

  it('reads the closed set from the source', () => {
    expect(codes).toEqual(expect.arrayContaining(['LOGIN_REJECTED', 'LOGGED_OUT', 'ACCOUNT_INVALID']));
  });

  it('docs/failures.md has a row for each, and no other', () => {
    const table = tables().find(
      (candidate) => candidate.page === 'docs/failures.md' && candidate.header[0] === '`code`',
    );
    expect(table?.rows.map((row) => row[0]!.replace(/`/g, '')).sort()).toEqual(codes);
  });

  it('the README names each, and no other', () => {
    const named = [...section('README.md', '## Errors').matchAll(/`([A-Z][A-Z_]+)`/g)].map((match) => match[1]!);
    expect([...new Set(named)].sort()).toEqual(codes);
  });
});

it('the README’s handle table has a row for each member of what attachTokenAuth returns, and no other', () => {
  const auth = attachTokenAuth(axios.create({ baseURL: 'https://api.example.com' }), {});
  const members = Object.keys(auth).sort();
  const table = tables().find((candidate) => candidate.page === 'README.md' && candidate.header[0] === 'Member')!;
  const listed = table.rows.flatMap((row) => [...row[0]!.matchAll(/`(\w+)\(/g)].map((match) => match[1]!));
  expect(listed.sort()).toEqual(members);
  // auth.account(name) has the members that act on one account, each in the table.
  expect(Object.keys(auth.account('tenant-42')).every((member) => listed.includes(member))).toBe(true);
  auth.eject();
});
