// WebCrypto for the stores and the token schemes where Node runs. Node 20 and later, Deno, Bun, Workers and browsers have it as
// `globalThis.crypto`; Node 18 has it only as `webcrypto` of node:crypto (global behind a flag). That module is loaded
// then, and only then, by a call that no bundler and no Worker check takes for an import (see nodeBuiltin), so that a
// bundle for a Worker, the edge runtime or a browser holds no import of a Node built-in. The browser store takes
// `globalThis.crypto` alone.

/**
 * The one piece of module state in the package: the platform's WebCrypto, the same for everything in the process,
 * found once rather than on every lock and seal (ARCHITECTURE.md says so).
 */
let found: Promise<Crypto> | undefined;

/**
 * The platform's WebCrypto: `globalThis.crypto`, or node:crypto's `webcrypto` where it is not global (Node 18), found
 * once. Rejects, saying so, where there is neither.
 */
export function webCrypto(): Promise<Crypto> {
  // A lookup that failed is tried again next time.
  return (found ??= locate().catch((error: unknown) => {
    found = undefined;
    throw error;
  }));
}

async function locate(): Promise<Crypto> {
  const global = (globalThis as { crypto?: Crypto }).crypto;
  if (global?.subtle) return global;
  try {
    const { webcrypto } = (await nodeBuiltin('node:crypto')) as { webcrypto: Crypto };
    return webcrypto;
  } catch (error) {
    throw new Error('This runtime has no WebCrypto (`crypto.subtle`), which the Redis lock and `encryption` need.', {
      cause: error,
    });
  }
}

/**
 * A Node built-in, for Node 18 alone: `require` in CommonJS (the package's CJS build), `import()` made at run time in
 * ES modules. Neither is an import a bundler resolves or a Worker's module check refuses (workerd refuses a bundle with
 * an `import()` of a module it does not have, even one it would never run).
 */
function nodeBuiltin(specifier: string): Promise<unknown> {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- CommonJS's own loader, for the reason above
  if (typeof require === 'function') return Promise.resolve(require(specifier));
  // eslint-disable-next-line @typescript-eslint/no-implied-eval -- a fixed body, no input of anyone's: see above
  const load = new Function('specifier', 'return import(specifier)') as (specifier: string) => Promise<unknown>;
  return load(specifier);
}
