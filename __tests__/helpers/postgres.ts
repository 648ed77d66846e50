import { Client } from 'pg';
import { requirePostgresServer, startPostgresServer } from '../../harness/postgres-server.js';
import type { PostgresServer, PostgresServerOptions } from '../../harness/postgres-server.js';

/**
 * A real PostgreSQL server for the test file that calls this (at its top level): started before its tests, stopped
 * after them. Without PostgreSQL the file fails here, once, with the command that installs it.
 */
export function postgresServerForFile(options?: PostgresServerOptions): () => PostgresServer {
  requirePostgresServer();
  let server: PostgresServer | undefined;
  beforeAll(async () => {
    server = await startPostgresServer(options);
  });
  // A server that did not start fails beforeAll for every test; this hook adds no error of its own to that.
  afterAll(async () => {
    await server?.stop();
  });
  return () => {
    if (!server) throw new Error('PostgreSQL did not start (see beforeAll).');
    return server;
  };
}

/**
 * A connected client of `url`, ended by `undo` (the test's undo list, helpers/flow.ts). The errors it emits (its server
 * restarted or killed under it) are kept in `errors`, where the test can look at them, rather than thrown at the worker.
 */
export async function connectedClient(
  url: string,
  undo: Array<() => unknown>,
): Promise<{ client: Client; errors: Error[] }> {
  const client = new Client(url);
  const errors: Error[] = [];
  client.on('error', (error) => errors.push(error));
  undo.push(() => client.end().catch(() => undefined));
  await client.connect();
  return { client, errors };
}
