// A server with several cluster workers on one host: they share one token pair through a file, so the account
// logs in once and renews once per expiry for all of them, and a restart of the server makes no login at all.
// It reads API_URL, API_USERNAME, API_PASSWORD, WORKERS (4) and TOKEN_FILE. Against the emulator: `npm run emulator`,
// then API_URL=http://127.0.0.1:8080 API_USERNAME=demo API_PASSWORD=demo-password npx tsx examples/cluster-workers.ts
import cluster from 'node:cluster';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import axios from 'axios';
import { attachTokenAuth } from 'axios-token-keeper';
import { FileTokenStore } from 'axios-token-keeper/file-store';

const workers = Number(process.env.WORKERS ?? 4);
// Somewhere only this service's user can read: the file holds the refresh token.
const tokenFile = process.env.TOKEN_FILE ?? join(tmpdir(), 'my-service', 'tokens.json');

if (cluster.isPrimary) {
  for (let i = 0; i < workers; i += 1) cluster.fork();
  let exited = 0;
  cluster.on('exit', (_worker, code) => {
    if (code !== 0) process.exitCode = 1;
    if ((exited += 1) === workers) console.log(`${workers} workers done`);
  });
} else {
  const api = axios.create({ baseURL: process.env.API_URL ?? 'https://api.example.com' });
  const auth = attachTokenAuth(api, {
    credentials: () => ({ username: process.env.API_USERNAME ?? '', password: process.env.API_PASSWORD ?? '' }),
    store: new FileTokenStore(tokenFile),
  });
  Promise.all(
    Array.from({ length: 25 }, (_, page) => api.get('/allocation/api/v1/tracking/order-list', { params: { page } })),
  )
    .then((pages) => console.log(`worker ${process.pid}: ${pages.length} pages`, auth.stats()))
    // The pair goes to the file after the requests that waited for it: written before the worker exits.
    .finally(async () => {
      await auth.flush();
      auth.eject();
    })
    .then(
      () => process.exit(0),
      (error: unknown) => {
        console.error(error instanceof Error ? error.message : error);
        process.exit(1);
      },
    );
}
