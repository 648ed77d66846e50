// What a scenario of data loss in Redis cost (issue 31), in the three figures `npm run test:loss` prints per run:
// refresh tokens sent a second time (spent), requests that failed at the caller, and logins after the fleet's first.
// A test computes them once, reports them here, then asserts on them: a failing run is reported too.
import { appendFileSync } from 'node:fs';
import type { TokenServiceEmulator } from '../../lib/emulator/index.js';

export interface LossOutcome {
  /** Sends of a refresh token that had been sent before. */
  spent: number;
  /** Requests that failed at the caller. */
  failed: number;
  /** Logins after the fleet's first (the one before any loss). */
  logins: number;
}

/** The outcome of a scenario from the token service's log and the requests that failed. */
export function lossOf(service: TokenServiceEmulator, failed: number): LossOutcome {
  const sent = service.calls
    .filter((call) => call.route === 'token')
    .map((call) => (JSON.parse(call.body) as { refresh_token?: string }).refresh_token);
  return { spent: sent.length - new Set(sent).size, failed, logins: service.counters.logins - 1 };
}

/**
 * Appends `{ scenario, spent, failed, logins }` as a line of JSON to the file named by `LOSS_REPORT`, when set (by
 * scripts/test-loss.mjs); otherwise nothing. Returns the outcome, for the test's assertions.
 */
export function reportLoss(scenario: string, outcome: LossOutcome): LossOutcome {
  const file = process.env.LOSS_REPORT;
  if (file) appendFileSync(file, `${JSON.stringify({ scenario, ...outcome })}\n`);
  return outcome;
}
