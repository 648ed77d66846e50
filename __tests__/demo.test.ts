import { execFile } from 'node:child_process';
import { join } from 'node:path';

// `npm start` runs demo/demo.ts: here a smaller run of it, which must pass its own check and print the summary.
const root = join(__dirname, '..');

it('drives requests across expiries on the emulator and exits 0 with one login and one refresh per expiry', async () => {
  const args = [
    join(root, 'demo', 'demo.ts'),
    '--expiries',
    '2',
    '--access-ttl',
    '600ms',
    '--concurrency',
    '15',
    '--interval',
    '60ms',
  ];
  const { code, stdout } = await new Promise<{ code: number | null; stdout: string }>((resolve) => {
    execFile(join(root, 'node_modules', '.bin', 'tsx'), args, { cwd: root }, (error, out) =>
      resolve({ code: error ? (error.code as number) : 0, stdout: out }),
    );
  });

  expect(code).toBe(0);
  const row = (name: string) => new RegExp(`\\| ${name} +\\| +(\\S+) \\|`).exec(stdout)?.[1];
  expect(row('failed')).toBe('0');
  expect(row('logins')).toBe('1');
  expect(row('refreshes')).toBe(row('expiries \\(emulator\\)'));
  expect(Number(row('refreshes'))).toBeGreaterThanOrEqual(1);
  expect(row('one login, one refresh per expiry')).toBe('yes');
});

it('refuses to run against a real deployment without credentials in the environment', async () => {
  const env = { ...process.env, TOKEN_KEEPER_USERNAME: '', TOKEN_KEEPER_PASSWORD: '' };
  const { code, stderr } = await new Promise<{ code: number | null; stderr: string }>((resolve) => {
    execFile(
      join(root, 'node_modules', '.bin', 'tsx'),
      [join(root, 'demo', 'demo.ts'), '--base-url', 'http://127.0.0.1:9'],
      { cwd: root, env },
      (error, _out, err) => resolve({ code: error ? (error.code as number) : 0, stderr: err }),
    );
  });

  expect(code).toBe(2);
  expect(stderr).toContain('Set TOKEN_KEEPER_USERNAME and TOKEN_KEEPER_PASSWORD');
});
