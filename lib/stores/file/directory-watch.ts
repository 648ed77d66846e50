// One `fs.watch` of a directory, shared by the file stores whose files are in it (the accounts of a FileTokenStore
// share one), each event handed to the stores whose file it names: one watch per process, not one per account.
import { mkdirSync, watch } from 'node:fs';
import type { FSWatcher } from 'node:fs';

/** The watch of one directory, running while a store listens to a file in it. */
export class DirectoryWatch {
  private watcher: FSWatcher | undefined;
  /** By file name, the listeners of that file's events. */
  private readonly listeners = new Map<string, Set<(name: string) => void>>();

  /** `directory` is created (mode 0700) when the watch starts, so that there is something to watch. */
  constructor(private readonly directory: string) {}

  /**
   * Calls `listener` with the file's name on each event of one of `names` in the directory, until the function
   * returned is called; the watch stops with its last listener.
   */
  on(names: readonly string[], listener: (name: string) => void): () => void {
    for (const name of names) {
      let listeners = this.listeners.get(name);
      if (!listeners) this.listeners.set(name, (listeners = new Set()));
      listeners.add(listener);
    }
    this.start();
    return () => {
      for (const name of names) {
        const listeners = this.listeners.get(name);
        listeners?.delete(listener);
        if (listeners?.size === 0) this.listeners.delete(name);
      }
      if (this.listeners.size === 0) this.stop();
    };
  }

  /** Watches, unless it already does or nobody listens; after a failure of the watch, a later call tries again. */
  start(): void {
    if (this.watcher || this.listeners.size === 0) return;
    try {
      mkdirSync(this.directory, { recursive: true, mode: 0o700 });
      // The directory, not the file: a rename replaces the file, and a watch on the old one would go quiet.
      const watcher = watch(this.directory, { persistent: false }, (_event, name) => {
        // Deno ignores `persistent: false`, and its unref() lets go only of the wait in progress: after each event
        // the watch waits again, holding the process, until unref() is called anew. That wait starts when this
        // listener returns, hence the microtask. On Node and Bun, unref() again changes nothing.
        queueMicrotask(() => watcher.unref?.());
        if (name) for (const listener of [...(this.listeners.get(name) ?? [])]) listener(name);
      });
      watcher.unref?.();
      this.watcher = watcher;
      // Watching only saves a 401 round trip; without it, the lock and the re-read under it keep things right.
      this.watcher.on('error', () => this.stop());
    } catch {
      this.watcher = undefined;
    }
  }

  private stop(): void {
    this.watcher?.close();
    this.watcher = undefined;
  }
}
