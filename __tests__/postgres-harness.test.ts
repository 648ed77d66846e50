import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Client } from 'pg';
import { requirePgBouncer, startPgBouncer, startPostgresServer } from '../harness/postgres-server.js';
import { undoAfterEach, until } from './helpers/flow.js';
import { connectedClient, postgresServerForFile } from './helpers/postgres.js';

// The harness the Postgres store's suites stand on (issue 45): a real PostgreSQL server, started by the test in a
// folder of its own, and PgBouncer before it. Without Debian's postgresql or pgbouncer this file fails here, once, with
// the command that installs them.
requirePgBouncer();
const server = postgresServerForFile();
const undo = undoAfterEach();

/** Whether `promise` is still pending after `ms`: an absence over time, which nothing can be awaited for instead. */
async function pendingAfter(promise: Promise<unknown>, ms: number): Promise<boolean> {
  const pending = Symbol('pending');
  promise.catch(() => undefined);
  return (await Promise.race([promise, sleep(ms, pending)])) === pending;
}

it('answers pg on 127.0.0.1 at its port, its socket in its own folder', async () => {
  const { client } = await connectedClient(server().url, undo);

  const { rows } = await client.query<{ sum: number }>('SELECT 1 + 1 AS sum');
  expect(rows).toEqual([{ sum: 2 }]);
  expect((await client.query('SHOW listen_addresses')).rows).toEqual([{ listen_addresses: '127.0.0.1' }]);
  expect((await client.query('SHOW unix_socket_directories')).rows).toEqual([
    { unix_socket_directories: server().directory },
  ]);
});

describe('PgBouncer in transaction mode', () => {
  it('passes queries on to the server', async () => {
    const bouncer = await startPgBouncer(server(), { poolMode: 'transaction' });
    undo.push(() => bouncer.stop());
    const { client } = await connectedClient(bouncer.url, undo);

    const { rows } = await client.query<{ port: number }>("SELECT current_setting('port')::int AS port");
    expect(rows).toEqual([{ port: server().port }]);
  });

  it('takes LISTEN, but its client gets no notification: it reaches a server connection no client holds, and PgBouncer drops it (so the store polls there)', async () => {
    // One server connection, so that the LISTEN and every later statement through PgBouncer share it.
    const bouncer = await startPgBouncer(server(), { poolMode: 'transaction', poolSize: 1 });
    undo.push(() => bouncer.stop());
    const direct = await connectedClient(server().url, undo);
    const pooled = await connectedClient(bouncer.url, undo);
    const heard = { direct: [] as string[], pooled: [] as string[] };
    direct.client.on('notification', ({ payload }) => heard.direct.push(payload ?? ''));
    pooled.client.on('notification', ({ payload }) => heard.pooled.push(payload ?? ''));
    await direct.client.query('LISTEN news');
    expect((await pooled.client.query('LISTEN news')).command).toBe('LISTEN');

    const { client: notifier } = await connectedClient(server().url, undo);
    await notifier.query("NOTIFY news, 'a new pair'");
    await until(() => heard.direct.length === 1);
    // The server sent it to PgBouncer's connection as it sat idle in the pool, linked to no client.
    await until(() => bouncer.log().includes("got packet 'A' from server when not linked"));
    await pooled.client.query('SELECT 1');

    expect(heard).toEqual({ direct: ['a new pair'], pooled: [] });
    expect(pooled.errors).toEqual([]);
  });
});

describe('pause and resume', () => {
  // Before the undo list's steps (jest runs a describe's afterEach first): a connection can only end on a live server.
  afterEach(() => server().resume());

  it('a query on a connection made before the pause, and a new connection, wait through it and are answered after', async () => {
    const { client } = await connectedClient(server().url, undo);
    server().pause();

    const onOpenConnection = client.query<{ answer: number }>('SELECT 42 AS answer');
    const onNewConnection = (async () => {
      const { client: late } = await connectedClient(server().url, undo);
      return late.query<{ answer: number }>('SELECT 43 AS answer');
    })();
    // Nothing to await: the server's silence is what is shown, over half a second.
    expect(await pendingAfter(onOpenConnection, 500)).toBe(true);
    expect(await pendingAfter(onNewConnection, 0)).toBe(true);

    server().resume();
    expect((await onOpenConnection).rows).toEqual([{ answer: 42 }]);
    expect((await onNewConnection).rows).toEqual([{ answer: 43 }]);
  });
});

describe('restart', () => {
  it.each([
    ['fast', 'terminating connection due to administrator command'],
    ['kill', 'Connection terminated unexpectedly'],
  ] as const)(
    'shutdown %s: the connection it had is ended (%s), a new one works, and what was committed is there',
    async (shutdown, ended) => {
      const { client: before, errors } = await connectedClient(server().url, undo);
      await before.query(`CREATE TABLE kept_${shutdown} (value text)`);
      await before.query(`INSERT INTO kept_${shutdown} VALUES ('committed')`);

      await server().restart({ shutdown });

      await expect(before.query('SELECT 1')).rejects.toThrow();
      // pg reports the server's word first, if it had one, then the connection's end.
      expect(errors.map((error) => error.message)[0]).toBe(ended);
      const { client: after } = await connectedClient(server().url, undo);
      expect((await after.query(`SELECT value FROM kept_${shutdown}`)).rows).toEqual([{ value: 'committed' }]);
    },
  );
});

/** The System V shared memory segment of the postmaster that wrote `directory`'s postmaster.pid (its 7th line). */
function sharedMemoryOf(directory: string): string {
  const line = readFileSync(join(directory, 'data', 'postmaster.pid'), 'utf8').split('\n')[6] ?? '';
  return line.trim().split(/\s+/)[1]!;
}

/** Whether `ipcs -m` lists the segment (its second column is the id; `ipcs -i` succeeds for any id). */
const segmentExists = (id: string): boolean =>
  spawnSync('ipcs', ['-m'], { encoding: 'utf8' })
    .stdout.split('\n')
    .some((line) => line.split(/\s+/)[1] === id);

it.each(['running', 'killed'] as const)(
  'stop, the server %s, ends it and removes its folder and its shared memory',
  async (state) => {
    const own = await startPostgresServer();
    undo.push(() => own.stop());
    const { client } = await connectedClient(own.url, undo);
    expect((await client.query('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
    const segment = sharedMemoryOf(own.directory);
    expect(segmentExists(segment)).toBe(true);
    if (state === 'killed') await own.kill();

    await own.stop();

    expect(existsSync(own.directory)).toBe(false);
    expect(segmentExists(segment)).toBe(false);
    await expect(new Client(own.url).connect()).rejects.toThrow(/ECONNREFUSED/);
  },
);
