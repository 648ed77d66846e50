// How the holders of one process hear what the others did to the rows they use (a new pair, a released lock, a login
// pause): LISTEN on one connection of the store's own, where the server delivers notifications, or one statement for
// every row every `newsPollMs` where it does not. A store and its named accounts' stores share one.
import { webCrypto } from '../../support/web-crypto.js';
import type { PgClientLike, PgPoolLike, Queries } from './pool.js';
import type { ResolvedPostgresOptions } from './options.js';
import type { Statements } from './statements.js';

/**
 * What a row's holders are told: `changed` (its pair was written or dropped), with the pair's record when polling read
 * it (null: none); `missed`, a look at the row after a time nobody listened (the first poll, LISTEN opened), which
 * tells of a pair and never of its absence (an emptied table is no logout); `released`; `account`.
 */
export type RowListener = (kind: 'changed' | 'missed' | 'released' | 'account', record?: string | null) => void;

/** How long the store waits for its own notification before it concludes LISTEN hears nothing here. */
const PROBE_MS = 3_000;
/** The waits before the listening connection is opened again after it was lost: doubled each time, to this at most. */
const RECONNECT_FIRST_MS = 1_000;
const RECONNECT_LAST_MS = 30_000;

/** What polling last read of a row. */
interface RowSeen {
  pair: string | null;
  locked: boolean;
  account: string | null;
}

/** The listening connection, as pg opens it: its socket, which the store lets the process exit past. */
interface OpenedClient extends PgClientLike {
  connection?: { stream?: { unref?(): void } };
}

export class PostgresNews {
  private readonly rows = new Map<string, Set<RowListener>>();
  private readonly seen = new Map<string, RowSeen>();
  private client: OpenedClient | undefined;
  /** LISTEN works: a notification this store sent came back on its connection. */
  private heard = false;
  /** LISTEN was found to hear nothing here (PgBouncer in transaction mode): the store polls for good. */
  private deaf: boolean;
  private pollTimer: ReturnType<typeof setTimeout> | undefined;
  private polling = false;
  private reconnectMs = RECONNECT_FIRST_MS;
  private reconnectTimer: ReturnType<typeof setTimeout> | undefined;
  /** The probes sent and not yet heard, by payload. */
  private readonly probes = new Map<string, () => void>();
  private lostSaid = false;
  private closed = false;

  constructor(
    private readonly pool: PgPoolLike,
    private readonly queries: Queries,
    private readonly statements: Statements,
    private readonly channel: string,
    private readonly options: ResolvedPostgresOptions,
  ) {
    this.deaf = options.news === 'poll';
  }

  /** Whether the store hears of changes as they happen (LISTEN, checked to work) rather than by polling. */
  get hears(): boolean {
    return this.heard;
  }

  /** Tells `listener` what happens to row `key`, until the function it gives back is called. */
  listen(key: string, listener: RowListener): () => void {
    const listeners = this.rows.get(key) ?? new Set();
    listeners.add(listener);
    this.rows.set(key, listeners);
    this.start();
    return () => {
      listeners.delete(listener);
      if (listeners.size > 0) return;
      this.rows.delete(key);
      this.seen.delete(key);
    };
  }

  /** Stops listening and polling, for good, and closes the connection the store opened. */
  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.pollTimer);
    clearTimeout(this.reconnectTimer);
    this.rows.clear();
    const client = this.client;
    this.client = undefined;
    this.heard = false;
    await client?.end().catch(() => undefined);
  }

  private start(): void {
    if (this.closed) return;
    if (!this.deaf && !this.client && !this.reconnectTimer) void this.connect();
    if (!this.heard) this.schedulePoll();
  }

  /** Opens the listening connection, LISTENs, and checks that a notification sent through the pool comes back. */
  private async connect(): Promise<void> {
    const { Client, options } = this.pool;
    if (!Client) {
      this.becomeDeaf('the pool does not say the class of its connections (`pool.Client`)');
      return;
    }
    const client: OpenedClient = new Client(options);
    this.client = client;
    client.on('error', (error) => this.lost(client, error));
    client.on('end', () => this.lost(client));
    client.on('notification', ({ channel, payload }) => {
      if (channel === this.channel && payload !== undefined) this.notified(payload);
    });
    try {
      await client.connect();
      // The store's connection must not keep a process alive that has nothing else to do.
      client.connection?.stream?.unref?.();
      await client.query(`LISTEN "${this.channel}"`);
      const heard = await this.probe();
      // Closed, or the connection lost, while the check was under way: nothing to conclude.
      if (this.client !== client || this.closed) return;
      if (!heard) {
        this.becomeDeaf(
          `a notification it sent did not come back within ${PROBE_MS} ms (PgBouncer in transaction mode takes LISTEN and drops what it would hear)`,
        );
        this.client = undefined;
        await client.end().catch(() => undefined);
        return;
      }
    } catch (error) {
      this.lost(client, error as Error);
      return;
    }
    if (this.client !== client || this.closed) return;
    this.heard = true;
    this.lostSaid = false;
    this.reconnectMs = RECONNECT_FIRST_MS;
    clearTimeout(this.pollTimer);
    this.pollTimer = undefined;
    // What happened while nobody listened: each row is read again (its store announces only what changed).
    for (const listeners of this.rows.values()) for (const listener of [...listeners]) listener('missed');
  }

  /** Sends a notification through the pool and waits, at most PROBE_MS, for it on the listening connection. */
  private async probe(): Promise<boolean> {
    const payload = `probe ${(await webCrypto()).randomUUID()}`;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const back = new Promise<boolean>((resolve) => {
      this.probes.set(payload, () => resolve(true));
      timer = setTimeout(() => resolve(false), PROBE_MS);
      timer.unref?.();
    });
    try {
      await this.queries.run("the news' check", 'SELECT pg_notify($1, $2)', [this.channel, payload]);
      return await back;
    } finally {
      clearTimeout(timer);
      this.probes.delete(payload);
    }
  }

  private notified(payload: string): void {
    const space = payload.indexOf(' ');
    const kind = payload.slice(0, space);
    const key = payload.slice(space + 1);
    if (kind === 'probe') this.probes.get(payload)?.();
    else if (kind === 'changed' || kind === 'released' || kind === 'account')
      for (const listener of [...(this.rows.get(key) ?? [])]) listener(kind);
  }

  /** The listening connection failed or ended: poll until it is open again, and open it again later. */
  private lost(client: OpenedClient, error?: Error): void {
    if (this.client !== client || this.closed) return;
    this.client = undefined;
    this.heard = false;
    client.end().catch(() => undefined);
    if (!this.lostSaid) {
      this.lostSaid = true;
      this.options.onWarning(
        `PostgresTokenStore: its listening connection was lost${error ? ` (${error.message})` : ''}; it polls the ` +
          `table every ${this.options.newsPollMs} ms until it is open again.`,
      );
    }
    this.reconnectTimer = setTimeout(() => {
      this.reconnectTimer = undefined;
      if (this.rows.size > 0) this.start();
    }, this.reconnectMs);
    this.reconnectTimer.unref?.();
    this.reconnectMs = Math.min(this.reconnectMs * 2, RECONNECT_LAST_MS);
    this.schedulePoll();
  }

  private becomeDeaf(why: string): void {
    this.deaf = true;
    this.options.onWarning(
      `PostgresTokenStore: LISTEN hears nothing here: ${why}. It polls the table every ${this.options.newsPollMs} ms ` +
        "(`newsPollMs`) instead: a new pair reaches the other processes within that. Give `news: 'poll'` to say so " +
        'and skip the check.',
    );
    this.schedulePoll();
  }

  private schedulePoll(): void {
    if (this.pollTimer || this.closed || this.heard || this.rows.size === 0) return;
    this.pollTimer = setTimeout(() => {
      this.pollTimer = undefined;
      void this.poll().finally(() => this.schedulePoll());
    }, this.options.newsPollMs);
    this.pollTimer.unref?.();
  }

  /** One statement for every row listened to: what changed since the last poll is told. */
  private async poll(): Promise<void> {
    if (this.polling || this.heard) return;
    this.polling = true;
    try {
      const keys = [...this.rows.keys()];
      const rows = await this.queries.run("the news' poll", this.statements.poll, [keys]);
      const found = new Map(rows.map((row) => [String(row['key']), row]));
      for (const key of keys) {
        const row = found.get(key);
        const now: RowSeen = {
          pair: typeof row?.['pair'] === 'string' ? row['pair'] : null,
          locked: row?.['locked'] === true,
          account: typeof row?.['account'] === 'string' ? row['account'] : null,
        };
        const before = this.seen.get(key);
        this.seen.set(key, now);
        const listeners = [...(this.rows.get(key) ?? [])];
        if (!before) {
          if (now.pair !== null) for (const listener of listeners) listener('missed', now.pair);
          continue;
        }
        if (now.pair !== before.pair) for (const listener of listeners) listener('changed', now.pair);
        if (before.locked && !now.locked) for (const listener of listeners) listener('released');
        if (now.account !== null && now.account !== before.account)
          for (const listener of listeners) listener('account');
      }
    } catch {
      // The store is down or slow: the next poll asks again, and the holders' own calls say why.
    } finally {
      this.polling = false;
    }
  }
}
