// WebCrypto for the stores that run where Node runs. Node 20 and later, Deno, Bun, Workers and browsers have it as
// `globalThis.crypto`; Node 18 has it only as `webcrypto` of node:crypto (global behind a flag). That module is loaded
// then, and only then, inside a `try`, so that a bundle for a Worker or a browser never needs it (bundlers leave such
// an import out). The browser store takes `globalThis.crypto` alone.

/**
 * The platform's WebCrypto: `globalThis.crypto`, or node:crypto's `webcrypto` where it is not global (Node 18).
 * Rejects, saying so, where there is neither.
 */
export async function webCrypto(): Promise<Crypto> {
  const global = (globalThis as { crypto?: Crypto }).crypto;
  if (global?.subtle) return global;
  try {
    const { webcrypto } = await import('node:crypto');
    // Node's own types for the same WebCrypto API.
    return webcrypto as unknown as Crypto;
  } catch (error) {
    throw new Error('This runtime has no WebCrypto (`crypto.subtle`), which a store with `encryption` needs.', {
      cause: error,
    });
  }
}
