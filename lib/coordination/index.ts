// The coordination of the holders of a shared store, as a layer: loaded by `import()` only where the user gives a
// `store` (attach.ts), and met by the core through account/link.ts' StoreLink alone.
import type { SharedLinkMaker } from '../account/link.js';
import { SharedLink } from './link.js';

/** The link of an account to its shared store. */
export const makeSharedLink: SharedLinkMaker = (checked, parts) => new SharedLink({ ...parts, checked });
