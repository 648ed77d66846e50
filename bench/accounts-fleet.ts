// Many accounts in a fleet (issue 29): real processes, each one axios instance serving the same named accounts, on one
// redis-server; and what one renewal costs Redis, command by command and key by key, to weigh keeping the pair and
// the account's record as one record. The emulator runs in this process: the workers are the clients measured.
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import axios from 'axios';
import { startEmulator } from '../lib/emulator/index.js';
import type { TokenServiceEmulator } from '../lib/emulator/index.js';
import { attachTokenAuth } from '../lib/index.js';
import { RedisTokenStore } from '../lib/stores/redis/index.js';
import { connectionNameOf, startFleet, sumBursts } from '../harness/fleet.js';
import type { BurstReply, FleetAccount } from '../harness/fleet.js';
import { openRedis } from '../harness/redis-clients.js';
import { countCommands, startRedisServer, withConnection } from '../harness/redis-server.js';
import type { RedisServer } from '../harness/redis-server.js';
import { benchAccount, benchAccountPassword } from './remote-emulator.js';
import type { Mode, ScenarioResult } from './scenarios.js';
import { median, round, spread } from './stats.js';

/** The fewest and the most, as `1` when they are the same and `1–2` when not. */
function range(values: readonly number[]): string {
  const [least, most] = [Math.min(...values), Math.max(...values)];
  return least === most ? String(least) : `${least}–${most}`;
}

/** Bytes the server at `port` has read and written since it started (`INFO stats`), this reading's own included. */
async function netBytes(port: number): Promise<{ input: number; output: number }> {
  const text = await withConnection(port, (client) => client.info('stats'));
  const field = (name: string) => Number(new RegExp(`^${name}:(\\d+)`, 'm').exec(text)?.[1] ?? Number.NaN);
  return { input: field('total_net_input_bytes'), output: field('total_net_output_bytes') };
}

/** Successful logins per username, from the Basic header of each login call the emulator answered. */
function loginsByUser(service: TokenServiceEmulator): Map<string, number> {
  const logins = new Map<string, number>();
  for (const call of service.calls) {
    if (call.route !== 'login') continue;
    const basic = Buffer.from(call.authorization?.replace(/^Basic /, '') ?? '', 'base64').toString('utf8');
    const user = basic.slice(0, basic.indexOf(':'));
    logins.set(user, (logins.get(user) ?? 0) + 1);
  }
  return logins;
}

/** Requests answered for another user than the one of the account they named: a token sent for another account. */
function strangers(replies: readonly BurstReply[]): number {
  let wrong = 0;
  for (const [account, users] of Object.entries(sumBursts(replies).accounts))
    for (const [user, count] of Object.entries(users)) if (user !== account) wrong += count;
  return wrong;
}

// ------------------------------------------------------------------------------------------------ 10. accounts fleet

/**
 * A fleet of processes serving the same named accounts on one redis-server: every process fires its requests at once,
 * none holding a pair, then again after each expiry. One login per account for the fleet, one token call per account
 * per expiry, and the Redis connections of each process (one client and one subscriber, whatever the accounts).
 */
export async function accountsFleet(mode: Mode): Promise<ScenarioResult> {
  const processes = 4;
  const count = mode.quick ? 10 : 50;
  const each = 4;
  const expiries = mode.quick ? 2 : 5;
  const names = Array.from({ length: count }, (_, i) => benchAccount(i));
  const accounts: Record<string, FleetAccount> = Object.fromEntries(
    names.map((name) => [name, { username: name, password: benchAccountPassword(name) }]),
  );
  const users = Object.fromEntries(names.map((name) => [name, benchAccountPassword(name)]));
  const redis = await startRedisServer();
  // Its log of calls kept: the logins per user are read from it.
  const service = await startEmulator({ users });
  try {
    const fleet = await startFleet({
      count: processes,
      emulatorUrl: service.url,
      store: { kind: 'redis', url: redis.url, prefix: 'bench-accounts', pubsub: true },
      accounts,
      nameConnections: true,
      readyTimeoutMs: 120_000,
    });
    try {
      const burst = { accounts: names, timeoutMs: 300_000 };
      const start = await fleet.burst(count * each, burst);
      const replies = [...start];
      const callsPerAccount: number[] = [];
      const commands: number[] = [];
      const bytes: Array<{ input: number; output: number }> = [];
      for (let expiry = 0; expiry < expiries; expiry += 1) {
        service.expireAccessTokens();
        const before = await netBytes(redis.port);
        const { result, commands: ran } = await countCommands([redis.port], () => fleet.burst(count * each, burst));
        const after = await netBytes(redis.port);
        replies.push(...result);
        commands.push(ran / count);
        bytes.push({ input: (after.input - before.input) / count, output: (after.output - before.output) / count });
        const renewals = new Map<string, number>(names.map((name) => [name, 0]));
        for (const event of sumBursts(result).events)
          if ((event.name === 'refresh' || event.name === 'login') && event.account !== undefined)
            renewals.set(event.account, (renewals.get(event.account) ?? 0) + 1);
        callsPerAccount.push(...renewals.values());
      }
      const tokenCallsOverExpiries = service.counters.tokenCalls - count;
      // One more expiry under MONITOR: the commands each process sent, by what they touch, and what one record for
      // the pair and the account's record would change in them.
      service.expireAccessTokens();
      const sent = await monitored(redis.port, async () => replies.push(...(await fleet.burst(count * each, burst))));
      const stored = await withConnection(redis.port, async (client) => {
        const sizes = { pair: [] as number[], record: [] as number[] };
        for (const name of names) {
          const [pair, record] = await client.mget(`{bench-accounts#${name}}#pair`, `{bench-accounts#${name}}#account`);
          sizes.pair.push(Buffer.byteLength(pair ?? ''));
          sizes.record.push(Buffer.byteLength(record ?? ''));
        }
        return { pair: median(sizes.pair), record: median(sizes.record) };
      });
      const one = oneRecord(sent, stored);
      // Every connection a worker opened carries its pid in its name: the client and the subscriber, for all accounts.
      const list = String(await withConnection(redis.port, (client) => client.client('LIST')));
      const connections = fleet.workers.map(
        (worker) => list.split('\n').filter((line) => line.includes(` name=${connectionNameOf(worker.pid!)} `)).length,
      );
      const logins = loginsByUser(service);
      const total = sumBursts(replies);
      return {
        id: 10,
        title: `Accounts fleet: ${processes} processes × ${count} accounts on one redis-server, ${each} requests per account and process at once, then ${expiries} expiries`,
        goal: '1 login per account for the fleet, 1 token call per account per expiry, 0 failed, at most 3 Redis connections per process',
        columns: [
          'logins per account',
          'token calls per account per expiry',
          'token calls / expiry',
          'failed',
          'wrong account',
          'Redis connections per process',
          'Redis commands per account per expiry',
          'Redis bytes in / out per account per expiry',
          'one record: commands sent, bytes per account per expiry',
        ],
        rows: [
          {
            contender: 'axios-token-keeper',
            cells: {
              'logins per account': range(names.map((name) => logins.get(name) ?? 0)),
              'token calls per account per expiry': range(callsPerAccount),
              'token calls / expiry': round(tokenCallsOverExpiries / expiries, 2),
              failed: total.failed,
              'wrong account': strangers(replies),
              'Redis connections per process': range(connections),
              'Redis commands per account per expiry': spread(commands.map((value) => round(value, 1))),
              'Redis bytes in / out per account per expiry': `${round(
                spread(bytes.map((b) => b.input)).median,
                0,
              )} / ${round(spread(bytes.map((b) => b.output)).median, 0)}`,
              'one record: commands sent, bytes per account per expiry': `−${round(one.commandsSaved / count, 2)}, −${round(one.bytesSaved / count, 0)} +${round(one.bytesAdded / count, 0)}`,
            },
          },
        ],
        notes: [
          `${processes} real processes (harness/fleet.ts), each one axios instance with the plugin and a RedisTokenStore on one ioredis client and one subscriber; every process serves the same ${count} named accounts (forAccount), each a user of the emulator. ${processes * count * each} requests per round, request i naming account i mod ${count}; no process holds a pair before the first round.`,
          `Logins per account: the fewest and the most of any account, from the emulator's login calls over the whole run. Token calls per account per expiry: the fewest and the most of any account in any expiry, from the workers' login and refresh events; "token calls / expiry" is the emulator's count after the first logins, over the expiries.`,
          'Redis connections: CLIENT LIST at the end, by the name each worker gives its connections (its pid). Commands: INFO commandstats around each expiry round (commands run inside scripts counted too), per account; bytes: INFO stats total_net_input_bytes and total_net_output_bytes around each round, per account, medians over the expiries.',
          `One more expiry under redis-cli MONITOR: the commands the processes sent (not those inside a script), per account: ${listed(one.kinds, count)}; ${round(one.scriptBytes / count, 0)} bytes of Lua script text per account (the store sends each script whole with every EVAL). The pair's and the record's values stored: ${stored.pair} and ${stored.record} bytes (medians over the accounts).`,
          "\"One record\": what keeping the pair and the account's record as one value would change in those commands, per account (see 11): the commands no longer sent (the record's writes, and its reads by the lock's holder) and their bytes, then the bytes the one value adds to the commands that stay (the record on every read and write of the pair, the pair on every read of the record without the lock).",
        ],
      };
    } finally {
      await fleet.stop();
    }
  } finally {
    await service.close();
    await redis.stop();
  }
}

// ------------------------------------------------------------------------------------------------ 11. Redis per renewal

/** Bytes of a command (an array of bulk strings) in RESP. */
function respBytes(args: ReadonlyArray<string | number>): number {
  let bytes = `*${args.length}\r\n`.length;
  for (const arg of args) {
    const length = Buffer.byteLength(String(arg));
    bytes += `$${length}\r\n`.length + length + 2;
  }
  return bytes;
}

/** Bytes of a bulk string reply of `length` bytes in RESP. */
const bulkReply = (length: number): number => `$${length}\r\n`.length + length + 2;

/** A command a client sent, as MONITOR shows it: the client's address, and the command's arguments. */
interface Sent {
  client: string;
  args: string[];
}

/**
 * The commands the clients sent (not those run inside a script), as `redis-cli monitor` prints them while `during`
 * runs.
 */
async function monitored(port: number, during: () => Promise<unknown>): Promise<Sent[]> {
  const monitor = spawn('redis-cli', ['-p', String(port), 'monitor'], { stdio: ['ignore', 'pipe', 'ignore'] });
  const lines: string[] = [];
  const reader = createInterface({ input: monitor.stdout });
  const started = new Promise<void>((resolve) => reader.once('line', () => resolve()));
  reader.on('line', (line) => lines.push(line));
  await started;
  try {
    await during();
    // MONITOR streams what the server ran; a command run just before the end may still be on its way.
    await new Promise((resolve) => setTimeout(resolve, 200));
  } finally {
    monitor.kill();
  }
  return lines.flatMap((line) => {
    const client = /^\d+\.\d+ \[\d+ ([\d.]+:\d+)\]/.exec(line)?.[1];
    return client ? [{ client, args: [...line.matchAll(/"((?:[^"\\]|\\.)*)"/g)].map((match) => match[1]!) }] : [];
  });
}

/** What a command of the store is, by the keys it names: `GET #pair`, `EVAL LOCK`, … */
function kindOf(args: readonly string[]): string {
  const command = args[0]!.toUpperCase();
  if (command !== 'EVAL' && command !== 'EVALSHA') return `${command} ${args[1]?.replace(/^.*#/, '#') ?? ''}`.trim();
  const keys = args.slice(3, 3 + Number(args[2]));
  const last = keys[keys.length - 1]?.replace(/^.*#/, '#');
  if (keys.length === 3 && last === '#lock') return 'EVAL LOCK';
  if (keys.length === 3 && last === '#account') return 'EVAL WRITE_ACCOUNT';
  if (keys.length === 2) return 'EVAL WRITE';
  return /PUBLISH/.test(args[1]!) ? 'EVAL RELEASE' : 'EVAL EXTEND';
}

/** The hash tag of the account a command is about: `{prefix#name}`. */
const tagOf = (args: readonly string[]): string => {
  const key = args[0]!.toUpperCase().startsWith('EVAL') ? args[3] : args[1];
  return /^\{[^}]*\}/.exec(key ?? '')?.[0] ?? '';
};

/** What keeping the pair and the account's record as one value would change in `sent`. */
interface OneRecord {
  /** The commands sent today, by kind. */
  kinds: Map<string, number>;
  /** Bytes of Lua script text in the EVALs sent. */
  scriptBytes: number;
  /** Commands no longer sent: the record's writes, and its reads under the lock. */
  commandsSaved: number;
  /** Bytes (requests and replies) of those commands. */
  bytesSaved: number;
  /** Bytes the one value adds to the commands that stay. */
  bytesAdded: number;
}

/**
 * The record's write (EVAL WRITE_ACCOUNT) goes with the pair's, and its read under the lock (a GET #account by the
 * lock's holder between its LOCK and its RELEASE) with the pair's there: both saved, requests and replies. What stays
 * carries the other half of the one value: each read and write of the pair (GET #pair, EVAL WRITE, and a LOCK
 * refused, whose answer is the pair: its holder sends no RELEASE after it) the record's bytes, each read of the record
 * without the lock (a refusal consulting the guards) the pair's. `stored`: the bytes of the pair's and the record's
 * values. A read of the record by the lock's holder for a refusal while it holds the lock counts as saved: an
 * estimate that errs towards one record.
 */
function oneRecord(sent: readonly Sent[], stored: { pair: number; record: number }): OneRecord {
  const kinds = sent.map(({ args }) => kindOf(args));
  const holders = sent.map(({ client, args }) => `${client} ${tagOf(args)}`);
  // A LOCK was granted when its holder's next LOCK or RELEASE is a RELEASE (a waiter that gives up releases too, which
  // counts its try as granted: rare, and only ever fewer commands saved); until that RELEASE, the holder is locked.
  const underLock = new Array<boolean>(sent.length).fill(false);
  const refused = new Array<boolean>(sent.length).fill(false);
  kinds.forEach((kind, at) => {
    if (kind !== 'EVAL LOCK') return;
    let end = at + 1;
    while (end < sent.length && !(holders[end] === holders[at] && /EVAL (LOCK|RELEASE)/.test(kinds[end]!))) end += 1;
    if (end === sent.length || kinds[end] === 'EVAL LOCK') refused[at] = true;
    else
      for (let inside = at + 1; inside < end; inside += 1)
        if (holders[inside] === holders[at]) underLock[inside] = true;
  });
  let scriptBytes = 0;
  let commandsSaved = 0;
  let bytesSaved = 0;
  let bytesAdded = 0;
  sent.forEach(({ args }, at) => {
    const kind = kinds[at]!;
    if (kind.startsWith('EVAL')) scriptBytes += Buffer.byteLength(args[1]!);
    if (kind === 'EVAL WRITE_ACCOUNT') {
      commandsSaved += 1;
      bytesSaved += respBytes(args) + ':1\r\n'.length;
    } else if (kind === 'GET #account' && underLock[at]) {
      commandsSaved += 1;
      bytesSaved += respBytes(args) + bulkReply(stored.record);
    } else if (kind === 'GET #account') bytesAdded += stored.pair;
    else if (kind === 'GET #pair' || kind === 'EVAL WRITE' || refused[at]) bytesAdded += stored.record;
  });
  const counted = new Map<string, number>();
  for (const kind of kinds) counted.set(kind, (counted.get(kind) ?? 0) + 1);
  return { kinds: counted, scriptBytes, commandsSaved, bytesSaved, bytesAdded };
}

/** `kinds` as a text: `GET #pair ×2, EVAL LOCK ×1`. */
const listed = (kinds: ReadonlyMap<string, number>, per = 1): string =>
  [...kinds]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([kind, n]) => `${kind} ×${round(n / per, 2)}`)
    .join(', ');

/**
 * One process, one named account on a RedisTokenStore (one ioredis client and its subscriber), renewing after an
 * expiry: the commands and bytes Redis sees per renewal, by what they touch, with the pair's and the account's
 * records as they are stored; and what keeping both as one record would change.
 */
export async function redisPerRenewal(mode: Mode): Promise<ScenarioResult> {
  const renewals = mode.quick ? 3 : 10;
  const each = 10;
  const name = benchAccount(0);
  const redis: RedisServer = await startRedisServer();
  const service = await startEmulator({ users: { [name]: benchAccountPassword(name) }, log: false });
  const connections = await openRedis({ library: 'ioredis' }, { url: redis.url }, { subscriber: true });
  const store = new RedisTokenStore(connections.client, {
    prefix: 'bench-renewal',
    ...(connections.subscriber && { subscriber: connections.subscriber }),
  });
  const api = axios.create({ baseURL: service.url });
  const auth = attachTokenAuth(api, {
    credentials: (account) => (account === name ? { username: name, password: benchAccountPassword(name) } : undefined),
    store,
  });
  const renew = async (): Promise<void> => {
    service.expireAccessTokens();
    await Promise.all(Array.from({ length: each }, (_, i) => api.get(`/api/items/${i}`, { account: name })));
    // The pair and the record are written after the requests have gone: counted in.
    await auth.account(name).flush();
    // The 'changed' message brings a read of the pair back, which nothing awaits.
    await new Promise((resolve) => setTimeout(resolve, 100));
  };
  try {
    await api.get('/api/items/first', { account: name });
    await auth.account(name).flush();
    await renew();
    const tokenCallsBefore = service.counters.tokenCalls;
    // Commands and bytes in renewals of their own: a reading of INFO commandstats costs bytes that vary with its reply.
    const commands: number[] = [];
    for (let run = 0; run < renewals; run += 1) commands.push((await countCommands([redis.port], renew)).commands);
    // What reading INFO stats costs by itself, taken off each renewal's bytes.
    const first = await netBytes(redis.port);
    const idle = await netBytes(redis.port);
    const readingIn = idle.input - first.input;
    const readingOut = idle.output - first.output;
    const input: number[] = [];
    const output: number[] = [];
    for (let run = 0; run < renewals; run += 1) {
      const before = await netBytes(redis.port);
      await renew();
      const after = await netBytes(redis.port);
      input.push(after.input - before.input - readingIn);
      output.push(after.output - before.output - readingOut);
    }
    const tokenCalls = service.counters.tokenCalls - tokenCallsBefore;
    const sent = await monitored(redis.port, renew);
    const stored = await withConnection(redis.port, async (client) => {
      const [pair, record] = await Promise.all(
        ['pair', 'account'].map((key) => client.get(`{bench-renewal#${name}}#${key}`)),
      );
      return { pair: Buffer.byteLength(pair ?? ''), record: Buffer.byteLength(record ?? '') };
    });
    const one = oneRecord(sent, stored);
    return {
      id: 11,
      title: `Redis per renewal: 1 process, 1 named account, ${each} requests refused at each expiry (${renewals} renewals)`,
      goal: 'published: what a renewal costs Redis, and what one record for the pair and the account would save',
      columns: [
        'token calls / renewal',
        'commands sent / renewal',
        'commands run / renewal',
        'bytes in / out / renewal',
        'script text sent',
        'stored: pair / record bytes',
        'one record: commands sent, bytes',
      ],
      rows: [
        {
          contender: 'axios-token-keeper',
          cells: {
            // Both loops renewed: the commands' and the bytes'.
            'token calls / renewal': round(tokenCalls / (2 * renewals), 2),
            'commands sent / renewal': sent.length,
            'commands run / renewal': spread(commands),
            'bytes in / out / renewal': `${spread(input).median} / ${spread(output).median}`,
            'script text sent': one.scriptBytes,
            'stored: pair / record bytes': `${stored.pair} / ${stored.record}`,
            'one record: commands sent, bytes': `−${one.commandsSaved}, −${one.bytesSaved} +${one.bytesAdded}`,
          },
        },
      ],
      notes: [
        `One axios instance, one RedisTokenStore on one ioredis client and its subscriber, a named account (its keys {bench-renewal#${name}}#…). Each renewal: every access token refused, ${each} requests on the account, then flush() (the pair and the record are written after the requests) and 100 ms for the read the 'changed' message brings.`,
        `Commands sent, in one more renewal under redis-cli MONITOR, by what they touch: ${listed(one.kinds)}. Commands run: INFO commandstats around each renewal, the commands inside the scripts counted too. Bytes: INFO stats total_net_input_bytes / total_net_output_bytes around each renewal, less a reading's own; medians [smallest–largest] over the renewals. Script text: the bytes of the Lua scripts in those EVALs (the store sends each script whole, every time).`,
        "\"One record\": the pair and the record kept as one value, estimated from the commands sent and the values stored (oneRecord): the commands no longer sent, the record's write (EVAL WRITE_ACCOUNT, script included) and its read under the lock (GET #account, request and reply), and their bytes; then the bytes the one value adds to the commands that stay: the record on every other read and write of the pair (GET #pair, EVAL WRITE, a LOCK refused), the pair on the record's read without the lock. For this one process: every other process of a fleet reads the pair once per renewal (its 'changed' message), and would read the record with it (see 10).",
      ],
    };
  } finally {
    auth.eject();
    await store.close();
    await connections.close();
    await service.close();
    await redis.stop();
  }
}
