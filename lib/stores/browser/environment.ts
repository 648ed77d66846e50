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
