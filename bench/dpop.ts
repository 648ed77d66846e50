// `npm run bench:dpop`: what `dpop` costs a request (tinybench, in process). Each request with DPoP signs one proof
// (ES256 or EdDSA) and hashes its access token once per token (`ath`); beside it, the whole of a request with and
// without DPoP, over loopback HTTP to the emulator, which verifies every proof (its cost is in the DPoP rows too).
// Prints a table and writes bench/results/dpop.json; numbers are reported, never asserted.
import { mkdir, writeFile } from 'node:fs/promises';
import { availableParallelism, cpus } from 'node:os';
import { join } from 'node:path';
import axios from 'axios';
import type { AxiosInstance } from 'axios';
import { Bench } from 'tinybench';
import { attachTokenAuth } from '../lib/index.js';
import { createDpopKey } from '../lib/dpop/key.js';
import type { DpopAlgorithm } from '../lib/dpop/key.js';
import { DpopProofs } from '../lib/dpop/proof.js';
import { startEmulator } from '../lib/emulator/index.js';
import type { TokenServiceEmulator } from '../lib/emulator/index.js';
import { E2E_PASSWORD, E2E_USER } from '../harness/account.js';

const ACCESS = `eyJhbGciOiJIUzI1NiJ9.${'x'.repeat(560)}.${'y'.repeat(43)}`;

/** An instance with the plugin on an emulator (in DPoP mode when `dpop` is set), warmed by one request. */
async function rig(dpop: DpopAlgorithm | undefined): Promise<{ api: AxiosInstance; service: TokenServiceEmulator }> {
  const service = await startEmulator({ users: { [E2E_USER]: E2E_PASSWORD }, log: false, ...(dpop && { dpop: true }) });
  const api = axios.create({ baseURL: service.url });
  attachTokenAuth(api, {
    credentials: { username: E2E_USER, password: E2E_PASSWORD },
    ...(dpop && { dpop: { algorithm: dpop } }),
  });
  await api.get('/orders');
  return { api, service };
}

async function main(): Promise<void> {
  const proofs = new DpopProofs(Date.now);
  const keys = { ES256: await createDpopKey('ES256'), EdDSA: await createDpopKey('EdDSA') };
  const rigs = { bearer: await rig(undefined), ES256: await rig('ES256'), EdDSA: await rig('EdDSA') };
  const target = {
    server: 'api',
    method: 'GET',
    url: 'https://api.example.com/orders/7?fields=id',
    accessToken: ACCESS,
  } as const;

  const bench = new Bench({ time: Number(process.env.BENCH_MS ?? 2_000), warmupTime: 300 });
  bench
    .add(
      'make a proof, ES256 (the access token hashed once, kept)',
      async () => void (await proofs.proof(keys.ES256, target)),
    )
    .add(
      'make a proof, EdDSA (the access token hashed once, kept)',
      async () => void (await proofs.proof(keys.EdDSA, target)),
    )
    .add('a request, Bearer (loopback HTTP to the emulator)', async () => void (await rigs.bearer.api.get('/orders')))
    .add(
      'a request, DPoP ES256 (the emulator verifies the proof)',
      async () => void (await rigs.ES256.api.get('/orders')),
    )
    .add(
      'a request, DPoP EdDSA (the emulator verifies the proof)',
      async () => void (await rigs.EdDSA.api.get('/orders')),
    );
  await bench.run();
  await Promise.all(Object.values(rigs).map(({ service }) => service.close()));

  const machine = `${availableParallelism()} cores (${cpus()[0]?.model.trim() ?? 'unknown CPU'}), Node ${process.version}, ${process.platform}`;
  const rows = bench.tasks.map((task) => {
    const result = task.result as { latency?: { p50?: number; rme?: number } } | undefined;
    const p50 = result?.latency?.p50;
    if (p50 === undefined) throw new Error(`${task.name} did not run: ${JSON.stringify(result)}`);
    return {
      task: task.name,
      p50Us: Math.round(p50 * 1000 * 10) / 10,
      rmePercent: Math.round((result!.latency!.rme ?? 0) * 10) / 10,
    };
  });
  console.log(`npm run bench:dpop: ${machine}\np50 per operation.\n`);
  console.log('| operation | µs (p50) | ± |\n|---|---|---|');
  for (const row of rows) console.log(`| ${row.task} | ${row.p50Us} | ${row.rmePercent}% |`);
  const directory = join(__dirname, 'results');
  await mkdir(directory, { recursive: true });
  await writeFile(
    join(directory, 'dpop.json'),
    `${JSON.stringify({ machine, date: new Date().toISOString(), rows }, null, 2)}\n`,
  );
}

main().then(
  // The instances' keep-alive sockets would hold the process open.
  () => process.exit(0),
  (error: unknown) => {
    console.error(`The benchmark stopped: ${error instanceof Error ? error.message : String(error)}`);
    process.exit(1);
  },
);
