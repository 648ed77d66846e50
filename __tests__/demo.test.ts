import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import axios from 'axios';
import { readCommandLine, UsageError } from '../lib/emulator/command-line.js';
import { parseCount, parseDuration, parsePort } from '../lib/emulator/durations.js';
import { root, runScript, serveScript, stopScriptsAfterEach } from './helpers/scripts.js';

// `npm start` runs demo/demo.ts and `npm run emulator` demo/emulator.ts: here they run as those commands run them.
const demo = join(root, 'demo', 'demo.ts');
const emulatorCommand = join(root, 'demo', 'emulator.ts');

stopScriptsAfterEach();

describe('npm start', () => {
  it('drives requests across expiries on the emulator and exits 0 with one login and one refresh per expiry', async () => {
    const args = ['--expiries', '2', '--access-ttl', '0.6s', '--concurrency', '15', '--interval', '60ms'];
    const { code, stdout } = await runScript(demo, args);

    expect(code).toBe(0);
    expect(stdout).toMatch(/access tokens live 600 ms: \d+ waves of 15 concurrent requests, every 60 ms/);
    const row = (name: string) => new RegExp(`\\| ${name} +\\| +(\\S+) \\|`).exec(stdout)?.[1];
    expect(row('failed')).toBe('0');
    expect(row('logins')).toBe('1');
    expect(row('refreshes')).toBe(row('expiries \\(emulator\\)'));
    expect(Number(row('refreshes'))).toBeGreaterThanOrEqual(1);
    expect(row('one login, one refresh per expiry')).toBe('yes');
  });

  it('refuses to run against a real deployment without credentials in the environment', async () => {
    const env = { TOKEN_KEEPER_USERNAME: '', TOKEN_KEEPER_PASSWORD: '' };
    const { code, stderr } = await runScript(demo, ['--base-url', 'http://127.0.0.1:9'], { env });

    expect(code).toBe(2);
    expect(stderr.split('\n')[0]).toBe(
      'Set TOKEN_KEEPER_USERNAME and TOKEN_KEEPER_PASSWORD to run against a real deployment.',
    );
  });
});

describe.each([
  ['npm start', demo, ['--access-ttl', '1.5'], '--access-ttl 1.5 needs a unit, such as 1.5s or 1.5ms'],
  ['npm run emulator', emulatorCommand, ['--prot', '9000'], 'unknown option --prot (did you mean --port?)'],
])('%s: the command line', (command, script, wrong, line) => {
  it.each(['--help', '-h'])(`${command} -- %s prints the usage and exits 0`, async (flag) => {
    const { code, stdout, stderr } = await runScript(script, [flag]);

    expect(code).toBe(0);
    expect(stdout.split('\n')[0]).toBe(`Usage: ${command} -- [options]`);
    expect(stdout).toContain('  -h, --help ');
    expect(stdout).toContain('A <time> takes its unit: 300ms, 1.5s, 45m or 2h.');
    expect(stderr).toBe('');
  });

  it(`${command} -- ${wrong.join(' ')} names the mistake in one line, prints the usage and exits 2`, async () => {
    const { code, stdout, stderr } = await runScript(script, wrong);

    expect(code).toBe(2);
    expect(stderr.split('\n').slice(0, 3)).toEqual([line, '', `Usage: ${command} -- [options]`]);
    expect(stderr).not.toMatch(/^\s+at /m);
    expect(stdout).toBe('');
  });
});

it.each([
  [['--expiries', '0'], '--expiries takes a whole number of 1 or more, got "0"'],
  [
    ['--base-url', 'api.example.com'],
    '--base-url takes an absolute URL such as https://api.example.com, got "api.example.com"',
  ],
])('npm start -- %j: a bad value exits 2 with the line that names its flag', async (args, line) => {
  const { code, stderr } = await runScript(demo, args);

  expect(code).toBe(2);
  expect(stderr.split('\n')[0]).toBe(line);
});

describe('reading a command line', () => {
  const options = {
    port: { type: 'string', default: '8080' },
    'access-ttl': { type: 'string' },
    jwt: { type: 'boolean', default: false },
  } as const;

  it('reads the flags with their defaults, or nothing when they ask for help', () => {
    expect(readCommandLine(options, ['--access-ttl', '2s', '--jwt'])).toEqual({
      port: '8080',
      'access-ttl': '2s',
      jwt: true,
    });
    expect(readCommandLine(options, ['--port=9000'])).toEqual({ port: '9000', jwt: false });
    expect(readCommandLine(options, ['--prot', '9000', '--help'])).toBeUndefined();
    expect(readCommandLine(options, ['-h'])).toBeUndefined();
  });

  it.each([
    [['--prot', '9000'], 'unknown option --prot (did you mean --port?)'],
    [['--verbose'], 'unknown option --verbose'],
    [['-x'], 'unknown option -x'],
    [['--port'], '--port needs a value'],
    [['--port', '--jwt'], '--port needs a value'],
    [['--jwt=yes'], '--jwt takes no value'],
    [['9000'], 'unexpected argument "9000"'],
  ])('%j: %s', (args, line) => {
    expect(() => readCommandLine(options, args)).toThrow(new UsageError(line));
  });
});

describe('npm run emulator', () => {
  it('serves the token service until SIGTERM, then exits 0', async () => {
    const { match, stop } = await serveScript(emulatorCommand, ['--port', '0', '--access-ttl', '1.5s'], /on (\S+) /);
    const url = match[1]!;
    const login = await axios.post<{ access?: string }>(`${url}/auth/api/v1/accounts/login`, null, {
      auth: { username: 'demo', password: 'demo-password' },
    });

    expect(login.status).toBe(200);
    expect(typeof login.data.access).toBe('string');
    expect(await stop()).toBe(0);
  });

  it('says why it cannot listen in one line and exits 1, without the usage', async () => {
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const { port } = taken.address() as AddressInfo;
    try {
      const { code, stderr } = await runScript(emulatorCommand, ['--port', String(port)]);

      expect(code).toBe(1);
      expect(stderr).toBe(`listen EADDRINUSE: address already in use 127.0.0.1:${port}\n`);
    } finally {
      await new Promise((resolve) => taken.close(resolve));
    }
  });
});

describe('durations and counts', () => {
  it.each([
    ['300ms', 300],
    ['1.5s', 1500],
    ['45m', 2_700_000],
    ['2h', 7_200_000],
    ['0.5ms', 1],
  ])('reads %s as %d ms', (text, ms) => {
    expect(parseDuration(text, 'access-ttl')).toBe(ms);
  });

  it.each(['1.5', '1500', '', ' 1s', '1 s', '-1s', '0s', '0.4ms', '1d', '1.5.2s'])('refuses "%s"', (text) => {
    expect(() => parseDuration(text, 'access-ttl')).toThrow(/^--access-ttl /);
  });

  it('reads counts of 1 or more and ports from 0 to 65535', () => {
    expect(parseCount('40', 'concurrency')).toBe(40);
    for (const text of ['0', '-1', '1.5', '4x', '']) expect(() => parseCount(text, 'concurrency')).toThrow();
    expect(parsePort('0')).toBe(0);
    expect(parsePort('65535')).toBe(65_535);
    for (const text of ['65536', '-1', 'http', '']) expect(() => parsePort(text)).toThrow(/^--port /);
  });
});
