// What a request waiting for a renewal holds, by kind of object: two heap snapshots of one contender, before and
// while 2,000 requests wait behind an 8 s renewal, and the difference per request, largest first. The tool behind
// the figures of docs/benchmarks.md's scenario 5 on what a waiting request holds; it measures one contender per run:
//
//   node --expose-gc --import tsx bench/heap-waiting.ts axios-token-keeper
//   node --expose-gc --import tsx bench/heap-waiting.ts "axios-auth-refresh (deduplicateRefresh: false)"
import { readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeHeapSnapshot } from 'node:v8';
import { CONTENDERS } from './contenders.js';
import { startRemoteEmulator } from './remote-emulator.js';
import { sleep } from './stats.js';

const WAITING = 2_000;

/** Count and bytes by kind of object (its type, and for objects and closures its constructor or name). */
function byKind(file: string): Map<string, { count: number; bytes: number }> {
  const snapshot = JSON.parse(readFileSync(file, 'utf8')) as {
    snapshot: { meta: { node_fields: string[]; node_types: [string[]] } };
    nodes: number[];
    strings: string[];
  };
  const fields = snapshot.snapshot.meta.node_fields;
  const types = snapshot.snapshot.meta.node_types[0];
  const [type, name, size] = ['type', 'name', 'self_size'].map((field) => fields.indexOf(field)) as [
    number,
    number,
    number,
  ];
  const kinds = new Map<string, { count: number; bytes: number }>();
  for (let at = 0; at < snapshot.nodes.length; at += fields.length) {
    const kind = types[snapshot.nodes[at + type]!]!;
    const named = ['object', 'closure', 'native'].includes(kind) ? snapshot.strings[snapshot.nodes[at + name]!] : '';
    const key = `${kind}: ${String(named).slice(0, 60)}`;
    const entry = kinds.get(key) ?? { count: 0, bytes: 0 };
    entry.count += 1;
    entry.bytes += snapshot.nodes[at + size]!;
    kinds.set(key, entry);
  }
  return kinds;
}

async function main(): Promise<void> {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) throw new Error('Run it with `node --expose-gc`.');
  const contender = CONTENDERS.find((each) => each.name === process.argv[2]);
  if (!contender) throw new Error(`Name a contender: ${CONTENDERS.map((each) => `"${each.name}"`).join(', ')}.`);
  const emulator = await startRemoteEmulator({ latency: { token: 8_000 } });
  const files = ['before', 'waiting'].map((when) => join(tmpdir(), `heap-waiting-${process.pid}-${when}.heapsnapshot`));
  try {
    const api = await contender.create({ baseURL: emulator.url });
    for (let i = 0; i < 200; i += 1) await api.get('/api/items/warm-up');
    gc();
    gc();
    writeHeapSnapshot(files[0]);
    const refusedBefore = (await emulator.counters()).unauthorized;
    await emulator.expire();
    const all = Promise.allSettled(Array.from({ length: WAITING }, (_, i) => api.get(`/api/items/${i}`)));
    while ((await emulator.counters()).unauthorized - refusedBefore < WAITING) await sleep(20);
    await sleep(200);
    gc();
    gc();
    writeHeapSnapshot(files[1]);
    const [before, waiting] = files.map(byKind) as [ReturnType<typeof byKind>, ReturnType<typeof byKind>];
    const total = (kinds: ReturnType<typeof byKind>) => [...kinds.values()].reduce((sum, { bytes }) => sum + bytes, 0);
    console.log(`${contender.name}: ${((total(waiting) - total(before)) / WAITING).toFixed(0)} B per waiting request`);
    const rows = [...waiting]
      .map(([kind, { count, bytes }]) => {
        const earlier = before.get(kind) ?? { count: 0, bytes: 0 };
        return { kind, count: (count - earlier.count) / WAITING, bytes: (bytes - earlier.bytes) / WAITING };
      })
      .filter((row) => row.bytes >= 4)
      .sort((a, b) => b.bytes - a.bytes);
    for (const row of rows)
      console.log(`${row.bytes.toFixed(0).padStart(6)} B ${row.count.toFixed(2).padStart(6)} × ${row.kind}`);
    await all;
  } finally {
    for (const file of files) rmSync(file, { force: true });
    await emulator.close();
  }
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : String(error));
  process.exitCode = 1;
});
