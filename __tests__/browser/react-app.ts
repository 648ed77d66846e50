// The React example as the browser tests load it, bundled by esbuild: the example itself runs (its page gives it the
// emulator's address in data-api), and this adds what the test reads through `window.reactApp`: every view the app
// showed, in order, and bursts of requests through the example's own `api`.
import { isTokenAuthError } from 'axios-token-keeper';
import { api } from '../../examples/react-app.js';
import type { BurstResult } from './page.js';

/** What the user sees, by the status the app rendered it for (`renewing` shows as `signed-in`). */
export type View = 'signing-in' | 'signed-out' | 'signed-in';

export interface ReactAppPage {
  /** Every view the app put on the page since it loaded, in order. */
  views(): View[];
  burst(requests: number): Promise<BurstResult>;
}

declare global {
  interface Window {
    reactApp: ReactAppPage;
  }
}

const views: View[] = [];

function viewOf(node: Node): View | undefined {
  if (!(node instanceof HTMLElement)) return undefined;
  if (node.matches('p[role="status"]')) return 'signing-in';
  if (node.matches('form')) return 'signed-out';
  if (node.matches('main')) return 'signed-in';
  return undefined;
}

// Each view is a different element at the top of #root, so that each render that changes the view adds one. Read
// from the records, not the page as it is when the observer runs, so that no view is missed however fast they follow.
// The example's module ran before this one, but React commits its first render in a later task: none is missed.
new MutationObserver((records) => {
  for (const record of records) {
    record.addedNodes.forEach((node) => {
      const view = viewOf(node);
      if (view) views.push(view);
    });
  }
}).observe(document.getElementById('root')!, { childList: true });

window.reactApp = {
  views: () => [...views],
  async burst(requests) {
    const results = await Promise.allSettled(
      Array.from({ length: requests }, () => api.get('/allocation/api/v1/tracking/order-list')),
    );
    const errors = results.flatMap((result) =>
      result.status === 'rejected'
        ? [isTokenAuthError(result.reason) ? result.reason.code : String((result.reason as Error).message)]
        : [],
    );
    return { ok: requests - errors.length, failed: errors.length, errors };
  },
};
