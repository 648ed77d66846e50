import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** An HTTP server listening on a free loopback port. */
export interface Listening {
  /** `http://127.0.0.1:<port>`. */
  readonly url: string;
  /** Closes the server and the connections kept alive to it. */
  readonly stop: () => Promise<void>;
}

/** Starts `server` on 127.0.0.1 at a port the system picks, for a test server that whoever started it stops. */
export async function listenOnLoopback(server: Server): Promise<Listening> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
