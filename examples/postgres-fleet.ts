// One replica of a service that runs as many containers on many hosts, with PostgreSQL and no Redis: every replica
// keeps the account's token pair in one table, renews under a lease written in the account's row, and hears of a new
// pair through LISTEN. However many replicas start, the account logs in once and renews once per expiry. It reads
// API_URL, API_USERNAME, API_PASSWORD and DATABASE_URL (postgres://user:password@host:5432/db). Against the emulator
// and a local PostgreSQL: `npm run emulator`, then, as many times at once as you like:
// API_URL=http://127.0.0.1:8080 API_USERNAME=demo API_PASSWORD=demo-password npx tsx examples/postgres-fleet.ts
import axios from 'axios';
import { Pool } from 'pg';
import { attachTokenAuth } from 'axios-token-keeper';
import { PostgresTokenStore } from 'axios-token-keeper/postgres-store';

async function main(): Promise<void> {
  const username = process.env.API_USERNAME ?? '';
  // A few connections serve any number of holders: the store holds none between its statements.
  const pool = new Pool({ connectionString: process.env.DATABASE_URL ?? 'postgres://127.0.0.1:5432/postgres', max: 5 });
  // pg reports a connection the server ended (a restart) here; without a listener it would end the process.
  pool.on('error', (error) => console.warn(`postgres: ${error.message}`));
  // Once per database, by a role that may create tables; or the migration in docs/stores.md.
  await PostgresTokenStore.createSchema(pool);
  // One key per account: the replicas of every service that uses this account share its row.
  const store = new PostgresTokenStore(pool, { key: `token-keeper:${username}` });
  const api = axios.create({ baseURL: process.env.API_URL ?? 'https://api.example.com' });
  const auth = attachTokenAuth(api, {
    credentials: () => ({ username, password: process.env.API_PASSWORD ?? '' }),
    store,
  });
  try {
    const pages = await Promise.all(
      Array.from({ length: 25 }, (_, page) => api.get('/allocation/api/v1/tracking/order-list', { params: { page } })),
    );
    console.log(`replica ${process.pid}: ${pages.length} pages`, auth.stats());
  } finally {
    // The pair goes to the table after the requests that waited for it: written before the pool ends.
    await auth.flush();
    auth.eject();
    await store.close();
    await pool.end();
  }
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exitCode = 1;
});
