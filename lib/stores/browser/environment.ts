// What the browser offers the store; each answers undefined where it is missing (a server render, an old browser,
// site data blocked), so that the store can choose another way.

/** The browser's Web Locks, if it has them. */
export function webLocks(): LockManager | undefined {
  const navigator = (globalThis as { navigator?: { locks?: LockManager } }).navigator;
  return typeof navigator?.locks?.request === 'function' ? navigator.locks : undefined;
}

/** `localStorage` or `sessionStorage`, if this environment has it and lets the page use it. */
export function webStorage(kind: 'local' | 'session'): Storage | undefined {
  try {
    const storage = (globalThis as Partial<Record<'localStorage' | 'sessionStorage', Storage>>)[`${kind}Storage`];
    // Reading throws where the user blocked site data; so may the first access above.
    storage?.getItem('axios-token-keeper');
    return storage;
  } catch {
    return undefined;
  }
}

/**
 * How the store keeps a pair's DPoP key (`dpopKeys`): `'as-is'`, the CryptoKey itself, in IndexedDB beside the storage
 * entry that names it (see dpop-keys.ts), or with `'none'` in the tabs' memory alone, handed between them as the pair
 * is; none where the browser has no IndexedDB (or will not let the page reach it), so that `dpop` refuses the store
 * rather than losing the key.
 */
export function dpopKeysOf(kind: 'local' | 'session' | 'none'): 'as-is' | undefined {
  try {
    return kind === 'none' || typeof indexedDB.open === 'function' ? 'as-is' : undefined;
  } catch {
    return undefined;
  }
}
