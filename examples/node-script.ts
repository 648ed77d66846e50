// A plain Node script, such as a nightly export. Without API_URL it runs against the emulator this package ships,
// as your own test suite can: npx tsx examples/node-script.ts. Against your service, set API_URL, API_USERNAME
// and API_PASSWORD.
import axios from 'axios';
import { attachTokenAuth } from 'axios-token-keeper';
import { startEmulator } from 'axios-token-keeper/emulator';

async function main(): Promise<void> {
  const emulator = process.env.API_URL ? undefined : await startEmulator({ users: { demo: 'demo-password' } });
  try {
    const api = axios.create({ baseURL: process.env.API_URL || emulator!.url });
    const auth = attachTokenAuth(api, {
      credentials: {
        username: process.env.API_USERNAME || 'demo',
        password: process.env.API_PASSWORD || 'demo-password',
      },
    });

    // Ten pages at once: one login between them.
    const pages = await Promise.all(
      Array.from({ length: 10 }, (_, page) => api.get('/allocation/api/v1/tracking/order-list', { params: { page } })),
    );
    console.log(`exported ${pages.length} pages`, auth.stats());
  } finally {
    await emulator?.close();
  }
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exitCode = 1;
});
