// The lock the in-process stores take turns with. A leaf: it imports nothing.

/**
 * A lock within one process, granted in the order it was asked for: each turn is a promise that the turn before it
 * resolves on its release, so the waiters form a chain and nobody can overtake.
 */
export class Mutex {
  /** Resolves when the last turn asked for so far is released: the next turn starts there. */
  private last: Promise<void> = Promise.resolve();

  /**
   * Resolves, once every turn asked for before has been released, with the release of this one. Calling a release
   * again does nothing (resolving a promise twice is a no-op), so a holder that releases twice cannot end another's
   * turn.
   */
  acquire(): Promise<() => void> {
    const before = this.last;
    let release = (): void => undefined;
    this.last = new Promise<void>((resolve) => {
      release = () => resolve();
    });
    return before.then(() => release);
  }
}
