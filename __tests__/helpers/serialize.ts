// How loggers render values, for the leak detectors. Free of nock, so the setup file can use it.

/** Runs a renderer that may throw on exotic values, as a logger would survive it. */
export function safely(render: () => string | undefined): string | undefined {
  try {
    return render();
  } catch {
    return undefined;
  }
}

/** JSON.stringify as a structured logger would run it, with cycles dropped and bigints written out. */
export function jsonOf(value: unknown): string | undefined {
  const seen = new WeakSet<object>();
  return safely(() =>
    JSON.stringify(value, (_key, item: unknown) => {
      if (typeof item === 'bigint') return item.toString();
      if (typeof item === 'object' && item !== null) {
        if (seen.has(item)) return '[Circular]';
        seen.add(item);
      }
      return item;
    }),
  );
}
