// How a store knows that `encryption` is what `sealing()` (index.ts) checked, without loading the checks: a mark under
// a key of the global symbol registry, which gives back what was checked. A key of the registry rather than a class
// (`instanceof`), so that an object made by another copy of the package (two versions in one app, a bundle beside
// node_modules) is known too. The browser store imports this alone; the checks load with `axios-token-keeper/sealing`.
import type { CheckedEncryption } from './options.js';

/** The mark's key. `v1` names the shape of what it gives back, so that a copy whose shape differs is never misread. */
export const CHECKED = Symbol.for('axios-token-keeper: encryption checked by sealing(), v1');

/** What `sealing()` checked, from an object it made (by this copy of the package or another); else undefined. */
export function checkedBySealing(value: unknown): CheckedEncryption | undefined {
  if (value === null || typeof value !== 'object') return undefined;
  const read: unknown = (value as { [CHECKED]?: unknown })[CHECKED];
  return typeof read === 'function' ? (read as () => CheckedEncryption)() : undefined;
}
