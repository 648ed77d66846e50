// The emulator's command: `npm run emulator` serves on the port it prints until it is stopped, in a process of its
// own, with the users its flags name; and what its flags turn into.
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { EMULATOR_FLAGS, emulatorOptions } from '../lib/emulator/command.js';
import { readCommandLine, UsageError } from '../lib/emulator/command-line.js';
import { login } from './helpers/emulator-http.js';
import { root, serveScript, stopScriptsAfterEach } from './helpers/scripts.js';

stopScriptsAfterEach();

describe('npm run emulator', () => {
  it('serves on the port it prints until it is stopped', async () => {
    const child = spawn(
      join(__dirname, '..', 'node_modules', '.bin', 'tsx'),
      [join(__dirname, '..', 'demo', 'emulator.ts'), '--port', '0', '--access-ttl', '30s'],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    try {
      const url = await new Promise<string>((resolve, reject) => {
        let out = '';
        child.stdout.on('data', (chunk: Buffer) => {
          out += chunk.toString();
          const found = /on (http:\/\/127\.0\.0\.1:\d+)/.exec(out);
          if (found) resolve(found[1]!);
        });
        child.once('exit', (code) => reject(new Error(`exited ${code}: ${out}`)));
      });

      expect((await login(url)).status).toBe(200);
    } finally {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      expect(await exited).toBe(0);
    }
  });

  it('serves each --user, repeated, with --refresh-cookie, and no other', async () => {
    const args = ['--port', '0', '--user', 'alice:a1-pass', '--user', 'bob:b2:pass', '--refresh-cookie'];
    const { match, stop } = await serveScript(join(root, 'demo', 'emulator.ts'), args, /on (\S+) /);
    const url = match[1]!;

    const [alice, bob, demo] = [
      await login(url, 'alice', 'a1-pass'),
      await login(url, 'bob', 'b2:pass'),
      await login(url, 'demo', 'demo-password'),
    ];

    expect([alice.status, bob.status, demo.status]).toEqual([200, 200, 401]);
    expect(Object.keys(alice.data as object)).toEqual(['access']);
    expect(alice.headers['set-cookie']?.[0]).toMatch(/^refresh_token=ref_[0-9a-f]+; HttpOnly;/);
    expect(await stop()).toBe(0);
  });
});

describe('the emulator command’s flags', () => {
  const optionsOf = (args: string[]) => emulatorOptions(readCommandLine(EMULATOR_FLAGS, args)!);

  it.each<[string[], Record<string, string>]>([
    [[], { demo: 'demo-password' }],
    [['--user', 'alice:a1'], { alice: 'a1' }],
    [['--user', 'alice:a1', '--user', 'bob:b:2'], { alice: 'a1', bob: 'b:2' }],
    [['--user', 'alice', '--password', 'x1'], { alice: 'x1' }],
    [['--password', 'x1'], { demo: 'x1' }],
    [['--user', 'alice:a1', '--user', 'carol', '--password', 'c3'], { alice: 'a1', carol: 'c3' }],
  ])('%j lets %j log in', (args, users) => {
    expect(optionsOf(args).users).toEqual(users);
  });

  it('turns --refresh-cookie and --cors on, both off by default', () => {
    expect(optionsOf(['--refresh-cookie', '--cors'])).toMatchObject({ refreshCookie: true, cors: true });
    expect(optionsOf([])).toMatchObject({ refreshCookie: false, cors: false });
  });

  it.each([
    [['--user', ':a1'], '--user takes name:password, and the name is missing'],
    [['--user', 'alice:'], '--user alice: takes a password after the colon'],
    [['--user', 'alice:a1', '--user', 'alice:a2'], '--user alice is given twice'],
    [['--user'], '--user needs a value'],
  ])('%j: %s', (args, line) => {
    expect(() => optionsOf(args)).toThrow(new UsageError(line));
  });
});
