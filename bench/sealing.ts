// `npm run bench:sealing`: what `encryption` costs a renewal (tinybench, in process). A sealed store seals the pair
// once where it is written (the holder that renewed) and opens it once in every other holder that reads it; data
// requests never seal or open anything. Prints a table and writes bench/results/sealing.json; numbers are reported,
// never asserted.
import { randomBytes } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { availableParallelism, cpus } from 'node:os';
import { join } from 'node:path';
import { Bench } from 'tinybench';
import { isPair, parseRecord, recordToJson } from '../lib/stores/common/record.js';
import { PairSealer, SealedRecords } from '../lib/stores/sealing/cipher.js';
import { checkEncryption } from '../lib/stores/sealing/options.js';
import { webCrypto } from '../lib/support/web-crypto.js';
import type { TokenPair } from '../lib/index.js';

/** A pair of the size a real service gives: a JWT access token of about 800 characters, an opaque refresh token. */
const PAIR: TokenPair = {
  access: `eyJhbGciOiJIUzI1NiJ9.${randomBytes(560).toString('base64url')}.${randomBytes(32).toString('base64url')}`,
  refresh: `ref_${randomBytes(24).toString('hex')}`,
  expiresAt: 1_900_000_000_000,
};
const CONTEXT = '{tokens:orders-api}:pair';
const WHERE = 'The Redis key {tokens:orders-api}:pair';
/** The holders of the store in the "per renewal" row: the one that renews, and those that read its pair. */
const HOLDERS = 4;

async function main(): Promise<void> {
  const sealer = new PairSealer(
    checkEncryption('bench', { keys: [{ id: 'k1', secret: randomBytes(32).toString('base64') }] }, false),
    webCrypto,
  );
  const writer = new SealedRecords<TokenPair>(sealer, CONTEXT, WHERE, isPair);
  const sealedText = await writer.toJson(1, PAIR);
  /** A holder that did not write the record: it decrypts (a fresh SealedRecords keeps no record it opened). */
  const open = (text: string) =>
    new SealedRecords<TokenPair>(sealer, CONTEXT, WHERE, isPair).open(parseRecord(text, WHERE));
  const clearRead = (text: string) => {
    const { pair } = parseRecord(text, WHERE);
    if (!isPair(pair)) throw new Error('not a pair');
    return pair;
  };
  // Once, outside the timing: the key's import, which a process does once.
  if ((await open(sealedText))?.refresh !== PAIR.refresh) throw new Error('the sealed pair did not open');

  const bench = new Bench({ time: 2_000, warmupTime: 300 });
  bench
    .add('in clear: write the record', () => void recordToJson(1, PAIR))
    .add('in clear: read the record', () => void clearRead(recordToJson(1, PAIR)))
    .add('sealed: seal the record (the holder that renewed)', async () => void (await writer.toJson(1, PAIR)))
    .add('sealed: open the record (each other holder)', async () => void (await open(sealedText)))
    .add(`sealed: one renewal, ${HOLDERS} holders (1 seal, ${HOLDERS - 1} opens)`, async () => {
      const text = await writer.toJson(2, PAIR);
      for (let holder = 1; holder < HOLDERS; holder += 1) await open(text);
    })
    .add(`in clear: one renewal, ${HOLDERS} holders (1 write, ${HOLDERS - 1} reads)`, () => {
      const text = recordToJson(2, PAIR);
      for (let holder = 1; holder < HOLDERS; holder += 1) clearRead(text);
    });
  await bench.run();

  const machine = `${availableParallelism()} cores (${cpus()[0]?.model.trim() ?? 'unknown CPU'}), Node ${process.version}, ${process.platform}`;
  const rows = bench.tasks.map((task) => {
    const result = task.result as { state?: string; latency?: { p50?: number; rme?: number } } | undefined;
    const p50 = result?.latency?.p50;
    if (p50 === undefined) throw new Error(`${task.name} did not run: ${JSON.stringify(result)}`);
    return {
      task: task.name,
      p50Us: Math.round(p50 * 1000 * 10) / 10,
      rmePercent: Math.round((result!.latency!.rme ?? 0) * 10) / 10,
    };
  });
  console.log(
    `npm run bench:sealing: ${machine}\nA pair of ${JSON.stringify(PAIR).length} characters; p50 per operation.\n`,
  );
  console.log('| operation | µs (p50) | ± |\n|---|---|---|');
  for (const row of rows) console.log(`| ${row.task} | ${row.p50Us} | ${row.rmePercent}% |`);
  const directory = join(__dirname, 'results');
  await mkdir(directory, { recursive: true });
  await writeFile(
    join(directory, 'sealing.json'),
    `${JSON.stringify({ machine, date: new Date().toISOString(), pairCharacters: JSON.stringify(PAIR).length, rows }, null, 2)}\n`,
  );
}

main().catch((error: unknown) => {
  console.error(`The benchmark stopped: ${error instanceof Error ? error.message : String(error)}`);
  process.exitCode = 1;
});
