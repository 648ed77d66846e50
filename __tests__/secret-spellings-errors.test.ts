// No secret leaves in any spelling a transport gives it. A property over secrets drawn from the whole of Unicode (the
// characters that encodings change weighted in) × every way a secret travels to the token service × every way the
// call can fail, against a real HTTP server on loopback that echoes what it was sent: the caller's error (every link
// of its cause chain, rendered as loggers render it and walked to every reachable string), every event and the console
// hold no spelling of the secret; and every outcome once per transport with the secret. The cases and the
// service: helpers/spelling-cases.ts and helpers/spelling-service.ts. SPELLING_RUNS=2000 npx jest secret-spellings
// for a longer run.
import fc from 'fast-check';
import { cases, nextSerial, OUTCOMES, RUNS, TRANSPORTS } from './helpers/spelling-cases.js';
import { spellingServiceForFile } from './helpers/spelling-service.js';

const run = spellingServiceForFile();

it(`no spelling of a secret in any error, cause, event or log: ${RUNS} cases of secret × transport × outcome`, async () => {
  await fc.assert(
    fc.asyncProperty(cases, async (testCase) => {
      await run(testCase);
    }),
    { numRuns: RUNS, endOnFailure: true },
  );
}, 120_000);

it.each(TRANSPORTS.map((transport) => [transport]))(
  'every outcome once with the issue’s secret `wr0ng:pa ss+/=` sent by %s',
  async (transport) => {
    for (const chosen of OUTCOMES)
      await run({ transport, outcome: chosen, secret: `wr0ng:pa ss+/=Zq${nextSerial()}X` });
  },
);
