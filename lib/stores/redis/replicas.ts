// The wait for a replica after a write that other holders depend on (the pair, the account's record). Redis replicates
// asynchronously: a master that dies after it answered a write, before a replica has it, takes the write with it, and
// the replica promoted in its place (Cluster, Sentinel) serves the pair from before, whose refresh token may have been
// spent. `WAIT 1 ms`, on the connection that took the write, returns once a replica has acknowledged it, or after `ms`
// with none. Only a master that has replicas is asked: with none connected, WAIT would block for its whole timeout.

/** The connection that took a write, reached again: which node it is, and a command sent on it after the write. */
export interface RedisNode {
  /** The node's address where the client tells it, so that a node that took over the key (a failover) is asked anew. */
  readonly id: string;
  /** Sends a command on that connection; the reply normalised (text as a string). */
  send(args: readonly string[]): Promise<unknown>;
}

/**
 * How long the number of a node's replicas is believed. Writes come once per expiry for a whole fleet, so in use this
 * mostly means asking once per write; it spares a burst of writes (many accounts, a benchmark) an INFO each.
 */
const REPLICAS_KNOWN_MS = 30_000;

/**
 * Waits for a replica after a write, on the node that took it, where that node has replicas. What each node has is
 * read from `INFO replication` and kept a while; it is asked again after a failure, after a WAIT that no replica
 * acknowledged (a replica went, or the node is a promoted replica left alone), and for a node not seen before (a
 * MOVED, a failover to another address).
 */
export class ReplicaWaits {
  private readonly replicas = new Map<string, { count: number; at: number }>();

  /**
   * Waits up to `ms` for one replica of `node` to acknowledge the writes sent on its connection so far; at once when
   * `ms` is 0 or the node has no replica. Never rejects: the write stands on the master either way, and what WAIT
   * could not confirm the holders' own rule covers (a holder that finds an older pair than it knew logs in).
   */
  async after(node: RedisNode, ms: number): Promise<void> {
    if (!(ms >= 1)) return;
    try {
      if ((await this.count(node)) === 0) return;
      const acknowledged = Number(await node.send(['WAIT', '1', String(Math.floor(ms))]));
      // None in time: the replicas are read again before the next wait.
      if (!(acknowledged >= 1)) this.replicas.delete(node.id);
    } catch {
      this.replicas.delete(node.id);
    }
  }

  /** The node's replicas as last read, or as read now. */
  private async count(node: RedisNode): Promise<number> {
    const known = this.replicas.get(node.id);
    if (known && Date.now() - known.at < REPLICAS_KNOWN_MS) return known.count;
    const info = await node.send(['INFO', 'replication']);
    const count = Number(/^connected_slaves:(\d+)/m.exec(typeof info === 'string' ? info : '')?.[1] ?? 0);
    this.replicas.set(node.id, { count, at: Date.now() });
    return count;
  }
}

/**
 * The hash slot of `key` (Redis Cluster: CRC16-XMODEM of the key, or of its first non-empty `{tag}`, modulo 16384), to
 * find which node of a cluster client serves it.
 */
export function keySlot(key: string): number {
  // TextEncoder, not Buffer: the store's module runs where Node's built-ins are not (Workers, the edge runtime).
  const bytes = new TextEncoder().encode(key);
  const open = bytes.indexOf(0x7b);
  const close = open === -1 ? -1 : bytes.indexOf(0x7d, open + 1);
  const hashed = close > open + 1 ? bytes.subarray(open + 1, close) : bytes;
  let crc = 0;
  for (const byte of hashed) {
    crc ^= byte << 8;
    for (let bit = 0; bit < 8; bit += 1) crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
  }
  return crc % 16_384;
}
