import { spawn, spawnSync } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import {
  accessSync,
  chownSync,
  constants,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, stopProcess } from './redis-server.js';

/**
 * A real PostgreSQL server on 127.0.0.1 at a free port, its cluster in a folder of its own under the system's temporary
 * folder (its Unix socket too), that whoever started it (a test, a benchmark) stops. Its data outlives `kill` and
 * `restart`, as a real server's does; `stop` removes it.
 */
export interface PostgresServer {
  readonly port: number;
  /** `postgres://postgres@127.0.0.1:<port>/postgres`: the superuser `postgres`, no password (trust on loopback). */
  readonly url: string;
  /** The server's folder: its cluster in `data/`, its socket. Gone after `stop`. */
  readonly directory: string;
  /**
   * Stops the server answering (SIGSTOP to the postmaster and to each of its processes: every connection has a process
   * of its own), as a paused VM or a partition without resets would: a query waits, a new connection is not answered.
   * `resume` undoes it.
   */
  pause(): void;
  resume(): void;
  /**
   * Ends the server at once (SIGKILL to the postmaster and each of its processes), as a crash of the host or an OOM
   * kill of the container would: connections are reset, what was committed stays. Resolves once they have all ended;
   * `restart` starts it again, recovering from its log.
   */
  kill(): Promise<void>;
  /**
   * Stops the server and starts it again on the same port with the same data. `shutdown: 'fast'` (the default) is a
   * restart as `pg_ctl restart` makes it: connections are ended with an error (57P01) and the cluster is checkpointed;
   * `'kill'` is {@link kill}'s crash. `afterMs`: it starts that long after it stopped, as a slow host or a supervisor's
   * back-off would have it.
   */
  restart(options?: { shutdown?: 'fast' | 'kill'; afterMs?: number }): Promise<void>;
  /** Stops the server (a fast shutdown) and removes its folder. */
  stop(): Promise<void>;
}

export interface PostgresServerOptions {
  /**
   * Server settings beyond ours (loopback only, no fsync, small shared buffers), as `-c name=value`: for example
   * `{ max_connections: '20' }`. Kept for `restart`.
   */
  settings?: Readonly<Record<string, string>>;
}

/** PgBouncer before a {@link PostgresServer}, on 127.0.0.1 at a free port of its own. */
export interface PgBouncer {
  readonly port: number;
  /** The server's database through PgBouncer: `postgres://postgres@127.0.0.1:<port>/postgres`. */
  readonly url: string;
  /**
   * What PgBouncer has logged so far (its last 64 KB): what it did with what it could not pass on, for example "got
   * packet 'A' from server when not linked" for a notification that reached a server connection no client held.
   */
  log(): string;
  /** Stops PgBouncer at once, closing its connections, and removes its folder. */
  stop(): Promise<void>;
}

export interface PgBouncerOptions {
  /** `'transaction'`: a server connection is the client's for one transaction only, so LISTEN has no session to live in. */
  poolMode: 'session' | 'transaction' | 'statement';
  /** Server connections PgBouncer opens at most per database and user. @default 20 */
  poolSize?: number;
}

/**
 * Where the server's programs are: POSTGRES_BIN_DIR when set, else Debian's /usr/lib/postgresql/<major>/bin of the
 * newest major that has them (Debian keeps initdb and postgres off PATH, and may hold several majors).
 */
function postgresBinDir(): string | undefined {
  const hasServer = (dir: string): boolean => executable(join(dir, 'initdb')) && executable(join(dir, 'postgres'));
  if (process.env.POSTGRES_BIN_DIR)
    return hasServer(process.env.POSTGRES_BIN_DIR) ? process.env.POSTGRES_BIN_DIR : undefined;
  let majors: string[];
  try {
    majors = readdirSync('/usr/lib/postgresql');
  } catch {
    return undefined;
  }
  return majors
    .filter((major) => /^\d+(\.\d+)?$/.test(major))
    .sort((a, b) => Number.parseFloat(b) - Number.parseFloat(a))
    .map((major) => join('/usr/lib/postgresql', major, 'bin'))
    .find(hasServer);
}

/** PGBOUNCER_PATH when set, else pgbouncer on PATH, else Debian's /usr/sbin/pgbouncer (off a user's PATH). */
function pgbouncerPath(): string | undefined {
  if (process.env.PGBOUNCER_PATH)
    return executable(process.env.PGBOUNCER_PATH) ? process.env.PGBOUNCER_PATH : undefined;
  if (spawnSync('sh', ['-c', 'command -v pgbouncer'], { stdio: 'ignore' }).status === 0) return 'pgbouncer';
  return executable('/usr/sbin/pgbouncer') ? '/usr/sbin/pgbouncer' : undefined;
}

function executable(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * Fails, rather than skips, when there is no PostgreSQL server to start: a suite that silently skips proves nothing.
 * Synchronous, so that a test file can call it while it loads (as requireRedisServer).
 */
export function requirePostgresServer(): void {
  if (postgresBinDir()) return;
  const where = process.env.POSTGRES_BIN_DIR
    ? `in ${process.env.POSTGRES_BIN_DIR} (POSTGRES_BIN_DIR)`
    : 'in /usr/lib/postgresql/<major>/bin';
  throw withoutStack(
    new Error(
      `PostgreSQL's initdb and postgres were not found ${where}. Install them with \`apt-get install postgresql\` ` +
        '(`npm test` does), or set POSTGRES_BIN_DIR to a folder holding them; the Postgres tests fail without them, ' +
        'they never skip.',
    ),
  );
}

/** As {@link requirePostgresServer}, for PgBouncer. */
export function requirePgBouncer(): void {
  if (pgbouncerPath()) return;
  const where = process.env.PGBOUNCER_PATH
    ? `at ${process.env.PGBOUNCER_PATH} (PGBOUNCER_PATH)`
    : 'on PATH or in /usr/sbin';
  throw withoutStack(
    new Error(
      `pgbouncer was not found ${where}. Install it with \`apt-get install pgbouncer\` (\`npm test\` does), or set ` +
        'PGBOUNCER_PATH to one; the PgBouncer tests fail without it, they never skip.',
    ),
  );
}

function withoutStack(error: Error): Error {
  error.stack = `${error.name}: ${error.message}`;
  return error;
}

/**
 * Who runs the server: postgres and pgbouncer refuse to run as root, so under root the programs run as Debian's
 * `postgres` system user (which installing postgresql creates), else as `nobody`; under anyone else, as that user.
 */
function serverUser(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  for (const name of ['postgres', 'nobody']) {
    const uid = spawnSync('id', ['-u', name], { encoding: 'utf8' });
    const gid = spawnSync('id', ['-g', name], { encoding: 'utf8' });
    if (uid.status === 0 && gid.status === 0) return { uid: Number(uid.stdout), gid: Number(gid.stdout) };
  }
  throw new Error('Running as root, and neither a `postgres` nor a `nobody` user exists to run PostgreSQL as.');
}

/**
 * A folder of its own under the system's temporary folder, owned by whoever runs the server (its data and socket go
 * there; postgres wants its data folder its own, mode 0700). That user must be able to reach it: a TMPDIR under /root
 * is not.
 */
function ownFolder(prefix: string, user: { uid: number; gid: number } | undefined): string {
  const directory = mkdtempSync(join(tmpdir(), prefix));
  if (user) chownSync(directory, user.uid, user.gid);
  return directory;
}

/**
 * The longest path a Unix socket may have (sun_path, 108 bytes with its NUL on Linux): past it, postgres would fail to
 * start, so a server in a deep TMPDIR listens on TCP alone.
 */
const SOCKET_PATH_MAX = 107;

/** What every server of ours runs with: loopback only, its socket in its own folder, durability traded for speed. */
function serverArguments(directory: string, port: number, settings: Readonly<Record<string, string>>): string[] {
  const socket = `${directory}/.s.PGSQL.${port}`.length <= SOCKET_PATH_MAX ? directory : '';
  const all: Record<string, string> = {
    listen_addresses: '127.0.0.1',
    port: String(port),
    unix_socket_directories: socket,
    // A crash of the server's processes (kill) loses nothing committed without fsync: the page cache keeps it. Only
    // the host's crash would.
    fsync: 'off',
    full_page_writes: 'off',
    // Many servers at once on a small machine.
    shared_buffers: '16MB',
    // The ready line and the errors this harness reads, in English whatever the machine's locale.
    lc_messages: 'C',
    ...settings,
  };
  return ['-D', join(directory, 'data'), ...Object.entries(all).flatMap(([name, value]) => ['-c', `${name}=${value}`])];
}

/** What the postmaster logs once it accepts connections, after a start and after a crash's recovery alike. */
const POSTGRES_READY = 'database system is ready to accept connections';

/**
 * Creates a cluster in a folder of its own (initdb: UTF8, no locale, trust on loopback, no fsync), starts postgres on
 * a free port of 127.0.0.1 and resolves once it accepts connections. The server is stopped, and its folder removed,
 * when the process that started it exits without having stopped it.
 */
export async function startPostgresServer(options: PostgresServerOptions = {}): Promise<PostgresServer> {
  requirePostgresServer();
  const bin = postgresBinDir()!;
  const user = serverUser();
  const directory = ownFolder('token-keeper-pg-', user);
  try {
    await run(
      join(bin, 'initdb'),
      ['-D', join(directory, 'data'), '-U', 'postgres', '-A', 'trust', '--no-locale', '-E', 'UTF8', '-N'],
      user,
    );
    const settings = options.settings ?? {};
    // The port may be taken between the probe and postgres' bind: try a few.
    for (let attempt = 1; ; attempt += 1) {
      const port = await freePort();
      const launchServer = (): Promise<Launched> =>
        launch(join(bin, 'postgres'), serverArguments(directory, port, settings), user, POSTGRES_READY);
      try {
        return serverOn({ port, directory, first: await launchServer(), launchServer });
      } catch (error) {
        if (attempt === 3) throw error;
      }
    }
  } catch (error) {
    rmSync(directory, { recursive: true, force: true });
    throw error;
  }
}

/** A streaming replica of a primary: a server, read-only until `promote()`. */
export interface PostgresStandby extends PostgresServer {
  /** Makes it a primary (`pg_ctl promote`, waiting until it accepts writes), as a failover does. */
  promote(): Promise<void>;
}

/** What a hot standby logs once it accepts (read-only) connections. */
const STANDBY_READY = 'database system is ready to accept read-only connections';

/**
 * A streaming replica of `primary` on a port of its own: `pg_basebackup -R` (the base backup, `standby.signal` and
 * `primary_conninfo`), then postgres as a hot standby; resolves once it accepts read-only connections. The primary's
 * settings of `initdb` allow it: wal_level `replica`, replication trusted on loopback. With
 * `synchronous_standby_names: '*'` on the primary, each commit waits for this standby, so that a failover loses none.
 */
export async function startPostgresStandby(
  primary: PostgresServer,
  options: PostgresServerOptions = {},
): Promise<PostgresStandby> {
  requirePostgresServer();
  const bin = postgresBinDir()!;
  const user = serverUser();
  const directory = ownFolder('token-keeper-pg-standby-', user);
  try {
    const data = join(directory, 'data');
    const from = ['-h', '127.0.0.1', '-p', String(primary.port), '-U', 'postgres'];
    await run(join(bin, 'pg_basebackup'), ['-D', data, '-R', '-X', 'stream', ...from], user);
    const port = await freePort();
    const settings = options.settings ?? {};
    const launchServer = (): Promise<Launched> =>
      launch(join(bin, 'postgres'), serverArguments(directory, port, settings), user, STANDBY_READY);
    const server = serverOn({ port, directory, first: await launchServer(), launchServer });
    return {
      ...server,
      promote: () => run(join(bin, 'pg_ctl'), ['promote', '-w', '-D', data], user),
    };
  } catch (error) {
    rmSync(directory, { recursive: true, force: true });
    throw error;
  }
}

function serverOn({
  port,
  directory,
  first,
  launchServer,
}: {
  port: number;
  directory: string;
  first: Launched;
  launchServer: () => Promise<Launched>;
}): PostgresServer {
  let postmaster = first.child;
  // A test that fails before its stop, or a worker that ends without it, would leave the server and its 40 MB folder
  // behind: the process's exit ends and removes them (synchronously, as 'exit' allows).
  const onExit = (): void => {
    signalAll(postmaster, 'SIGKILL');
    releaseSharedMemory(directory);
    rmSync(directory, { recursive: true, force: true });
  };
  process.once('exit', onExit);
  const kill = async (): Promise<void> => {
    const processes = signalAll(postmaster, 'SIGKILL');
    await stopProcess(postmaster, 'SIGKILL');
    await untilGone(processes);
  };
  return {
    port,
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    directory,
    pause: () => void signalAll(postmaster, 'SIGSTOP'),
    resume: () => void signalAll(postmaster, 'SIGCONT'),
    kill,
    async restart({ shutdown = 'fast', afterMs = 0 } = {}) {
      if (shutdown === 'kill') await kill();
      else await fastShutdown(postmaster);
      if (afterMs > 0) await new Promise((resolve) => setTimeout(resolve, afterMs));
      // The port is ours again at once (postgres binds with SO_REUSEADDR), unless someone took it meanwhile.
      postmaster = (await launchServer()).child;
    },
    async stop() {
      process.removeListener('exit', onExit);
      await fastShutdown(postmaster);
      // A killed server, not started again, has left its segment (a running one releases it as it shuts down).
      releaseSharedMemory(directory);
      rmSync(directory, { recursive: true, force: true });
    },
  };
}

/**
 * Removes the System V shared memory segment a killed postmaster leaves behind (its own shutdown would have removed
 * it; the next postmaster on the same folder does, and no other). The kernel allows 4,096 of them: left, they would
 * one day keep every postgres on the machine from starting. The segment's id is on the 7th line of postmaster.pid,
 * which a postmaster that shut down has removed.
 */
function releaseSharedMemory(directory: string): void {
  let lines: string[];
  try {
    lines = readFileSync(join(directory, 'data', 'postmaster.pid'), 'utf8').split('\n');
  } catch {
    return;
  }
  const id = /^\s*\d+\s+(\d+)\s*$/.exec(lines[6] ?? '')?.[1];
  if (id) spawnSync('ipcrm', ['-m', id], { stdio: 'ignore' });
}

/** A fast shutdown (SIGINT): connections ended, a checkpoint, the postmaster gone last. Resumes a paused server first. */
async function fastShutdown(postmaster: ChildProcess): Promise<void> {
  signalAll(postmaster, 'SIGCONT');
  await stopProcess(postmaster, 'SIGINT');
}

/**
 * Sends `signal` to the postmaster and to each process it has started (its backends, one per connection, and its
 * workers), and returns their pids. Each of them is a session leader of its own (postgres calls setsid in every child,
 * so that it can signal a child's children), so no signal to a process group reaches them all; they are the
 * postmaster's children, listed by Linux in /proc. The postmaster is stopped first (it can start no child meanwhile)
 * and continued last (its children are ready when it accepts again).
 */
function signalAll(postmaster: ChildProcess, signal: 'SIGSTOP' | 'SIGCONT' | 'SIGKILL'): number[] {
  const pid = postmaster.pid;
  if (pid === undefined || postmaster.exitCode !== null || postmaster.signalCode !== null) return [];
  if (signal !== 'SIGCONT') postmaster.kill('SIGSTOP');
  const children = childrenOf(pid);
  for (const child of children) {
    try {
      process.kill(child, signal);
    } catch {
      // It ended meanwhile.
    }
  }
  postmaster.kill(signal);
  return children;
}

function childrenOf(pid: number): number[] {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').split(' ').filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

/**
 * Resolves once none of `pids` runs any more (a zombie counts as ended): a killed backend still attached to the shared
 * memory would keep a new postmaster from starting on the same folder.
 */
async function untilGone(pids: readonly number[]): Promise<void> {
  const running = (pid: number): boolean => {
    try {
      return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
    } catch {
      return false;
    }
  };
  const deadline = Date.now() + 10_000;
  while (pids.some(running)) {
    if (Date.now() > deadline)
      throw new Error(`postgres processes ${pids.filter(running).join(', ')} did not end within 10 s`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Runs a program to its end as `user`, rejecting with its output when it fails. */
function run(program: string, args: readonly string[], user: { uid: number; gid: number } | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(program, args, { ...user, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.on('error', reject);
    child.on('exit', (code) =>
      code === 0 ? resolve() : reject(new Error(`${program} ${args.join(' ')} exited with ${code}:\n${output}`)),
    );
  });
}

/** A program we started, and what it has logged (its last 64 KB: enough for an error, bounded for a long run). */
interface Launched {
  child: ChildProcess;
  log: () => string;
}

/**
 * Spawns `program` as `user` and resolves once its log (stderr and stdout) says `readyLine`; rejects (the process ended)
 * when it did not start, with its output. Its log is read to its end, so that a full pipe never blocks it.
 */
async function launch(
  program: string,
  args: readonly string[],
  user: { uid: number; gid: number } | undefined,
  readyLine: string,
): Promise<Launched> {
  const child = spawn(program, args, { ...user, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const read = (chunk: Buffer): void => void (output = (output + chunk.toString()).slice(-64_000));
  child.stdout.on('data', read);
  child.stderr.on('data', read);
  try {
    await ready(child, readyLine, () => output);
    return { child, log: () => output };
  } catch (error) {
    await stopProcess(child, 'SIGKILL');
    throw error;
  }
}

function ready(child: ChildProcess, readyLine: string, log: () => string): Promise<void> {
  const name = child.spawnfile;
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => done(new Error(`${name} did not start within 20 s:\n${log()}`)), 20_000);
    const done = (error?: Error): void => {
      clearTimeout(timer);
      child.stderr?.removeListener('data', check);
      child.stdout?.removeListener('data', check);
      child.removeListener('exit', exited);
      child.removeListener('error', done);
      if (error) reject(error);
      else resolve();
    };
    // After launch's own listener, which has appended the chunk.
    const check = (): void => {
      if (log().includes(readyLine)) done();
    };
    const exited = (code: number | null, signal: NodeJS.Signals | null): void =>
      done(new Error(`${name} exited with ${code ?? signal}:\n${log()}`));
    child.stdout?.on('data', check);
    child.stderr?.on('data', check);
    child.on('exit', exited);
    child.on('error', done);
  });
}

/**
 * Starts PgBouncer before `server` (every database of it, as the user `postgres`, trusted on loopback) in `poolMode`,
 * and resolves once it listens. It retries a server login after 1 s (its default, 15 s, would outlast a restart's test).
 */
export async function startPgBouncer(server: PostgresServer, options: PgBouncerOptions): Promise<PgBouncer> {
  requirePgBouncer();
  const program = pgbouncerPath()!;
  const user = serverUser();
  const directory = ownFolder('token-keeper-pgbouncer-', user);
  try {
    for (let attempt = 1; ; attempt += 1) {
      const port = await freePort();
      const config = join(directory, 'pgbouncer.ini');
      writeFileSync(join(directory, 'users.txt'), '"postgres" ""\n');
      writeFileSync(
        config,
        [
          '[databases]',
          `* = host=127.0.0.1 port=${server.port}`,
          '[pgbouncer]',
          'listen_addr = 127.0.0.1',
          `listen_port = ${port}`,
          `unix_socket_dir = ${`${directory}/.s.PGSQL.${port}`.length <= SOCKET_PATH_MAX ? directory : ''}`,
          'auth_type = trust',
          `auth_file = ${join(directory, 'users.txt')}`,
          `pool_mode = ${options.poolMode}`,
          `default_pool_size = ${options.poolSize ?? 20}`,
          'max_client_conn = 1000',
          'server_login_retry = 1',
          // node-postgres and others send it; PgBouncer refuses a startup parameter it does not know.
          'ignore_startup_parameters = extra_float_digits',
          '',
        ].join('\n'),
      );
      try {
        return bouncerOn(port, directory, await launch(program, [config], user, 'process up'));
      } catch (error) {
        if (attempt === 3) throw error;
      }
    }
  } catch (error) {
    rmSync(directory, { recursive: true, force: true });
    throw error;
  }
}

function bouncerOn(port: number, directory: string, { child, log }: Launched): PgBouncer {
  const onExit = (): void => {
    child.kill('SIGKILL');
    rmSync(directory, { recursive: true, force: true });
  };
  process.once('exit', onExit);
  return {
    port,
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    log,
    async stop() {
      process.removeListener('exit', onExit);
      // Not SIGINT nor SIGTERM: those wait for clients (SIGINT for every server connection to be released; SIGTERM,
      // since PgBouncer 1.23, for every client to leave), and PgBouncer holds nothing a kill would lose.
      await stopProcess(child, 'SIGKILL');
      rmSync(directory, { recursive: true, force: true });
    },
  };
}
