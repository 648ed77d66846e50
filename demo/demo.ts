// `npm start`: the plugin at work. Starts the token-service emulator with a short access lifetime, attaches the
// plugin to an axios instance, drives waves of concurrent requests across several expiries, and checks that the
// plugin kept to one login in all and one refresh per expiry. Exit 0 only when it did. `npm start -- --help` for
// the flags.
import axios from 'axios';
import { Presets, SingleBar } from 'cli-progress';
import { attachTokenAuth } from '../lib/index.js';
import { startEmulator } from '../lib/emulator/index.js';
import { runCommand, UsageError } from '../lib/emulator/command-line.js';
import type { Flags } from '../lib/emulator/command-line.js';
import { DURATIONS, parseCount, parseDuration } from '../lib/emulator/durations.js';

const USAGE = `Usage: npm start -- [options]

Drives waves of concurrent requests through the plugin across several access-token expiries on the emulator, and
checks the plugin made one login in all and one refresh per expiry. Exits 0 when it did, 1 when it did not or
something failed, 2 on a mistake in the command.

Options:
  --expiries <n>         expiries to drive the requests across (default 5)
  --access-ttl <time>    access-token lifetime on the emulator (default 1500ms)
  --concurrency <n>      requests per wave (default 40, or 4 with --base-url)
  --interval <time>      pause between waves (default 100ms)
  --waves <n>            waves to send (default: enough for the expiries, or 10 with --base-url)
  --base-url <url>       a real deployment instead of the emulator, with the credentials in the environment
                         variables TOKEN_KEEPER_USERNAME and TOKEN_KEEPER_PASSWORD (never on the command line)
  --auth-base-url <url>  where the token service is, when not at --base-url
  --path <path>          what to request (default /allocation/api/v1/tracking/order-list)
  -h, --help             this text

${DURATIONS}
`;

const OPTIONS = {
  'base-url': { type: 'string' },
  'auth-base-url': { type: 'string' },
  path: { type: 'string', default: '/allocation/api/v1/tracking/order-list' },
  expiries: { type: 'string', default: '5' },
  'access-ttl': { type: 'string', default: '1500ms' },
  concurrency: { type: 'string' },
  interval: { type: 'string', default: '100ms' },
  waves: { type: 'string' },
} as const;

interface Tally {
  sent: number;
  succeeded: number;
  failed: number;
  lastFailure?: string;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** An absolute http(s) URL, or a UsageError naming the flag. */
function parseUrl(text: string | undefined, option: string): string | undefined {
  if (text !== undefined && !(/^https?:\/\//.test(text) && URL.canParse(text)))
    throw new UsageError(`--${option} takes an absolute URL such as https://api.example.com, got "${text}"`);
  return text;
}

/** What the flags and the environment ask for, all read before anything starts. */
function readPlan(values: Flags<typeof OPTIONS>) {
  const real = parseUrl(values['base-url'], 'base-url');
  const authBaseURL = parseUrl(values['auth-base-url'], 'auth-base-url');
  const ttl = parseDuration(values['access-ttl'], 'access-ttl');
  const interval = parseDuration(values.interval, 'interval');
  const expiries = parseCount(values.expiries, 'expiries');
  const concurrency = parseCount(values.concurrency ?? (real ? '4' : '40'), 'concurrency');
  const waves = values.waves
    ? parseCount(values.waves, 'waves')
    : real
      ? 10
      : Math.ceil(((expiries + 0.5) * ttl) / interval);
  let credentials = { username: 'demo', password: 'demo-password' };
  if (real) {
    const { TOKEN_KEEPER_USERNAME: username, TOKEN_KEEPER_PASSWORD: password } = process.env;
    if (!username || !password)
      throw new UsageError('Set TOKEN_KEEPER_USERNAME and TOKEN_KEEPER_PASSWORD to run against a real deployment.');
    credentials = { username, password };
  }
  return { real, authBaseURL, ttl, interval, expiries, concurrency, waves, credentials };
}

async function main(values: Flags<typeof OPTIONS>): Promise<number> {
  const { real, authBaseURL, ttl, interval, expiries, concurrency, waves, credentials } = readPlan(values);
  const emulator = real
    ? undefined
    : await startEmulator({
        accessTtlMs: ttl,
        latency: { data: () => 2 + Math.random() * 20, token: 15, login: 25 },
        log: false,
      });

  const api = axios.create({ baseURL: real ?? emulator!.url });
  const auth = attachTokenAuth(api, { credentials, ...(authBaseURL ? { authBaseURL } : {}) });
  const tally: Tally = { sent: 0, succeeded: 0, failed: 0 };

  process.stdout.write(
    real
      ? `Against ${real}: ${waves} waves of ${concurrency} concurrent requests to ${values.path}.\n`
      : `Emulator on ${emulator!.url}, access tokens live ${ttl} ms: ${waves} waves of ${concurrency} concurrent requests, every ${interval} ms, across ~${expiries} expiries.\n`,
  );
  const bar = new SingleBar(
    {
      format:
        ' {bar} {percentage}% | wave {value}/{total} | requests {sent} ok {ok} failed {failed} | logins {logins} refreshes {refreshes} replays {replays}',
      hideCursor: true,
    },
    Presets.shades_classic,
  );
  bar.start(waves, 0, { sent: 0, ok: 0, failed: 0, logins: 0, refreshes: 0, replays: 0 });

  const inFlight = new Set<Promise<void>>();
  for (let wave = 1; wave <= waves; wave += 1) {
    for (let i = 0; i < concurrency; i += 1) {
      tally.sent += 1;
      const request: Promise<void> = api.get(values.path).then(
        () => void (tally.succeeded += 1),
        (error: unknown) => {
          tally.failed += 1;
          tally.lastFailure = error instanceof Error ? error.message : String(error);
        },
      );
      inFlight.add(request);
      void request.finally(() => inFlight.delete(request));
    }
    const stats = auth.stats();
    bar.update(wave, { sent: tally.sent, ok: tally.succeeded, failed: tally.failed, ...stats });
    await sleep(interval);
  }
  await Promise.all(inFlight);
  bar.update(waves, { sent: tally.sent, ok: tally.succeeded, failed: tally.failed, ...auth.stats() });
  bar.stop();
  auth.eject();
  await emulator?.close();

  const stats = auth.stats();
  const counters = emulator?.counters;
  const kept = counters
    ? counters.logins === 1 && counters.refreshes === counters.expiries && tally.failed === 0 && counters.expiries > 0
    : stats.logins <= 1 && tally.failed === 0;
  const rows: Array<[string, string | number]> = [
    ['requests sent', tally.sent],
    ['succeeded', tally.succeeded],
    ['failed', tally.failed],
    ['401s seen', counters ? counters.unauthorized : stats.replays],
    ['replays', stats.replays],
    ['logins', stats.logins],
    ['refreshes', stats.refreshes],
  ];
  if (counters)
    rows.push(
      ['expiries (emulator)', counters.expiries],
      ['token calls per expiry', counters.expiries ? (counters.refreshes / counters.expiries).toFixed(2) : '-'],
    );
  rows.push(['one login, one refresh per expiry', kept ? 'yes' : 'NO']);
  const width = Math.max(...rows.map(([name]) => name.length));
  const line = `+${'-'.repeat(width + 2)}+${'-'.repeat(12)}+`;
  process.stdout.write(
    `\n${line}\n${rows.map(([name, value]) => `| ${name.padEnd(width)} | ${String(value).padStart(10)} |`).join('\n')}\n${line}\n`,
  );
  if (tally.lastFailure) process.stdout.write(`Last failure: ${tally.lastFailure}\n`);
  return kept ? 0 : 1;
}

runCommand(USAGE, OPTIONS, main);
